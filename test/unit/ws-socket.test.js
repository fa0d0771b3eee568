'use strict';
// The lean engine's WebSocket client connection (RFC 6455) against the `ws`
// library's server: framing both ways, fragments, ping, the closing
// handshake, and handshakes it must refuse.

const assert = require('node:assert/strict');
const net = require('node:net');
const { WebSocketServer } = require('ws');
const { WsSocket, clientFrame } = require('../../src/workload/engines/artillery-engine-chainperf/ws-socket');

/** Unmasks a client frame: {fin, opcode, payload}. */
function readClientFrame(frame) {
  let len = frame[1] & 0x7f;
  let at = 2;
  if (len === 126) {
    len = frame.readUInt16BE(2);
    at = 4;
  } else if (len === 127) {
    len = frame.readUInt32BE(2) * 2 ** 32 + frame.readUInt32BE(6);
    at = 10;
  }
  assert.equal(frame[1] & 0x80, 0x80, 'a client frame is masked');
  const mask = frame.subarray(at, at + 4);
  const payload = Buffer.from(frame.subarray(at + 4));
  assert.equal(payload.length, len);
  for (let i = 0; i < len; i++) payload[i] ^= mask[i & 3];
  return { fin: Boolean(frame[0] & 0x80), opcode: frame[0] & 0x0f, payload };
}

/** A WsSocket to url whose events are collected; resolves once it is open (or closed). */
function connect(url) {
  const got = { messages: [], close: null };
  return new Promise((resolve) => {
    got.socket = new WsSocket(url, {
      handshakeTimeoutMs: 2000,
      onOpen: () => resolve(got),
      onMessage: (buf) => got.messages.push(buf.toString()), // read at once: buf is the read buffer
      onClose: (code, error) => {
        got.close = { code, error };
        resolve(got);
      },
    });
  });
}

const until = async (f) => {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(f(), 'in time');
};

describe('lean engine over WebSocket: the client connection', function () {
  this.timeout(10000);
  let wss;
  let server; // the server's side of the last connection
  let url;
  beforeEach(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => wss.once('listening', r));
    wss.on('connection', (s) => {
      server = s;
    });
    url = `ws://127.0.0.1:${wss.address().port}`;
  });
  afterEach(async () => {
    for (const s of wss.clients) s.terminate();
    await new Promise((r) => wss.close(r));
  });

  /** A connection, the messages the server read from it and the lengths of the socket's writes. */
  async function watched() {
    const got = await connect(url);
    const seen = [];
    server.on('message', (m) => seen.push(m.toString()));
    const writes = [];
    const write = got.socket.socket.write.bind(got.socket.socket);
    got.socket.socket.write = (b, ...rest) => writes.push(b.length) && write(b, ...rest);
    return { got, seen, writes };
  }

  it('frames a text message masked, with the 7-bit, 16-bit and 64-bit lengths', () => {
    for (const n of [0, 5, 125, 126, 65535, 65536]) {
      const text = 'x'.repeat(n);
      const f = readClientFrame(clientFrame(0x1, text));
      assert.deepEqual([f.fin, f.opcode, f.payload.toString()], [true, 0x1, text], `${n} bytes`);
    }
    const utf8 = readClientFrame(clientFrame(0x1, '{"p":"é€"}'));
    assert.equal(utf8.payload.toString(), '{"p":"é€"}', 'UTF-8 text');
  });

  it('sends messages the server reads, and reads its messages whole: small, large, in fragments', async () => {
    const got = await connect(url);
    const seen = [];
    server.on('message', (m) => seen.push(m.toString()));
    got.socket.send('{"id":1}');
    got.socket.send('y'.repeat(70000));
    await until(() => seen.length === 2);
    assert.deepEqual(seen, ['{"id":1}', 'y'.repeat(70000)]);
    const large = JSON.stringify({ result: 'z'.repeat(200000) }); // many reads, a 64-bit length
    server.send(large);
    const pause = () => new Promise((r) => setTimeout(r, 30)); // each fragment in a read of its own
    await until(() => got.messages.length === 1);
    server.send('{"a":', { fin: false });
    await pause();
    server.send('[1,2]', { fin: false });
    await pause();
    server.send('}', { fin: true });
    server.send(Buffer.from('{"binary":true}'), { binary: true });
    await until(() => got.messages.length === 3);
    assert.deepEqual(got.messages, [large, '{"a":[1,2]}', '{"binary":true}']);
    assert.equal(got.close, null);
  });

  it('writes the messages sent in one turn of the event loop with one write, in their order', async () => {
    const { got, seen, writes } = await watched();
    for (let i = 1; i <= 5; i++) got.socket.send(`{"id":${i}}`);
    assert.equal(writes.length, 0, 'nothing written before the turn ends');
    await until(() => seen.length === 5);
    assert.deepEqual(
      seen,
      [1, 2, 3, 4, 5].map((i) => `{"id":${i}}`),
    );
    assert.equal(writes.length, 1, 'one write for the five');
    got.socket.send('{"id":6}');
    await until(() => seen.length === 6);
    assert.equal(writes.length, 2, 'a later turn: a write of its own');
  });

  it('sendWithId: prefix, the id in decimal and suffix as one message, in order with send(), one write past the first buffer', async () => {
    const { got, seen, writes } = await watched();
    const prefix = Buffer.from('{"jsonrpc":"2.0","id":');
    const suffix = Buffer.from(',"method":"m","params":["é€"]}');
    const ids = [1, 9, 10, 99, 100, 12345, 2 ** 40, Number.MAX_SAFE_INTEGER];
    for (const id of ids) got.socket.sendWithId(prefix, id, suffix);
    got.socket.send('{"between":true}');
    const big = Buffer.from(`,"pad":"${'p'.repeat(200)}"}`); // 300 of them: beyond the first outbox buffer
    for (let id = 1; id <= 300; id++) got.socket.sendWithId(prefix, id, big);
    await until(() => seen.length === ids.length + 301);
    assert.deepEqual(seen.slice(0, ids.length + 1), [
      ...ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"m","params":["é€"]}`),
      '{"between":true}',
    ]);
    assert.deepEqual(
      seen.slice(ids.length + 1).map((m) => JSON.parse(m).id),
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    assert.equal(writes.length, 1, 'the whole turn in one write');
    assert.ok(writes[0] > 300 * 200, `${writes[0]} bytes`);
  });

  it("answers the server's ping with a pong of the same payload", async () => {
    await connect(url);
    const pongs = [];
    server.on('pong', (p) => pongs.push(p.toString()));
    server.ping('are you there');
    await until(() => pongs.length === 1);
    assert.equal(pongs[0], 'are you there');
  });

  it("closes with the server's code after answering its close frame", async () => {
    const got = await connect(url);
    const closed = new Promise((r) => server.once('close', (code) => r(code)));
    server.close(4001, 'bye');
    await until(() => got.close !== null);
    assert.deepEqual(got.close, { code: 4001, error: null });
    assert.equal(await closed, 4001, 'the server got the close frame back');
  });

  it('refuses a handshake answered without the right Sec-WebSocket-Accept, or not with 101', async () => {
    for (const answer of [
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bad\r\n\r\n',
      'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n',
    ]) {
      const fake = net.createServer((s) => s.once('data', () => s.write(answer)));
      await new Promise((r) => fake.listen(0, '127.0.0.1', r));
      const got = await connect(`ws://127.0.0.1:${fake.address().port}`);
      await until(() => got.close !== null);
      assert.equal(got.close.code, 1006);
      assert.match(got.close.error.message, /Sec-WebSocket-Accept|refused: HTTP\/1.1 404/);
      fake.close();
    }
  });

  it('a handshake never answered ends after its time-out', async () => {
    // it keeps what it accepts, to destroy it at the end: a socket nobody reads never sees its peer's close, and a CI
    // run's mocha waited on one for good
    const accepted = [];
    const silent = net.createServer((sock) => accepted.push(sock));
    await new Promise((r) => silent.listen(0, '127.0.0.1', r));
    const t0 = Date.now();
    const got = await new Promise((resolve) => {
      const g = {};
      g.socket = new WsSocket(`ws://127.0.0.1:${silent.address().port}`, {
        handshakeTimeoutMs: 200,
        onOpen: () => resolve(g),
        onMessage: () => {},
        onClose: (code, error) => resolve({ code, error }),
      });
    });
    assert.match(got.error.message, /handshake timed out/);
    assert.ok(Date.now() - t0 < 2000);
    for (const sock of accepted) sock.destroy();
    silent.close();
  });
});
