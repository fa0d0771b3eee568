'use strict';
// chainperf's artillery engine (GENERATOR=lean), driven by hand against a
// local HTTP server that plays a node.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startFakeNode, writeGeneratorSpec } = require('../helpers');
const { mergeSamples } = require('../../src/workload/samples');

describe('lean engine', function () {
  this.timeout(20000);
  let node;
  let Engine;
  let dir;
  let spec;
  const ee = {
    counters: {},
    started: 0,
    emit(kind, name, n) {
      if (kind === 'started') this.started++;
      else this.counters[name] = (this.counters[name] || 0) + n;
    },
  };

  before(async () => {
    node = await startFakeNode();
    ({ dir, spec } = writeGeneratorSpec(
      node.url,
      { chain_id: 1337, head: 10, blocks: [1, 2, 3], addresses: [`0x${'11'.repeat(20)}`] },
      {
        mix: { eth_getBlockByNumber: 1, eth_getBalance: 1 },
        timeout_ms: 400,
        end_at: Date.now() + 3000,
      },
    ));
    Engine = require('../../src/workload/engines/artillery-engine-chainperf');
    Engine.reset();
  });
  after(() => {
    Engine.reset();
    node.close();
  });
  beforeEach(() => {
    node.bodies = [];
  });

  const runUser = (closedLoop, openLoopRate) =>
    new Promise((resolve, reject) => {
      const scenario = new Engine({ config: {} }).createScenario({ closedLoop, openLoopRate }, ee);
      scenario({}, (err) => (err ? reject(err) : resolve()));
    });

  it('open loop: one prepared JSON-RPC request per user, parameters from the pool', async () => {
    node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
    await Promise.all([runUser(false), runUser(false), runUser(false)]);
    assert.equal(node.bodies.length, 3);
    for (const b of node.bodies) {
      assert.ok(['eth_getBlockByNumber', 'eth_getBalance'].includes(b.method));
      if (b.method === 'eth_getBlockByNumber') assert.ok(['0x1', '0x2', '0x3'].includes(b.params[0]));
    }
    assert.equal(ee.started, 3);
  });

  it('counts a JSON-RPC error in an HTTP 200, an HTTP 500, a body without result and a timeout as failures', async () => {
    for (const a of [
      (b) => [200, { jsonrpc: '2.0', id: b.id, error: { code: -32601, message: 'nope' } }],
      () => [500, 'oops'],
      () => [200, '{"jsonrpc":"2.0","id":1}'],
      () => null,
    ]) {
      node.answer = a;
      await runUser(false);
    }
    for (const k of ['rpc', 'http', 'other', 'timeout']) assert.equal(ee.counters[`chainperf.failed.${k}`], 1, k);
  });

  it('tells a result from an error by the top-level key, whatever the result holds', () => {
    const { responseFailure } = Engine;
    const body = (s) => Buffer.from(s);
    const bigResult = `{"jsonrpc":"2.0","id":4095,"result":{"logs":"${'"error" '.repeat(50)}"}}`;
    assert.equal(responseFailure(200, body(bigResult)), null, '"error" inside a result is not an error');
    assert.equal(responseFailure(200, body('{"jsonrpc":"2.0","result":"0x1","id":7}')), null);
    const err = '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"\\"result\\" missing"}}';
    assert.deepEqual(responseFailure(200, body(err)), { kind: 'rpc', message: 'JSON-RPC -32000: "result" missing' });
    const late = `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":"${'x'.repeat(60)}"},"result":1}`;
    assert.equal(responseFailure(200, body(late)).kind, 'rpc', 'an error key before a late "result" is read');
    assert.equal(responseFailure(200, body('{"jsonrpc":"2.0","id":1}')).kind, 'other');
    assert.equal(responseFailure(503, body('{"result":1}')).kind, 'http');
  });

  it('open loop paced by the engine: the rate offered, until the window ends, then the samples are written', async () => {
    node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
    const t0 = Date.now();
    await runUser(false, 400);
    const elapsed = (Date.now() - t0) / 1000;
    assert.ok(Date.now() >= spec.end_at);
    const expected = 400 * elapsed;
    assert.ok(
      Math.abs(node.bodies.length - expected) / expected < 0.15,
      `${node.bodies.length} requests in ${elapsed.toFixed(2)} s at 400/s`,
    );
    const files = fs.readdirSync(path.join(dir, 'samples'));
    assert.equal(files.length, 1);
    const m = mergeSamples([JSON.parse(fs.readFileSync(path.join(dir, 'samples', files[0]), 'utf8'))]);
    assert.equal(m.failed, 4);
    // every request answered inside the window is in the samples; the last ones may complete after it: those still in
    // flight at its end (more of them on a busy machine, whose answers come later)
    assert.ok(
      m.ok <= node.bodies.length + 3 && m.ok >= node.bodies.length + 3 - 5 - m.in_flight_at_end,
      `${m.ok} of ${node.bodies.length + 3}, ${m.in_flight_at_end} in flight at the end`,
    );
    assert.equal(m.skipped, 0);
    const okCounted = Object.entries(ee.counters)
      .filter(([k]) => k.startsWith('chainperf.ok.'))
      .reduce((t, [, v]) => t + v, 0);
    assert.equal(okCounted, m.ok, "artillery's counters agree with the samples");
  });
});
