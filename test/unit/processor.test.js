'use strict';
// The artillery processor for EVM chains, driven by hand against a local
// HTTP server that plays a node: what reaches the wire, and how answers are counted.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startFakeNode, writeGeneratorSpec } = require('../helpers');
const { mergeSamples } = require('../../src/workload/samples');

const POOL = {
  chain_id: 1337,
  head: 10,
  blocks: [1, 2, 3],
  tx_hashes: [`0x${'ab'.repeat(32)}`],
  addresses: [`0x${'11'.repeat(20)}`],
  senders: [`0x${'11'.repeat(20)}`],
  contract: `0x${'22'.repeat(20)}`,
  call_data: ['0x2ddbd13a'],
  estimate_data: ['0x01'],
};

describe('ethereum processor', function () {
  this.timeout(20000);
  let node;
  let processor;
  let dir;
  let spec;
  const events = {
    emitted: [],
    emit(...a) {
      this.emitted.push(a);
    },
  };

  before(async () => {
    node = await startFakeNode();
    ({ dir, spec } = writeGeneratorSpec(node.url, POOL, { mix: { eth_blockNumber: 1 } }));
    processor = require('../../src/workload/processors/ethereum');
  });
  after(() => node.close());
  beforeEach(() => {
    node.bodies = [];
    events.emitted = [];
  });

  it('sends every call as its own request: no batching, no de-duplication', async () => {
    node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x10' }];
    await Promise.all(Array.from({ length: 20 }, () => processor.sendRequest({}, events)));
    assert.equal(node.bodies.length, 20);
    for (const b of node.bodies) {
      assert.ok(!Array.isArray(b), 'not a batch');
      assert.equal(b.method, 'eth_blockNumber');
    }
    assert.equal(events.emitted.filter((e) => e[1] === 'chainperf.ok.eth_blockNumber').length, 20);
  });

  it('counts a JSON-RPC error in an HTTP 200, an HTTP 503 and a timeout as failures', async () => {
    node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'boom' } }];
    await processor.sendRequest({}, events);
    node.answer = () => [503, { error: 'unavailable' }];
    await processor.sendRequest({}, events);
    node.answer = () => null;
    await processor.sendRequest({}, events);
    const kinds = events.emitted.map((e) => e[1]);
    assert.deepEqual(kinds, ['chainperf.failed.rpc', 'chainperf.failed.http', 'chainperf.failed.timeout']);
  });

  it('writes its samples once the window is over, with every outcome', async () => {
    assert.deepEqual(fs.readdirSync(path.join(dir, 'samples')), [], 'nothing before the end');
    assert.ok(Date.now() < spec.end_at);
    // the processor reads end_at once at load; a user finishing after it writes the samples
    const realNow = Date.now;
    Date.now = () => spec.end_at + 1;
    try {
      await new Promise((r) => processor.afterScenario({}, events, r));
    } finally {
      Date.now = realNow;
    }
    const files = fs.readdirSync(path.join(dir, 'samples'));
    assert.equal(files.length, 1);
    const merged = mergeSamples([JSON.parse(fs.readFileSync(path.join(dir, 'samples', files[0]), 'utf8'))]);
    assert.equal(merged.ok, 20);
    assert.deepEqual(merged.failures, { rpc: 1, http: 1, timeout: 1, other: 0 });
    assert.equal(merged.methods.eth_blockNumber.requests_failed, 3);
    assert.equal(Object.keys(merged.errors).length, 3);
  });
});
