'use strict';
// The Ethereum subscription workload on a real geth over WebSocket: every
// newHeads subscription is notified once of every block produced in the window.

const assert = require('node:assert/strict');
const { ethers } = require('ethers');
const { startRun, readRun } = require('./harness');
const { startGeth } = require('./node');
const { createHistory } = require('../../src/chains/ethereum/history');
const { rpcCall } = require('../../src/util/rpc');
const { schemaErrors, tmpDir, writeScenario } = require('../helpers');

describe('Ethereum subscriptions on geth (WebSocket)', () => {
  let node;
  let run;
  before(async () => {
    node = await startGeth({ transport: 'ws' });
    // the contract sub.logs filters on
    await createHistory(node.rpcUrl, { accounts: 4, transfers: 8, calls: 8, seed: 1 });
    const file = writeScenario(
      tmpDir(),
      'subscriptions',
      [
        'RUNTIME=attach',
        `RPC_URL=${node.rpcUrl}`,
        `NODE_PID=${node.pid}`,
        'CREATE_HISTORY=no',
        'WORKLOAD=eth-subscriptions',
        'CONCURRENCY=12',
        'WARMUP_S=1',
        'IDLE_S=0',
        'DURATION_S=8',
      ].join('\n'),
    );
    const res = await startRun(file).done;
    assert.equal(res.code, 0, res.stderr);
    run = readRun(res.reportDir);
  });
  after(() => node && node.stop());

  it('counts the newHeads notifications against the blocks produced: one per subscription per block', async () => {
    assert.deepEqual(schemaErrors(run), []);
    const f = run.figures.subscriptions;
    const subs = f.subscriptions['sub.newHeads'];
    assert.ok(
      subs >= 6 && f.subscriptions['sub.logs'] >= 1 && subs + f.subscriptions['sub.logs'] === 12,
      JSON.stringify(f.subscriptions),
    );
    const blocks = Object.keys(f.heads_by_block)
      .map(Number)
      .sort((a, b) => a - b);
    assert.ok(blocks.length >= 3, `${blocks.length} blocks in the window`);
    for (let i = 1; i < blocks.length; i++) assert.equal(blocks[i], blocks[i - 1] + 1, 'no block missed');
    // the chain has each of them, with a timestamp inside (or a second around) the window
    for (const n of blocks) {
      const b = await rpcCall(node.rpcUrl, 'eth_getBlockByNumber', [ethers.toQuantity(n), false]);
      const t = Number(b.timestamp) * 1000;
      assert.ok(t >= run.window.start_ms - 2000 && t < run.window.end_ms + 1000, `block ${n} at ${t}`);
    }
    // every block but those at the window's edges (a user may have received it just outside) reached every subscription
    // once
    for (const n of blocks.slice(1, -1)) assert.equal(f.heads_by_block[n], subs, `block ${n}`);
    assert.equal(
      f.notifications['sub.newHeads'],
      Object.values(f.heads_by_block).reduce((a, b) => a + b, 0),
    );
    assert.ok(
      f.delay_from_block_timestamp_ms.p50 >= 0 && f.delay_from_block_timestamp_ms.p99 < 3000,
      JSON.stringify(f.delay_from_block_timestamp_ms),
    );
    assert.ok(f.spread_ms.max < 1000);
    assert.deepEqual(f.errors, {}); // every eth_subscribe answered (they were sent before the window opened)
  });
});
