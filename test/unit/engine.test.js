'use strict';
// chainperf's artillery engine (GENERATOR=lean), driven by hand against a
// local HTTP server that plays a node.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { tmpDir } = require('../helpers');
const { mergeSamples } = require('../../src/workload/samples');

describe('lean engine', function () {
  this.timeout(20000);
  let server;
  let bodies;
  let answer;
  let Engine;
  let dir;
  let spec;
  const ee = { counters: {}, started: 0, emit(kind, name, n) { if (kind === 'started') this.started++; else this.counters[name] = (this.counters[name] || 0) + n; } };

  before(async () => {
    server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => { data += c; });
      req.on('end', () => {
        const body = JSON.parse(data);
        bodies.push(body);
        const a = answer(body);
        if (!a) return;
        res.writeHead(a[0], { 'content-type': 'application/json' });
        res.end(typeof a[1] === 'string' ? a[1] : JSON.stringify(a[1]));
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'pool.json'), JSON.stringify({ chain_id: 1337, head: 10, blocks: [1, 2, 3], addresses: [`0x${'11'.repeat(20)}`] }));
    fs.mkdirSync(path.join(dir, 'samples'));
    const now = Date.now();
    spec = {
      rpc_url: `http://127.0.0.1:${server.address().port}/`, pool_file: path.join(dir, 'pool.json'),
      mix: { eth_getBlockByNumber: 1, eth_getBalance: 1 }, timeout_ms: 400, seed: 1, start_at: now, end_at: now + 3000, samples_dir: path.join(dir, 'samples'),
    };
    fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
    process.env.CHAINPERF_GENERATOR_SPEC = path.join(dir, 'spec.json');
    Engine = require('../../src/workload/engines/artillery-engine-chainperf');
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    bodies = [];
  });

  const runUser = (closedLoop, openLoopRate) => new Promise((resolve, reject) => {
    const scenario = new Engine({ config: {} }).createScenario({ closedLoop, openLoopRate }, ee);
    scenario({}, (err) => (err ? reject(err) : resolve()));
  });

  it('open loop: one prepared JSON-RPC request per user, parameters from the pool', async () => {
    answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
    await Promise.all([runUser(false), runUser(false), runUser(false)]);
    assert.equal(bodies.length, 3);
    for (const b of bodies) {
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
      answer = a;
      await runUser(false);
    }
    for (const k of ['rpc', 'http', 'other', 'timeout']) assert.equal(ee.counters[`chainperf.failed.${k}`], 1, k);
  });

  it('open loop paced by the engine: the rate offered, until the window ends, then the samples are written', async () => {
    answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
    const t0 = Date.now();
    await runUser(false, 400);
    const elapsed = (Date.now() - t0) / 1000;
    assert.ok(Date.now() >= spec.end_at);
    const expected = 400 * elapsed;
    assert.ok(Math.abs(bodies.length - expected) / expected < 0.15, `${bodies.length} requests in ${elapsed.toFixed(2)} s at 400/s`);
    const files = fs.readdirSync(path.join(dir, 'samples'));
    assert.equal(files.length, 1);
    const m = mergeSamples([JSON.parse(fs.readFileSync(path.join(dir, 'samples', files[0]), 'utf8'))]);
    assert.equal(m.failed, 4);
    // every request answered inside the window is in the samples; the last ones may complete after it
    assert.ok(m.ok <= bodies.length + 3 && m.ok >= bodies.length + 3 - 5, `${m.ok} of ${bodies.length + 3}`);
    assert.equal(m.skipped, 0);
    const okCounted = Object.entries(ee.counters).filter(([k]) => k.startsWith('chainperf.ok.')).reduce((t, [, v]) => t + v, 0);
    assert.equal(okCounted, m.ok, 'artillery\'s counters agree with the samples');
  });
});
