'use strict';
// The Ethereum write workloads on a real geth: every included transaction is
// counted once (the run's count per block against the blocks themselves), and
// the token variant's transactions are contract calls that emitted a log.

const assert = require('node:assert/strict');
const { ethers } = require('ethers');
const { startRun, readRun } = require('./harness');
const { startGeth } = require('./node');
const { createHistory } = require('../../src/chains/ethereum/history');
const { rpcCall } = require('../../src/util/rpc');
const { writerKey } = require('../../src/chains/ethereum/writers');
const { schemaErrors, tmpDir, writeScenario } = require('../helpers');

const USERS = 6;
const writers = new Set(
  Array.from({ length: USERS }, (_, i) => new ethers.Wallet(writerKey(1, i)).address.toLowerCase()),
);

/** Runs a write workload attached to the node; returns run.json. */
async function runWrites(node, workload) {
  const file = writeScenario(
    tmpDir(),
    workload,
    [
      'RUNTIME=attach',
      `RPC_URL=${node.rpcUrl}`,
      `NODE_PID=${node.pid}`,
      'CREATE_HISTORY=no',
      'ALLOW_WRITES=yes', // the workload signs transactions: an attached node gets them only when allowed
      `WORKLOAD=${workload}`,
      `CONCURRENCY=${USERS}`,
      'WARMUP_S=1',
      'IDLE_S=0',
      'DURATION_S=10',
    ].join('\n'),
  );
  const res = await startRun(file).done;
  assert.equal(res.code, 0, res.stderr);
  return readRun(res.reportDir);
}

/** The writers' transactions in block n, as the chain has them. */
async function writerTxs(node, n) {
  const block = await rpcCall(node.rpcUrl, 'eth_getBlockByNumber', [ethers.toQuantity(n), true]);
  return block.transactions.filter((t) => writers.has(t.from.toLowerCase()));
}

describe('Ethereum write workloads on geth', () => {
  let node;
  before(async () => {
    node = await startGeth();
    // the contract the token transfers call
    await createHistory(node.rpcUrl, { accounts: 4, transfers: 8, calls: 8, seed: 1 });
  });
  after(() => node && node.stop());

  it('eth-transfers: tps and inclusion latency in figures.writes; every included transaction counted once', async () => {
    const run = await runWrites(node, 'eth-transfers');
    assert.deepEqual(schemaErrors(run), []);
    const w = run.figures.writes;
    assert.ok(w.included >= USERS, JSON.stringify(w));
    assert.equal(w.failed, 0, JSON.stringify(w.errors));
    assert.ok(w.included <= w.submitted + USERS, 'at most one transaction per user was sent before the window');
    assert.equal(
      Object.values(w.included_by_block).reduce((a, b) => a + b, 0),
      w.included,
    );
    assert.ok(w.inclusion_ms.p50 > 0 && w.inclusion_ms.p99 >= w.inclusion_ms.p50 && w.inclusion_ms.p99 < 10000);
    assert.equal(w.tps, Number((w.included / run.figures.window_s).toFixed(3)));
    assert.ok(run.figures.methods.eth_sendRawTransaction.requests_ok >= w.submitted);
    // Each block the run counted, but the first and last (another worker may have seen them outside the window), holds
    // exactly as many of the writers' transactions as the run counted in it: none missed, none counted twice.
    const blocks = Object.keys(w.included_by_block)
      .map(Number)
      .sort((a, b) => a - b);
    assert.ok(blocks.length >= 3, `${blocks.length} blocks`);
    for (const n of blocks.slice(1, -1)) {
      const txs = await writerTxs(node, n);
      assert.equal(w.included_by_block[n], txs.length, `block ${n}`);
      assert.ok(txs.every((t) => writers.has(t.to.toLowerCase()) && BigInt(t.value) === 1_000_000_000n));
    }
  });

  it('eth-token-transfers: ERC-20 style transfers to the contract, each with its Transfer log', async () => {
    const run = await runWrites(node, 'eth-token-transfers');
    assert.deepEqual(schemaErrors(run), []);
    const w = run.figures.writes;
    assert.ok(w.included >= USERS, JSON.stringify(w));
    assert.equal(w.failed, 0, JSON.stringify(w.errors));
    const blocks = Object.keys(w.included_by_block)
      .map(Number)
      .sort((a, b) => a - b);
    const txs = await writerTxs(node, blocks[1]);
    assert.equal(txs.length, w.included_by_block[blocks[1]]);
    assert.equal(new Set(txs.map((t) => t.to)).size, 1, 'every transfer calls the one token contract');
    assert.notEqual(await rpcCall(node.rpcUrl, 'eth_getCode', [txs[0].to, 'latest']), '0x');
    const receipt = await rpcCall(node.rpcUrl, 'eth_getTransactionReceipt', [txs[0].hash]);
    assert.equal(receipt.status, '0x1');
    assert.equal(receipt.logs[0].topics[0], ethers.id('Transfer(address,address,uint256)'));
  });
});
