'use strict';
// The lean engine over WebSocket (TRANSPORT=ws): reading answers without
// decoding them, matching them to requests by id, timeouts and closed
// connections, against a local WebSocket server that plays a node.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { startFakeWsNode, writeGeneratorSpec } = require('../helpers');
const { mergeSamples } = require('../../src/workload/samples');
const { WsPool, parseAnswer, bodyTail, HEAD } = require('../../src/workload/engines/artillery-engine-chainperf/ws');
const Engine = require('../../src/workload/engines/artillery-engine-chainperf');

const buf = (x) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

describe('lean engine over WebSocket: answers', () => {
  it('reads the id of geth\'s result without decoding, also when the result mentions "error"', () => {
    assert.deepEqual(parseAnswer(buf('{"jsonrpc":"2.0","id":12345,"result":"0x1"}\n')), { id: 12345, failure: null });
    assert.deepEqual(parseAnswer(buf('{"jsonrpc":"2.0","id":7,"result":{"data":"\\"error\\""}}')), {
      id: 7,
      failure: null,
    });
  });

  it('counts a JSON-RPC error as an rpc failure with its code and message', () => {
    const a = parseAnswer(
      buf({
        jsonrpc: '2.0',
        id: 9,
        error: { code: -32601, message: 'the method eth_nope does not exist/is not available' },
      }),
    );
    assert.equal(a.id, 9);
    assert.deepEqual(a.failure, {
      kind: 'rpc',
      message: 'JSON-RPC -32601: the method eth_nope does not exist/is not available',
    });
  });

  it('parses any other shape whole: members in another order, a string id, no result, not JSON', () => {
    assert.deepEqual(parseAnswer(buf('{"id":3,"jsonrpc":"2.0","result":null}')), { id: 3, failure: null });
    assert.deepEqual(parseAnswer(buf('{"jsonrpc":"2.0","id":"42","result":"0x0"}')), { id: 42, failure: null });
    assert.deepEqual(parseAnswer(buf('{"jsonrpc":"2.0","id":4}')), {
      id: 4,
      failure: { kind: 'other', message: 'response has neither result nor error' },
    });
    assert.deepEqual(parseAnswer(buf('{"jsonrpc":"2.0","id":5,"res')), {
      id: null,
      failure: { kind: 'other', message: 'response is not JSON' },
    });
    assert.equal(
      parseAnswer(buf('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}')).id,
      null,
    );
  });

  it('a prepared tail and an id make the JSON-RPC body', () => {
    const body = JSON.parse(`${HEAD}17${bodyTail('eth_getBalance', ['0xab', 'latest'])}`);
    assert.deepEqual(body, { jsonrpc: '2.0', id: 17, method: 'eth_getBalance', params: ['0xab', 'latest'] });
  });
});

describe('lean engine over WebSocket: connections', function () {
  this.timeout(20000);
  let node;
  let pool;
  beforeEach(async () => {
    node = await startFakeWsNode();
  });
  afterEach(async () => {
    if (pool) pool.close();
    pool = null;
    await node.close();
  });

  it('spreads requests over its connections, ids unique on each, answers out of order matched by id', async () => {
    // The node holds every answer until all 40 requests are in, then answers them in reverse order.
    const held = [];
    node.answer = (body, conn) => {
      held.push({ body, conn });
      if (held.length === 40) {
        for (const h of held.reverse()) {
          const a =
            h.body.method === 'bad'
              ? { jsonrpc: '2.0', id: h.body.id, error: { code: -32000, message: `bad ${h.body.params[0]}` } }
              : { jsonrpc: '2.0', id: h.body.id, result: h.body.params[0] };
          node.sockets[h.conn].send(JSON.stringify(a));
        }
      }
      return null;
    };
    pool = new WsPool(node.url, { connections: 2, timeoutMs: 5000, now: () => performance.now() });
    await sleep(200); // both open
    const calls = Array.from({ length: 40 }, (_, i) =>
      pool.request(bodyTail(i % 4 === 0 ? 'bad' : 'good', [i]), performance.now()).then((f) => ({ i, f })),
    );
    const results = await Promise.all(calls);
    for (const { i, f } of results) {
      if (i % 4 === 0) assert.deepEqual(f, { kind: 'rpc', message: `JSON-RPC -32000: bad ${i}` });
      else assert.equal(f, null);
    }
    const perConn = [0, 1].map((c) => node.received.filter((r) => r.conn === c));
    assert.deepEqual(
      perConn.map((r) => r.length),
      [20, 20],
      'round robin over both connections',
    );
    for (const r of perConn)
      assert.equal(new Set(r.map((x) => x.body.id)).size, r.length, 'ids unique on a connection');
    assert.equal(pool.unmatched, 0);
  });

  it("keeps a lane's requests (a closed-loop user's) on one connection, the next lane's on the next", async () => {
    node.answer = (body) => ({ jsonrpc: '2.0', id: body.id, result: '0x1' });
    pool = new WsPool(node.url, { connections: 2, timeoutMs: 5000, now: () => performance.now() });
    await sleep(200); // both open
    for (let i = 0; i < 6; i++) {
      // three of lane 5 to one of lane 6: round robin would put lane 5 on both connections
      const lanes = [5, 5, 5, 6];
      const got = await Promise.all(lanes.map((lane) => pool.request(bodyTail('x', [lane]), 0, undefined, lane)));
      assert.deepEqual(got, [null, null, null, null]);
    }
    const connOf = (lane) => [...new Set(node.received.filter((r) => r.body.params[0] === lane).map((r) => r.conn))];
    assert.equal(connOf(5).length, 1, 'lane 5 on one connection');
    assert.equal(connOf(6).length, 1, 'lane 6 on one connection');
    assert.notEqual(connOf(5)[0], connOf(6)[0], 'lanes 5 and 6 on different connections');
  });

  it('a request without an answer fails as a timeout, and its late answer is not counted twice', async () => {
    let late = null;
    node.answer = (body, conn) => {
      late = () => node.sockets[conn].send(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x1' }));
      return null;
    };
    pool = new WsPool(node.url, { connections: 1, timeoutMs: 200, now: () => performance.now() });
    const t0 = performance.now();
    const f = await pool.request(bodyTail('eth_blockNumber', []), t0);
    const waited = performance.now() - t0;
    assert.deepEqual(f, { kind: 'timeout', message: 'timeout' });
    assert.ok(waited >= 200 && waited < 600, `timed out after ${waited.toFixed(0)} ms`);
    late();
    await sleep(100);
    assert.equal(pool.unmatched, 1);
  });

  it('a connection that closes fails its requests in flight, reconnects, and carries on', async () => {
    node.answer = () => null;
    pool = new WsPool(node.url, { connections: 1, timeoutMs: 5000, now: () => performance.now() });
    const inFlight = [
      pool.request(bodyTail('eth_blockNumber', []), performance.now()),
      pool.request(bodyTail('eth_blockNumber', []), performance.now()),
    ];
    while (node.received.length < 2) await sleep(10);
    node.sockets[0].terminate();
    for (const f of await Promise.all(inFlight)) assert.equal(f.kind, 'other');
    node.answer = (body) => ({ jsonrpc: '2.0', id: body.id, result: '0x2' });
    const f = await pool.request(bodyTail('eth_blockNumber', []), performance.now());
    assert.equal(f, null);
    assert.equal(pool.reconnects, 1);
    assert.equal(node.sockets.length, 2, 'a second connection was opened');
  });

  it('a node that refuses connections: requests fail, never hang', async () => {
    const url = node.url;
    await node.close();
    node = { close: async () => {} };
    pool = new WsPool(url, { connections: 1, timeoutMs: 1000, now: () => performance.now() });
    const f = await pool.request(bodyTail('eth_blockNumber', []), performance.now());
    assert.equal(f.kind, 'other');
    assert.match(f.message, /ECONNREFUSED/);
  });
});

describe('lean engine over WebSocket: the artillery engine', function () {
  this.timeout(20000);
  let node;
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
  const runUser = (closedLoop, openLoopRate) =>
    new Promise((resolve, reject) => {
      const scenario = new Engine({ config: {} }).createScenario({ closedLoop, openLoopRate }, ee);
      scenario({}, (err) => (err ? reject(err) : resolve()));
    });

  before(async () => {
    Engine.reset();
    node = await startFakeWsNode();
    ({ dir, spec } = writeGeneratorSpec(
      node.url,
      { chain_id: 1337, head: 10, blocks: [1, 2, 3], addresses: [`0x${'11'.repeat(20)}`] },
      {
        mix: { eth_getBlockByNumber: 1, eth_getBalance: 1 },
        timeout_ms: 1000,
        end_at: Date.now() + 4000,
        ws_connections: 2,
      },
    ));
  });
  after(async () => {
    Engine.reset();
    await node.close();
  });

  it('sends prepared requests with parameters from the pool; results, JSON-RPC errors and timeouts are counted apart', async () => {
    let n = 0;
    node.answer = (b) => {
      n++;
      if (n === 2) return { jsonrpc: '2.0', id: b.id, error: { code: -32601, message: 'nope' } };
      if (n === 3) return null; // never answered: a timeout
      return { jsonrpc: '2.0', id: b.id, result: '0x1' };
    };
    for (let k = 0; k < 4; k++) await runUser(false);
    assert.equal(node.received.length, 4);
    for (const { body } of node.received) {
      assert.ok(['eth_getBlockByNumber', 'eth_getBalance'].includes(body.method));
      if (body.method === 'eth_getBlockByNumber') assert.ok(['0x1', '0x2', '0x3'].includes(body.params[0]));
    }
    assert.equal(ee.counters['chainperf.failed.rpc'], 1);
    assert.equal(ee.counters['chainperf.failed.timeout'], 1);
    const ok = Object.entries(ee.counters)
      .filter(([k]) => k.startsWith('chainperf.ok.'))
      .reduce((t, [, v]) => t + v, 0);
    assert.equal(ok, 2);
  });

  it('a closed loop runs until the window ends over both connections; the samples agree with the counters', async () => {
    node.answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: '0x1' });
    const before = node.received.length;
    await Promise.all([runUser(true), runUser(true), runUser(true)]);
    assert.ok(Date.now() >= spec.end_at);
    const sent = node.received.length - before;
    assert.ok(sent > 100, `${sent} requests`);
    assert.equal(new Set(node.received.map((r) => r.conn)).size, 2);
    const files = fs.readdirSync(path.join(dir, 'samples'));
    assert.equal(files.length, 1, `${dir}: ${files}`);
    const m = mergeSamples([JSON.parse(fs.readFileSync(path.join(dir, 'samples', files[0]), 'utf8'))]);
    assert.equal(m.failures.rpc, 1);
    assert.equal(m.failures.timeout, 1);
    const okCounted = Object.entries(ee.counters)
      .filter(([k]) => k.startsWith('chainperf.ok.'))
      .reduce((t, [, v]) => t + v, 0);
    assert.equal(okCounted, m.ok, "artillery's counters agree with the samples");
    // the two results of the test before, and every closed-loop request but the last of each user, which may complete
    // after the window
    assert.ok(m.ok <= sent + 2 && m.ok >= sent + 2 - 3, `${m.ok} ok of ${sent} sent in the closed loop`);
  });
});
