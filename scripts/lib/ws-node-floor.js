#!/usr/bin/env node
'use strict';
// ws-node-floor: ws-reference.c's loop written in Node.js, the least a
// Node.js WebSocket client can spend per request. npm run bench runs it
// beside the lean engine to split the engine's cost into what Node.js itself
// costs (event loop, socket reads and writes) and what the engine adds
// (requests prepared and matched by id, answers checked, latencies recorded).
//
//   node ws-node-floor.js HOST PORT PATH CONNECTIONS DEPTH SECONDS BODY
//
// As ws-reference: CONNECTIONS WebSockets, DEPTH requests in flight on each,
// BODY as one masked text frame, the next request sent as each answer arrives
// (the frames one read sets off written with one call), answers counted by
// their frame headers only (final data frames: an answer in fragments is
// one). No promises, no ids, no timeouts: not a client to use, a floor to
// measure against.

const crypto = require('node:crypto');
const net = require('node:net');
const { runFloor } = require('./floor-harness');

const [host, port, wsPath, connections, depth, seconds, body] = process.argv.slice(2);
const payload = Buffer.from(body);
if (payload.length >= 126) throw new Error('BODY must be under 126 bytes (one short frame)');

const pool = { bytes: Buffer.alloc(8192), at: 8192 };
/** n masked frames of BODY, each with its own key from the pool, in one buffer. */
function frames(n) {
  const size = 6 + payload.length;
  const out = Buffer.allocUnsafe(n * size);
  for (let f = 0; f < n; f++) {
    if (pool.at + 4 > pool.bytes.length) {
      crypto.randomFillSync(pool.bytes);
      pool.at = 0;
    }
    const at = f * size;
    out[at] = 0x81;
    out[at + 1] = 0x80 | payload.length;
    pool.bytes.copy(out, at + 2, pool.at, pool.at + 4);
    for (let i = 0; i < payload.length; i++) out[at + 6 + i] = payload[i] ^ pool.bytes[pool.at + (i & 3)];
    pool.at += 4;
  }
  return out;
}

/** One connection: the handshake, then DEPTH frames, then one frame per answer. */
function open(counter, fail) {
  let rest = null; // bytes of a frame not yet whole
  let upgraded = false;
  const socket = net.connect({
    host,
    port: Number(port),
    onread: {
      buffer: Buffer.allocUnsafe(1 << 20),
      callback(n, buf) {
        let b = buf.subarray(0, n);
        if (rest) b = Buffer.concat([rest, b]);
        rest = null;
        let at = 0;
        if (!upgraded) {
          const end = b.indexOf('\r\n\r\n');
          if (end < 0) return void (rest = Buffer.from(b));
          if (!b.latin1Slice(0, 12).startsWith('HTTP/1.1 101')) throw new Error('handshake refused');
          upgraded = true;
          at = end + 4;
          socket.write(frames(Number(depth)));
        }
        let got = 0;
        while (b.length - at >= 2) {
          let len = b[at + 1] & 0x7f;
          let head = 2;
          if (len === 126) {
            if (b.length - at < 4) break;
            len = b.readUInt16BE(at + 2);
            head = 4;
          } else if (len === 127) {
            if (b.length - at < 10) break;
            len = b.readUInt32BE(at + 6);
            head = 10;
          }
          if (b.length - at < head + len) break;
          // an answer is a final data frame: geth writes an answer longer than its write buffer (1 KiB) as a text
          // frame and continuations, and only the last has FIN; control frames (a ping) are no answers either
          if (b[at] & 0x80 && (b[at] & 0x0f) <= 2) got++;
          at += head + len;
        }
        if (at < b.length) rest = Buffer.from(b.subarray(at));
        counter.answers += got;
        if (got) socket.write(frames(got));
      },
    },
  });
  socket.setNoDelay(true);
  socket.on('connect', () => {
    const key = crypto.randomBytes(16).toString('base64');
    socket.write(
      `GET ${wsPath} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
  socket.on('error', fail);
}

runFloor('ws-node-floor', { connections, seconds, open });
