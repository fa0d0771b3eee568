'use strict';
// Waiting for a node to be synced: the shared poller and geth's rule (not
// syncing, and the head advancing), against a local server that plays a node.

const assert = require('node:assert/strict');
const { startFakeNode } = require('../helpers');
const { pollUntil } = require('../../src/util/poll');
const { waitForSync } = require('../../src/chains/ethereum/sync');

describe('sync wait', function () {
  this.timeout(10000);
  let node;
  before(async () => {
    node = await startFakeNode();
  });
  after(() => node.close());

  it('pollUntil returns the value once a look is done, counting a throwing look as no answer', async () => {
    let n = 0;
    const states = [];
    const r = await pollUntil(
      async () => {
        n++;
        if (n === 1) throw new Error('refused');
        return { done: n === 3, state: `look ${n}`, value: n };
      },
      { timeoutS: 5, intervalMs: 10, label: 'waiting', failMessage: () => 'never', log: (m) => states.push(m) },
    );
    assert.equal(r.value, 3);
    assert.match(states[0], /^waiting \(0 s of 5 s\): no answer: refused$/);
  });

  it('geth is synced when eth_syncing is false and the head has advanced since the first look', async () => {
    let head = 5;
    node.answer = (b) => [
      200,
      { jsonrpc: '2.0', id: b.id, result: b.method === 'eth_syncing' ? false : `0x${(head++).toString(16)}` },
    ];
    const r = await waitForSync(node.url, { timeoutS: 5 });
    assert.equal(r.head, 6);
  });

  it('a node still syncing, or whose head never moves, fails after the timeout with its last state', async () => {
    node.answer = (b) => [
      200,
      {
        jsonrpc: '2.0',
        id: b.id,
        result: b.method === 'eth_syncing' ? { currentBlock: '0x10', highestBlock: '0x20' } : '0x10',
      },
    ];
    await assert.rejects(
      waitForSync(node.url, { timeoutS: 1 }),
      /not synced with its head advancing after 1 s \(SYNC_TIMEOUT_S\); last state: syncing: block 16 of 32/,
    );
    node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: b.method === 'eth_syncing' ? false : '0x10' }];
    await assert.rejects(
      waitForSync(node.url, { timeoutS: 1 }),
      /last state: not syncing, head 16, waiting for it to advance/,
    );
  });
});
