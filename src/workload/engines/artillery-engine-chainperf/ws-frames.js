'use strict';
// The frames a WebSocket client sends (RFC 6455): FIN set, masked with a key
// from a pool of random bytes, written into a buffer the caller gives
// (frameHead, mask) or as a buffer of their own (clientFrame).

const crypto = require('node:crypto');

const OP = { CONT: 0x0, TEXT: 0x1, BINARY: 0x2, CLOSE: 0x8, PING: 0x9, PONG: 0xa };

/** Masking keys: 4 random bytes each, drawn from a pool refilled when used up. */
const maskPool = { bytes: Buffer.alloc(8192), at: 8192 };
function maskKey() {
  if (maskPool.at + 4 > maskPool.bytes.length) {
    crypto.randomFillSync(maskPool.bytes);
    maskPool.at = 0;
  }
  maskPool.at += 4;
  return maskPool.at - 4;
}

/** Writes a masked client frame's head (FIN set) for a payload of len bytes at buf[at]; returns where it starts. */
function frameHead(buf, at, opcode, len) {
  buf[at] = 0x80 | opcode;
  let p = at + 2;
  if (len < 126) buf[at + 1] = 0x80 | len;
  else if (len < 65536) {
    buf[at + 1] = 0x80 | 126;
    buf.writeUInt16BE(len, at + 2);
    p += 2;
  } else {
    buf[at + 1] = 0x80 | 127;
    buf.writeUInt32BE(Math.floor(len / 2 ** 32), at + 2);
    buf.writeUInt32BE(len >>> 0, at + 6);
    p += 8;
  }
  const k = maskKey();
  maskPool.bytes.copy(buf, p, k, k + 4);
  return p + 4;
}

/** Masks the len bytes of payload at buf[at] with the 4-byte key just before them. */
function mask(buf, at, len) {
  const m0 = buf[at - 4];
  const m1 = buf[at - 3];
  const m2 = buf[at - 2];
  const m3 = buf[at - 1];
  let i = at;
  for (const end = at + len - 3; i < end; i += 4) {
    buf[i] ^= m0;
    buf[i + 1] ^= m1;
    buf[i + 2] ^= m2;
    buf[i + 3] ^= m3;
  }
  for (let j = i - at; i < at + len; i++, j++) buf[i] ^= buf[at - 4 + (j & 3)];
}

/** The most a frame's head takes: 2 bytes, 8 of extended length, 4 of masking key. */
const MAX_HEAD_BYTES = 14;

/** A client frame (FIN set) of opcode with `payload` (a Buffer, or a string as UTF-8), masked, as one buffer. */
function clientFrame(opcode, payload) {
  const len = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const frame = Buffer.allocUnsafe(MAX_HEAD_BYTES + len);
  const at = frameHead(frame, 0, opcode, len);
  if (typeof payload === 'string') frame.write(payload, at, len, 'utf8');
  else payload.copy(frame, at);
  mask(frame, at, len);
  return frame.subarray(0, at + len);
}

/** Decimal digits of a non-negative integer. */
function digitsOf(n) {
  let d = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) d++;
  return d;
}

module.exports = { OP, MAX_HEAD_BYTES, frameHead, mask, clientFrame, digitsOf };
