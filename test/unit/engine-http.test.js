'use strict';
// The lean engine's HTTP/1.1 client: the response reader on bytes cut at every
// place, and the connection pool against a real node:http server.

const assert = require('node:assert/strict');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const {
  HttpPool,
  ResponseReader,
  prepareRequest,
  TIMEOUT,
} = require('../../src/workload/engines/artillery-engine-chainperf/http');

/** Feeds `bytes` to a reader cut at the given offsets; returns every response completed. */
function feed(reader, bytes, cuts) {
  const out = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    const r = reader.push(bytes.subarray(at, c));
    if (r) out.push(r);
    at = c;
  }
  return out;
}

describe('lean engine over HTTP: response reader', () => {
  const sized = Buffer.from(
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\nDate: x\r\n\r\n{"jsonrpc":"2.0","id":1,"result":7}\n',
  );
  const chunked = Buffer.from(
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\na;ext=1\r\n[1,2,3,4]}\r\n0\r\n\r\n',
  );

  it('reads a Content-Length response whole, wherever the bytes are cut', () => {
    for (let cut = 1; cut < sized.length; cut++) {
      const got = feed(new ResponseReader(), sized, [cut]);
      assert.equal(got.length, 1, `cut at ${cut}`);
      assert.equal(got[0].status, 200);
      assert.equal(got[0].close, false);
      assert.equal(got[0].body.toString(), '{"jsonrpc":"2.0","id":1,"result":7}\n');
    }
  });

  it('reads a chunked response (with a chunk extension) whole, wherever the bytes are cut', () => {
    for (let cut = 1; cut < chunked.length; cut++) {
      for (const second of [cut + 1, cut + 7]) {
        const cuts = second < chunked.length ? [cut, second] : [cut];
        const got = feed(new ResponseReader(), chunked, cuts);
        assert.equal(got.length, 1, `cuts at ${cuts}`);
        assert.equal(got[0].body.toString(), '{"a":[1,2,3,4]}');
      }
    }
  });

  it('reads bytes lent from one read buffer that every read overwrites, and keeps a body only as asked', () => {
    // What net's onread does: every read lands in the same buffer, so the reader must copy what it keeps.
    const lent = Buffer.alloc(256);
    const feedLent = (reader, bytes, cuts, lend) => {
      const out = [];
      let at = 0;
      for (const c of [...cuts, bytes.length]) {
        lent.fill(0x21);
        const n = bytes.copy(lent, 0, at, c);
        const r = reader.push(lent.subarray(0, n), true, lend);
        if (r) out.push({ ...r, text: r.body.toString() }); // read at once, as the lean engine does
        at = c;
      }
      lent.fill(0x21); // the next read
      return out;
    };
    for (const [bytes, body] of [
      [sized, '{"jsonrpc":"2.0","id":1,"result":7}\n'],
      [chunked, '{"a":[1,2,3,4]}'],
    ])
      for (let cut = 1; cut < bytes.length; cut++) {
        for (const cuts of [[], [cut], cut + 5 < bytes.length ? [cut, cut + 5] : [cut]]) {
          const [lentRes] = feedLent(new ResponseReader(), bytes, cuts, true);
          assert.equal(lentRes.text, body, `lent, cuts at ${cuts}`);
          const [kept] = feedLent(new ResponseReader(), bytes, cuts, false);
          assert.equal(kept.body.toString(), body, `kept past the next read, cuts at ${cuts}`);
        }
      }
  });

  it('reads one response after another on the same connection, and sees Connection: close', () => {
    const reader = new ResponseReader();
    assert.equal(reader.push(sized).status, 200);
    const last = reader.push(
      Buffer.from('HTTP/1.1 503 Service Unavailable\r\nconnection: Close\r\ncontent-length: 2\r\n\r\nno'),
    );
    assert.deepEqual([last.status, last.close, last.body.toString()], [503, true, 'no']);
  });

  it('throws on bytes that are not an HTTP response, on a response of unknown length and on bytes nobody asked for', () => {
    assert.throws(() => new ResponseReader().push(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n')), /not an HTTP\/1.x response/);
    assert.throws(
      () => new ResponseReader().push(Buffer.from('HTTP/1.1 200 OK\r\n\r\n{}')),
      /neither Content-Length nor chunked/,
    );
    assert.throws(
      () => new ResponseReader().push(Buffer.concat([sized, Buffer.from('HTTP')])),
      /bytes after the response/,
    );
  });

  it('prepares the request head and body as one buffer', () => {
    const bytes = prepareRequest('http://127.0.0.1:8545/rpc?x=1', '{"id":1}').toString();
    assert.equal(
      bytes,
      'POST /rpc?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8545\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{"id":1}',
    );
  });
});

describe('lean engine over HTTP: connection pool', function () {
  this.timeout(10000);
  let server;
  let url;
  let sockets;
  let handler;
  const now = () => performance.now();

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => handler(req, res, body));
    });
    server.on('connection', () => {
      sockets++;
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${server.address().port}/`;
  });
  after(() => server.close());
  beforeEach(() => {
    sockets = 0;
    handler = (req, res, body) => res.end(`{"jsonrpc":"2.0","id":1,"result":${JSON.stringify(body)}}`);
  });

  it('sends the prepared bytes and keeps one connection per request in flight, reused between requests', async () => {
    const pool = new HttpPool(url, { timeoutMs: 2000, now });
    try {
      for (let i = 0; i < 20; i++) {
        const res = await pool.request(prepareRequest(url, `{"n":${i}}`), now());
        assert.equal(res.status, 200);
        assert.equal(JSON.parse(res.body.toString()).result, `{"n":${i}}`);
      }
      assert.equal(sockets, 1, 'twenty requests one after another went over one connection');
      const many = await Promise.all(Array.from({ length: 5 }, () => pool.request(prepareRequest(url, '{}'), now())));
      assert.ok(many.every((r) => r.status === 200));
      assert.equal(sockets, 5, 'five requests at once: the idle connection and four new ones');
      assert.equal(pool.size, 5);
    } finally {
      pool.close();
    }
  });

  it('reads a large chunked body', async () => {
    const big = 'x'.repeat(200000);
    handler = (req, res) => {
      res.write('{"jsonrpc":"2.0","id":1,"result":"');
      res.write(big);
      res.end('"}');
    };
    const pool = new HttpPool(url, { timeoutMs: 2000, now });
    try {
      const res = await pool.request(prepareRequest(url, '{}'), now());
      assert.equal(JSON.parse(res.body.toString()).result.length, big.length);
    } finally {
      pool.close();
    }
  });

  it('opens a new connection after the server closed one, and fails a request whose connection drops', async () => {
    const pool = new HttpPool(url, { timeoutMs: 2000, now });
    try {
      handler = (req, res) => {
        res.setHeader('Connection', 'close');
        res.end('{"jsonrpc":"2.0","id":1,"result":1}');
      };
      assert.equal((await pool.request(prepareRequest(url, '{}'), now())).status, 200);
      assert.equal((await pool.request(prepareRequest(url, '{}'), now())).status, 200);
      assert.equal(sockets, 2);
      handler = (req) => req.socket.destroy();
      const res = await pool.request(prepareRequest(url, '{}'), now());
      assert.equal(res.failure.kind, 'other');
      assert.equal(pool.size, 0);
    } finally {
      pool.close();
    }
  });

  it('fails a request unanswered after the timeout and closes its connection', async () => {
    handler = () => {}; // never answers
    const pool = new HttpPool(url, { timeoutMs: 150, now });
    try {
      const t0 = Date.now();
      const res = await pool.request(prepareRequest(url, '{}'), now());
      assert.equal(res.failure, TIMEOUT);
      assert.ok(Date.now() - t0 < 1000);
      assert.equal(pool.size, 0);
    } finally {
      pool.close();
    }
  });

  it('with a callback: the answer handed over in it, the connection reused from it; a closed pool fails later, not in the call', async () => {
    const pool = new HttpPool(url, { timeoutMs: 2000, now });
    const bodies = [];
    await new Promise((resolve) => {
      const next = (res) => {
        bodies.push(JSON.parse(res.body.toString()).result); // lent: read in the callback
        if (bodies.length < 10) pool.request(prepareRequest(url, `{"n":${bodies.length}}`), now(), next);
        else resolve();
      };
      pool.request(prepareRequest(url, '{"n":0}'), now(), next);
    });
    assert.deepEqual(
      bodies,
      Array.from({ length: 10 }, (_, i) => `{"n":${i}}`),
    );
    assert.equal(sockets, 1, 'a request sent from the callback reuses the connection just released');
    pool.close();
    let called = null;
    pool.request(prepareRequest(url, '{}'), now(), (res) => {
      called = res;
    });
    assert.equal(called, null, 'not called at once: a closed loop would call again without a turn of the event loop');
    await new Promise((r) => setImmediate(r));
    assert.equal(called.failure.message, 'HTTP pool closed');
  });

  it('fails at once when nothing listens', async () => {
    const closed = http.createServer();
    await new Promise((r) => closed.listen(0, '127.0.0.1', r));
    const dead = `http://127.0.0.1:${closed.address().port}/`;
    await new Promise((r) => closed.close(r));
    const pool = new HttpPool(dead, { timeoutMs: 2000, now });
    try {
      const res = await pool.request(prepareRequest(dead, '{}'), now());
      assert.equal(res.failure.kind, 'other');
      assert.match(res.failure.message, /ECONNREFUSED/);
    } finally {
      pool.close();
    }
  });
});
