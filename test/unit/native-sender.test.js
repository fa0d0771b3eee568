'use strict';
// LEAN_SENDER=native: the lean engine's closed loops sent by native-sender.c
// (built here with the machine's C compiler, as a run builds it), driven
// through the engine against local servers that play a node: what it sends,
// how each outcome is classed, HTTP's lengths and closes, WebSocket's ids,
// closes and reconnections, and a kept generator's windows and slices.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { startFakeNode, startFakeWsNode, writeGeneratorSpec, writeScenario, tmpDir } = require('../helpers');
const { mergeSamples } = require('../../src/workload/samples');
const { ensureNativeSender } = require('../../src/install/c-program');
const { senderArgs, ringBytes } = require('../../src/workload/engines/artillery-engine-chainperf/native-wire');
const { resolveScenario } = require('../../src/scenario/resolve');

const POOL = { chain_id: 1337, head: 10, blocks: [1, 2, 3], addresses: [`0x${'11'.repeat(20)}`] };
const MIX = { eth_getBlockByNumber: 1, eth_getBalance: 1 };

describe('the native sender (LEAN_SENDER=native)', function () {
  this.timeout(60000);
  let bin;
  let Engine;
  const counters = {};
  const ee = {
    emit(kind, name, n) {
      if (kind === 'counter') counters[name] = (counters[name] || 0) + n;
    },
  };

  before(async () => {
    bin = await ensureNativeSender(() => {});
    Engine = require('../../src/workload/engines/artillery-engine-chainperf');
  });
  beforeEach(() => {
    Engine.reset();
    for (const k of Object.keys(counters)) delete counters[k];
  });
  after(() => Engine.reset());

  const user = () =>
    new Promise((resolve, reject) => {
      new Engine({ config: {} }).createScenario({ closedLoop: true }, ee)({}, (err) => (err ? reject(err) : resolve()));
    });
  /**
   * A single pass against url: the window opens after lead ms (200 unless over.lead says) and lasts ms; the spec and
   * its merged samples.
   */
  const pass = async (url, ms, users = 2, { lead = 200, ...over } = {}) => {
    const now = Date.now();
    const { spec } = writeGeneratorSpec(url, POOL, {
      mix: MIX,
      timeout_ms: 300,
      start_at: now + lead,
      end_at: now + lead + ms,
      stop_at: now + lead + 100 + ms,
      native_sender: bin,
      ws_connections: 2,
      ...over,
    });
    await Promise.all(Array.from({ length: users }, user));
    const files = fs.readdirSync(spec.samples_dir).filter((f) => f.startsWith('worker-'));
    assert.equal(files.length, 1, 'one worker, one samples file');
    const raw = JSON.parse(fs.readFileSync(path.join(spec.samples_dir, files[0]), 'utf8'));
    return { spec, raw, samples: mergeSamples([raw]) };
  };

  describe('over HTTP', () => {
    let node;
    before(async () => {
      node = await startFakeNode();
    });
    after(() => node.close());
    beforeEach(() => {
      node.bodies = [];
    });

    it("sends the engine's prepared requests in a closed loop and records them in the window's samples", async () => {
      const got = [];
      node.answer = (b) => {
        got.push(Date.now());
        return [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
      };
      // The window opens 1.5 s after the users start: on a loaded machine the sender's start (a process spawned, its
      // connections opened) can take longer than 200 ms, and then nothing is out when the window opens.
      const { spec, raw, samples } = await pass(node.url, 800, 2, { lead: 1500 });
      assert.ok(samples.ok > 100, `${samples.ok} requests in the window`);
      assert.equal(samples.failed, 0);
      for (const b of node.bodies.slice(0, 50)) {
        assert.ok(Object.keys(MIX).includes(b.method), b.method);
        if (b.method === 'eth_getBlockByNumber') assert.ok(['0x1', '0x2', '0x3'].includes(b.params[0]));
      }
      const answered = got.filter((t) => t >= spec.start_at && t < spec.end_at).length;
      assert.ok(Math.abs(samples.ok - answered) <= 6, `${samples.ok} recorded, ${answered} answered inside the window`);
      const counted = counters['chainperf.ok.eth_getBlockByNumber'] + counters['chainperf.ok.eth_getBalance'];
      assert.equal(counted, samples.ok, "artillery's counters agree with the samples");
      assert.ok(samples.latency_ms.p50 > 0 && samples.latency_ms.p50 < 50, `p50 ${samples.latency_ms.p50} ms`);
      assert.ok(raw.first_request_at < spec.start_at, 'the first request was sent before the window opened');
      assert.equal(samples.in_flight_at_start, 2, 'both users had a request out when the window opened');
      const late = got.filter((t) => t >= spec.stop_at + 20).length;
      assert.ok(late <= 2, `${late} requests reached the node after stop_at (at most those in flight then)`);
    });

    it('classes a JSON-RPC error in an HTTP 200, an HTTP 500, a body without result and a timeout as the engine does', async () => {
      let n = 0;
      node.answer = (b) => {
        const k = n++ % 4;
        if (k === 0) return [200, { jsonrpc: '2.0', id: b.id, error: { code: -32601, message: 'nope' } }];
        if (k === 1) return [500, 'oops'];
        if (k === 2) return [200, '{"jsonrpc":"2.0","id":1}'];
        return null; // never answered: a timeout after 300 ms
      };
      const { samples } = await pass(node.url, 1500, 1);
      for (const k of ['rpc', 'http', 'other', 'timeout'])
        assert.ok(counters[`chainperf.failed.${k}`] >= 1, `${k}: ${JSON.stringify(counters)}`);
      assert.equal(samples.errors['JSON-RPC -32601: nope'] >= 1, true, JSON.stringify(samples.errors));
      assert.ok(samples.errors['HTTP 500'] >= 1);
      assert.ok(samples.errors['response has neither result nor error'] >= 1);
      assert.ok(samples.errors.timeout >= 1);
    });

    it('reads chunked answers and opens a new connection after the server closes one', async () => {
      let conns = 0;
      let answers = 0;
      const server = net.createServer((sock) => {
        conns++;
        let buf = '';
        sock.on('data', (d) => {
          buf += d;
          for (;;) {
            const end = buf.indexOf('\r\n\r\n');
            if (end < 0) return;
            const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))[1]);
            if (buf.length < end + 4 + len) return;
            const body = JSON.parse(buf.slice(end + 4, end + 4 + len));
            buf = buf.slice(end + 4 + len);
            const text = JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x1' });
            const close = ++answers % 5 === 0; // every fifth answer closes its connection
            const a = text.slice(0, 10);
            const b = text.slice(10);
            sock.write(
              `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n${close ? 'Connection: close\r\n' : ''}\r\n` +
                `${a.length.toString(16)}\r\n${a}\r\n${b.length.toString(16)};x=y\r\n${b}\r\n0\r\n\r\n`,
            );
            if (close) sock.end();
          }
        });
        sock.on('error', () => {});
      });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      try {
        const { samples } = await pass(`http://127.0.0.1:${server.address().port}/`, 600, 2);
        assert.ok(samples.ok > 50, `${samples.ok} chunked answers`);
        assert.equal(samples.failed, 0, JSON.stringify(samples.errors));
        assert.ok(
          conns > samples.ok / 6,
          `${conns} connections for ${samples.ok} answers (a new one after each close)`,
        );
      } finally {
        server.close();
      }
    });

    it('a sender that dies mid-pass fails the users with its reason, and the window keeps what it recorded', async () => {
      node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
      const now = Date.now();
      const { spec } = writeGeneratorSpec(node.url, POOL, {
        mix: MIX,
        timeout_ms: 300,
        start_at: now + 100,
        end_at: now + 3000,
        stop_at: now + 3100,
        native_sender: bin,
      });
      const users = [user(), user()].map((p) =>
        p.then(
          () => null,
          (err) => err,
        ),
      );
      // killed once the node has answered inside the window and the sender has had two of its 250 ms batches since
      const deadline = Date.now() + 10000;
      while (node.bodies.length < 20 && Date.now() < deadline) await sleep(20);
      await sleep(Math.max(0, now + 100 - Date.now()) + 600);
      const pid = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'native-sender'], { encoding: 'utf8' });
      process.kill(Number(pid.trim().split('\n')[0]), 'SIGKILL');
      const errors = await Promise.all(users);
      for (const err of errors) assert.match(String(err && err.message), /the native sender exited \(signal SIGKILL\)/);
      const files = fs.readdirSync(spec.samples_dir).filter((f) => f.startsWith('worker-'));
      const raw = JSON.parse(fs.readFileSync(path.join(spec.samples_dir, files[0]), 'utf8'));
      assert.match(raw.user_errors[0], /the native sender exited/);
      assert.ok(mergeSamples([raw]).ok > 0, 'what was answered before it died is kept');
    });

    it('a node that refuses connections: every request fails as the engine says, the pass still ends', async () => {
      const server = net.createServer();
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const port = server.address().port;
      await new Promise((r) => server.close(r)); // nothing listens there now
      // a lead of 1.5 s: on a loaded machine the sender once started after a 300 ms window had ended, and sent nothing
      const { samples } = await pass(`http://127.0.0.1:${port}/`, 300, 1, { lead: 1500 });
      assert.equal(samples.ok, 0);
      assert.ok(samples.errors.ECONNREFUSED > 0, JSON.stringify(samples.errors));
    });
  });

  describe('over WebSocket', () => {
    let node;
    before(async () => {
      node = await startFakeWsNode();
    });
    after(() => node.close());
    beforeEach(() => {
      node.received = [];
    });

    it('matches answers to requests by id on each connection, in any order and shape', async () => {
      let n = 0;
      node.answer = (b) => {
        const k = n++ % 3;
        if (k === 0) return { jsonrpc: '2.0', id: b.id, result: '0x1' };
        if (k === 1) return `{"id":"${b.id}","result":{"x":"}"},"jsonrpc":"2.0"}`; // another order, a string id
        return { jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'header not found' } };
      };
      // a timeout of 2 s: this test is about matching, and a CI run once saw an answer take over 300 ms under load;
      // an answer matched to the wrong request would still show, as a user stalled and a count too low
      const { samples } = await pass(node.url, 800, 4, { timeout_ms: 2000 });
      assert.ok(samples.ok > 50, `${samples.ok} results`);
      assert.ok(samples.errors['JSON-RPC -32000: header not found'] > 20, JSON.stringify(samples.errors));
      assert.deepEqual(Object.keys(samples.errors), ['JSON-RPC -32000: header not found']);
      assert.deepEqual([...new Set(node.received.map((r) => r.conn))].sort(), [0, 1], 'on both connections');
      const ids = node.received.filter((r) => r.conn === 0).map((r) => r.body.id);
      assert.deepEqual(ids.slice(0, 5), [1, 2, 3, 4, 5], 'ids counted per connection');
    });

    it('a connection the server closes fails its requests and opens again', async () => {
      let closed = false;
      const closeAt = Date.now() + 600; // inside the window
      node.answer = (b, conn) => {
        if (!closed && Date.now() >= closeAt) {
          closed = true;
          node.sockets[conn].close(1001);
        }
        return { jsonrpc: '2.0', id: b.id, result: '0x1' };
      };
      const before = node.sockets.length;
      const { samples } = await pass(node.url, 1200, 2);
      assert.ok(samples.errors['WebSocket closed (code 1001)'] >= 1, JSON.stringify(samples.errors));
      assert.ok(node.sockets.length > before + 2, 'a new connection after the close');
      assert.ok(samples.ok > 200);
    });
  });

  describe('a kept generator', () => {
    let node;
    let session;
    const sent = [];
    before(async () => {
      node = await startFakeNode();
      node.answer = (b) => {
        sent.push(Date.now());
        return [200, { jsonrpc: '2.0', id: b.id, result: '0x1' }];
      };
    });
    after(() => {
      if (session) fs.writeFileSync(path.join(session, 'end'), '');
      node.close();
    });

    it("sends only inside each window's slices, records each window apart, marks it quiet, ends with the session", async () => {
      session = tmpDir();
      const { dir } = writeGeneratorSpec(node.url, POOL, {
        mix: MIX,
        timeout_ms: 400,
        session_dir: session,
        start_at: 0,
        end_at: 0,
        stop_at: 0,
        samples_dir: null,
        native_sender: bin,
      });
      const users = [user(), user()];
      await sleep(300);
      assert.equal(sent.length, 0, 'nothing before the first window');
      const windows = [];
      for (const k of [1, 2]) {
        const t0 = Date.now() + 200;
        // slices 800 ms apart: a request sent at a slice's end can reach the node a few hundred ms later under load
        const slices = k === 2 ? [0, 1000].map((x) => [t0 + x, t0 + x + 200]) : undefined;
        const w = { send_from: t0, start_at: t0, end_at: t0 + 1200, stop_at: t0 + 1300, seed: k, slices };
        w.samples_dir = path.join(dir, `samples-${k}`);
        fs.mkdirSync(w.samples_dir);
        fs.writeFileSync(path.join(session, `window-${k}.json`), JSON.stringify(w));
        const deadline = w.stop_at + 3000;
        while (!fs.readdirSync(w.samples_dir).some((f) => f.startsWith('quiet-')) && Date.now() < deadline)
          await sleep(20);
        assert.ok(
          fs.readdirSync(w.samples_dir).some((f) => f.startsWith('quiet-')),
          `window ${k} marked quiet`,
        );
        windows.push(w);
      }
      const samplesOf = (w) => {
        const files = fs.readdirSync(w.samples_dir).filter((f) => f.startsWith('worker-'));
        return mergeSamples(files.map((f) => JSON.parse(fs.readFileSync(path.join(w.samples_dir, f), 'utf8'))));
      };
      const [w1, w2] = windows;
      const s1 = samplesOf(w1);
      assert.ok(s1.ok > 50, `${s1.ok} in window 1`);
      assert.ok(s1.first_request_at >= w1.send_from);
      // an answer's request reaches the node a little after it was sent (tens of ms, once 93 ms in a CI run): 300 ms
      // allowed, which leaves 500 ms between the slices where nothing may arrive
      const inside = (t) => w2.slices.some(([a, b]) => t >= a && t < b + 300);
      const during2 = sent.filter((t) => t >= w2.send_from - 100 && t < w2.stop_at + 100);
      assert.deepEqual(
        during2.filter((t) => !inside(t)).map((t) => t - w2.send_from),
        [],
        'window 2: nothing outside its slices',
      );
      const s2 = samplesOf(w2);
      assert.ok(Math.abs(s2.ok - during2.length) <= 2, `${s2.ok} recorded, ${during2.length} answered`);
      fs.writeFileSync(path.join(session, 'end'), '');
      await Promise.all(users);
    });
  });

  it('speaks plain http:// and ws:// only, and gives the WebSocket handshake what the URL carries', () => {
    assert.deepEqual(senderArgs('http://127.0.0.1:8545/', { connections: 4, timeoutMs: 500 }), [
      'http',
      '127.0.0.1',
      '8545',
      '500',
    ]);
    const ws = senderArgs('ws://u:p@node.example:8546/key?x=1', { connections: 3, timeoutMs: 500 });
    assert.deepEqual(ws.slice(0, 5), ['ws', 'node.example', '8546', '500', '3']);
    assert.match(ws[5], /^GET \/key\?x=1 HTTP\/1\.1\r\nHost: node\.example:8546\r\n/);
    assert.match(ws[5], /\r\nauthorization: Basic dTpw\r\n\r\n$/);
    assert.throws(() => senderArgs('https://node.example/', { connections: 1, timeoutMs: 1 }), /plain http/);
    const ring = ringBytes([{ bytes: Buffer.from('ab') }, { tail: Buffer.from('c') }]);
    assert.deepEqual([...ring], [2, 0, 0, 0, 2, 0, 0, 0, 97, 98, 1, 0, 0, 0, 99]);
  });

  it('is refused, with the reason, where it cannot send', () => {
    const dir = tmpDir();
    const problems = (text) => {
      const file = writeScenario(dir, 's', `CHAIN=ethereum\nGENERATOR=lean\nLEAN_SENDER=native\n${text}`);
      return resolveScenario(file, { env: {}, cpuCount: 2, dockerEngine: null }).errors.join('\n');
    };
    assert.equal(problems(''), '');
    assert.match(problems('GENERATOR=ethers'), /LEAN_SENDER=native is the lean engine's sender, and GENERATOR=ethers/);
    assert.match(problems('RATE=100\nCONCURRENCY='), /not an open loop \(RATE\)/);
  });
});
