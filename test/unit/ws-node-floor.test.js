'use strict';
// npm run bench's ws-node-floor (scripts/lib/ws-node-floor.js): a closed loop of DEPTH requests in flight on each
// connection, also when the server writes an answer in fragments (geth does for an answer over 1 KiB) and pings.

const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { WebSocketServer } = require('ws');

const FLOOR = path.join(__dirname, '..', '..', 'scripts', 'lib', 'ws-node-floor.js');
const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

describe('ws-node-floor: its closed loop', () => {
  it('keeps DEPTH requests in flight on each connection: an answer in fragments is one, a ping none', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => wss.once('listening', r));
    const conns = [];
    wss.on('connection', (sock) => {
      const c = { received: 0, answered: 0, maxInFlight: 0 };
      conns.push(c);
      sock.on('message', () => {
        c.received++;
        c.maxInFlight = Math.max(c.maxInFlight, c.received - c.answered);
        setImmediate(() => {
          if (c.received % 10 === 0) sock.ping();
          sock.send('{"jsonrpc":"2.0","id":1,', { fin: false });
          sock.send('"result":"0x1"}', { fin: true }, () => c.answered++);
        });
      });
    });
    const { port } = wss.address();
    const floor = spawn(process.execPath, [FLOOR, '127.0.0.1', String(port), '/', '2', '3', '1', BODY]);
    let out = '';
    floor.stdout.on('data', (d) => (out += d));
    const code = await new Promise((r) => floor.once('exit', r));
    for (const s of wss.clients) s.terminate();
    await new Promise((r) => wss.close(r));

    assert.equal(code, 0);
    assert.equal(conns.length, 2);
    for (const c of conns) {
      assert.ok(c.received > 100, `${c.received} requests on a connection`);
      assert.ok(c.maxInFlight <= 3, `at most DEPTH=3 in flight, saw ${c.maxInFlight}`);
    }
    const answered = conns.reduce((n, c) => n + c.answered, 0);
    const counted = Number(out.trim());
    assert.ok(counted <= answered && counted >= answered - 6, `counted ${counted} of ${answered} answers`);
  });
});
