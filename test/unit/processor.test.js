'use strict';
// The artillery processor for EVM chains, driven by hand against a local
// HTTP server that plays a node: what reaches the wire, and how answers are counted.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { tmpDir } = require('../helpers');
const { mergeSamples } = require('../../src/workload/samples');

const POOL = {
  chain_id: 1337, head: 10, blocks: [1, 2, 3], tx_hashes: [`0x${'ab'.repeat(32)}`], addresses: [`0x${'11'.repeat(20)}`],
  senders: [`0x${'11'.repeat(20)}`], contract: `0x${'22'.repeat(20)}`, call_data: ['0x2ddbd13a'], estimate_data: ['0x01'],
};

describe('ethereum processor', function () {
  this.timeout(20000);
  let server;
  let bodies;
  let answer; // (request) => [status, body] or null to never answer
  let processor;
  let dir;
  let start;
  const events = { emitted: [], emit(...a) { this.emitted.push(a); } };

  before(async () => {
    server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => { data += c; });
      req.on('end', () => {
        const body = JSON.parse(data);
        bodies.push(body);
        const a = answer(body);
        if (!a) return; // hang: the client times out
        res.writeHead(a[0], { 'content-type': 'application/json' });
        res.end(JSON.stringify(a[1]));
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'pool.json'), JSON.stringify(POOL));
    fs.mkdirSync(path.join(dir, 'samples'));
    start = Date.now();
    const spec = {
      rpc_url: `http://127.0.0.1:${server.address().port}`, pool_file: path.join(dir, 'pool.json'),
      mix: { eth_blockNumber: 1 }, timeout_ms: 500, seed: 1, start_at: start, end_at: start + 60000, samples_dir: path.join(dir, 'samples'),
    };
    fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
    process.env.CHAINPERF_GENERATOR_SPEC = path.join(dir, 'spec.json');
    processor = require('../../src/workload/processors/ethereum');
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    bodies = [];
    events.emitted = [];
  });

  it('sends every call as its own request: no batching, no de-duplication', async () => {
    answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x10' }];
    await Promise.all(Array.from({ length: 20 }, () => processor.sendRequest({}, events)));
    assert.equal(bodies.length, 20);
    for (const b of bodies) {
      assert.ok(!Array.isArray(b), 'not a batch');
      assert.equal(b.method, 'eth_blockNumber');
    }
    assert.equal(events.emitted.filter((e) => e[1] === 'chainperf.ok.eth_blockNumber').length, 20);
  });

  it('counts a JSON-RPC error in an HTTP 200, an HTTP 503 and a timeout as failures', async () => {
    answer = (b) => [200, { jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'boom' } }];
    await processor.sendRequest({}, events);
    answer = () => [503, { error: 'unavailable' }];
    await processor.sendRequest({}, events);
    answer = () => null;
    await processor.sendRequest({}, events);
    const kinds = events.emitted.map((e) => e[1]);
    assert.deepEqual(kinds, ['chainperf.failed.rpc', 'chainperf.failed.http', 'chainperf.failed.timeout']);
  });

  it('writes its samples once the window is over, with every outcome', async () => {
    const file = fs.readdirSync(path.join(dir, 'samples'));
    assert.deepEqual(file, [], 'nothing before the end');
    const spec = JSON.parse(fs.readFileSync(process.env.CHAINPERF_GENERATOR_SPEC, 'utf8'));
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
