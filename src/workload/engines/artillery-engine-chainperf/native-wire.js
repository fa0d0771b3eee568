'use strict';
// What the lean engine gives the native sender (native-sender.c): its
// command line for the workload's URL (for WebSocket, the upgrade request's
// bytes and the accept key it must answer) and each window's ring of
// requests in the sender's format.

const crypto = require('node:crypto');
const { splitAuth } = require('../../../util/url-auth');
const { handshakeRequest, acceptFor } = require('./ws-socket');

/** The sender's arguments for the workload's URL (plain http:// or ws:// only: the sender speaks no TLS). */
function senderArgs(rpcUrl, { connections, timeoutMs }) {
  const u = new URL(rpcUrl);
  if (!['http:', 'ws:'].includes(u.protocol))
    throw new Error(`LEAN_SENDER=native sends over plain http:// or ws://, not ${u.protocol}// (use LEAN_SENDER=node)`);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = u.port || '80';
  if (u.protocol === 'http:') return ['http', host, port, String(timeoutMs)];
  const key = crypto.randomBytes(16).toString('base64');
  const handshake = handshakeRequest(u, key, splitAuth(rpcUrl).headers);
  const accept = acceptFor(key);
  return ['ws', host, port, String(timeoutMs), String(connections), handshake, accept];
}

/** A ring's bytes for the sender: u32 count, then each request's u32 length and bytes (HTTP: whole; ws: its tail). */
function ringBytes(ring) {
  const parts = [Buffer.alloc(4)];
  parts[0].writeUInt32LE(ring.length, 0);
  for (const r of ring) {
    const bytes = r.bytes || r.tail;
    const len = Buffer.alloc(4);
    len.writeUInt32LE(bytes.length, 0);
    parts.push(len, bytes);
  }
  return Buffer.concat(parts);
}

module.exports = { senderArgs, ringBytes };
