#!/usr/bin/env node
'use strict';
// http-node-floor: wrk's loop written in Node.js, the least a Node.js HTTP/1.1
// client can spend per request. npm run bench runs it beside wrk and the lean
// engine against the static responder (bench-static.js), to split the lean
// engine's distance from wrk into what Node.js itself costs (event loop,
// socket reads and writes) and what the engine adds, as ws-node-floor.js does
// over WebSocket.
//
//   node http-node-floor.js HOST PORT PATH CONNECTIONS SECONDS BODY
//
// As wrk -c CONNECTIONS: one request in flight on each keep-alive connection,
// BODY posted as one prepared buffer, the next request written as each answer
// is whole (answers told apart by their Content-Length only; no chunked
// bodies). No timeouts, no status check, no latency kept: not a client to use,
// a floor to measure against. Prints the answers counted when SECONDS are up.

const net = require('node:net');
const { runFloor } = require('./floor-harness');

const [host, port, urlPath, connections, seconds, body] = process.argv.slice(2);
const request = Buffer.from(
  `POST ${urlPath} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
);
const HEAD_END = Buffer.from('\r\n\r\n');
const LENGTH_KEYS = ['\r\ncontent-length:', '\r\nContent-Length:'].map((k) => Buffer.from(k));

/** The body length the head in b[from, end) announces (0 when it names none). */
function contentLength(b, from, end) {
  for (const key of LENGTH_KEYS) {
    const i = b.indexOf(key, from);
    if (i < 0 || i > end) continue;
    let n = 0;
    for (let j = i + key.length; j < end; j++) {
      const c = b[j];
      if (c >= 48 && c <= 57) n = n * 10 + c - 48;
      else if (c !== 32) break;
    }
    return n;
  }
  return 0;
}

/** One keep-alive connection: a request, then one request per whole answer. */
function open(counter, fail) {
  let rest = null; // the bytes of an answer not yet whole
  const socket = net.connect({
    host,
    port: Number(port),
    onread: {
      buffer: Buffer.allocUnsafe(1 << 16),
      callback(n, buf) {
        let b = buf.subarray(0, n);
        if (rest) b = Buffer.concat([rest, b]);
        rest = null;
        let at = 0;
        let got = 0;
        for (;;) {
          const end = b.indexOf(HEAD_END, at);
          if (end < 0) break;
          const next = end + 4 + contentLength(b, at, end);
          if (next > b.length) break;
          at = next;
          got++;
        }
        if (at < b.length) rest = Buffer.from(b.subarray(at));
        counter.answers += got;
        for (let k = 0; k < got; k++) socket.write(request);
      },
    },
  });
  socket.setNoDelay(true);
  socket.on('connect', () => socket.write(request));
  socket.on('error', fail);
}

runFloor('http-node-floor', { connections, seconds, open });
