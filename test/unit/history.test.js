'use strict';
// The dev chain's history (chains/ethereum/history.js): its transfers and
// calls in HISTORY_BLOCKS rounds, each round mined before the next is sent,
// against an rpc that plays a node which mines a block each time receipts
// are asked for.

const assert = require('node:assert/strict');
const { ethers } = require('ethers');
const { createHistory } = require('../../src/chains/ethereum/history');

/** A node that puts every transaction sent since the last look at receipts into one new block. */
function minedOnLook() {
  const blocks = [];
  let pending = [];
  const dev = '0x00000000000000000000000000000000000000d1';
  const rpc = async (_url, method, params) => {
    switch (method) {
      case 'eth_chainId':
        return '0x539';
      case 'eth_accounts':
        return [dev];
      case 'eth_getTransactionCount':
        return '0x0';
      case 'eth_sendTransaction': {
        const hash = ethers.id(`dev:${blocks.length}:${pending.length}:${params[0].nonce}`);
        pending.push({ hash, deploy: !params[0].to });
        return hash;
      }
      case 'eth_sendRawTransaction': {
        const hash = ethers.keccak256(params[0]);
        pending.push({ hash, deploy: false });
        return hash;
      }
      case 'eth_getTransactionReceipt': {
        if (pending.length) {
          blocks.push(pending);
          pending = [];
        }
        const tx = blocks.flat().find((x) => x.hash === params[0]);
        if (!tx) return null;
        return { status: '0x1', contractAddress: tx.deploy ? '0x00000000000000000000000000000000000000c0' : null };
      }
      default:
        throw new Error(`unexpected ${method}`);
    }
  };
  return { rpc, blocks };
}

describe('dev chain history', function () {
  this.timeout(20000);

  it('spreads the transfers and calls over HISTORY_BLOCKS blocks, a round mined before the next is sent', async () => {
    const node = minedOnLook();
    const lines = [];
    const h = await createHistory('http://node', {
      accounts: 4,
      transfers: 7,
      calls: 5,
      seed: 1,
      rounds: 3,
      rpc: node.rpc,
      log: (m) => lines.push(m),
    });
    // the funding and the contract in a block of their own, then 5, 4 and 3 transactions (7 and 5 shared out)
    assert.deepEqual(
      node.blocks.map((b) => b.length),
      [5, 5, 4, 3],
    );
    assert.equal(h.txs, 4 + 1 + 7 + 5);
    assert.equal(h.blocks, 3);
    assert.deepEqual(
      lines.filter((l) => /round/.test(l)),
      [
        'creating history: round 1 of 3 mined (10 transactions so far)',
        'creating history: round 2 of 3 mined (14 transactions so far)',
        'creating history: round 3 of 3 mined (17 transactions so far)',
      ],
    );
  });

  it('uses 8 blocks when not told', async () => {
    const node = minedOnLook();
    const h = await createHistory('http://node', { accounts: 2, transfers: 8, calls: 8, seed: 1, rpc: node.rpc });
    assert.equal(h.blocks, 8);
    assert.equal(node.blocks.length, 1 + 8);
    assert.ok(node.blocks.slice(1).every((b) => b.length === 2));
  });
});
