'use strict';
// The dev chain's history (chains/ethereum/history.js): its transfers and
// calls in HISTORY_BLOCKS rounds, each round mined before the next is sent,
// against an rpc that plays a node which mines a block each time receipts
// are asked for; and the harvest after it, which waits until the history's
// first block is below the blocks it leaves out.

const assert = require('node:assert/strict');
const { ethers } = require('ethers');
const { createHistory } = require('../../src/chains/ethereum/history');
const { harvest } = require('../../src/chains/ethereum/harvest');

/**
 * A node that puts every transaction sent since the last look at receipts into one new block; sealEachRaw: also seals
 * one after each signed transaction, as a chain whose block time falls in the middle of a round does.
 */
function minedOnLook({ sealEachRaw = false } = {}) {
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
        if (sealEachRaw) {
          blocks.push(pending); // a block sealed while a round is still being sent
          pending = [];
        }
        return hash;
      }
      case 'eth_getTransactionReceipt': {
        if (pending.length) {
          blocks.push(pending);
          pending = [];
        }
        const tx = blocks.flat().find((x) => x.hash === params[0]);
        if (!tx) return null;
        const number = blocks.findIndex((b) => b.includes(tx)) + 1;
        return {
          status: '0x1',
          blockNumber: `0x${number.toString(16)}`,
          contractAddress: tx.deploy ? '0x00000000000000000000000000000000000000c0' : null,
        };
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
    assert.equal(h.rounds, 3);
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
    assert.equal(h.rounds, 8);
    assert.equal(node.blocks.length, 1 + 8);
    assert.ok(node.blocks.slice(1).every((b) => b.length === 2));
  });

  it('tells the last block of its first round, and the harvest waits until that block is 2 below the head', async () => {
    const node = minedOnLook({ sealEachRaw: true });
    const h = await createHistory('http://node', {
      accounts: 2,
      transfers: 2,
      calls: 2,
      seed: 1,
      rounds: 2,
      rpc: node.rpc,
    });
    // block 1: funding and contract; the first round's transfer in block 2, its call in block 3
    assert.equal(h.first_round_block, 3);
    // the chain as it stands after the history: head 4; it mines a block every 3 looks at its head
    let head = 4;
    let looks = 0;
    const heads = [];
    const lines = [];
    const rpc = async (_url, method, params) => {
      if (method === 'eth_chainId') return '0x539';
      if (method === 'eth_blockNumber') {
        if (++looks % 3 === 0) head++;
        heads.push(head);
        return `0x${head.toString(16)}`;
      }
      if (method === 'eth_getBlockByNumber') return { number: params[0], transactions: [] };
      if (method === 'eth_getLogs') return [];
      throw new Error(`unexpected ${method}`);
    };
    const pool = await harvest('http://node', { rpc, from: h.first_round_block, log: (m) => lines.push(m) });
    assert.equal(pool.head, 3, 'the pool reaches the whole first round');
    assert.equal(heads[heads.length - 1], 5);
    assert.match(lines[0], /waiting for block 5/);
    const before = looks;
    await harvest('http://node', { rpc });
    assert.equal(looks - before, 1, 'without a block to reach, one look at the head');
  });
});
