'use strict';
// The lean engine's WebSocket client connection (RFC 6455), on a plain socket.
//
// A general WebSocket library runs every message through streams, events and
// per-frame buffers; a JSON-RPC load generator needs much less: text frames
// out (masked, as a client must; those of one turn of the event loop written
// with one call), whole messages in, handed over from the read itself. What
// is done here: the opening handshake (with Sec-WebSocket-Accept checked),
// masked text frames with masking keys from a pool of random bytes, messages
// in text or binary frames (fragmented too), a pong for every ping, and the
// closing handshake either way. Not done: extensions (permessage-deflate is
// never offered) and subprotocols. Over ws:// the bytes are read into one
// buffer per socket (net's onread); a message handed to onMessage is valid
// only during that call (the engine reads its id and outcome at once).

const crypto = require('node:crypto');
const net = require('node:net');
const tls = require('node:tls');

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_HEAD = 16 * 1024;
const MAX_MESSAGE = 256 * 1024 * 1024;
const { OP, MAX_HEAD_BYTES, frameHead, mask, clientFrame, digitsOf } = require('./ws-frames');

// The outbox's first buffer: small enough to come from Node.js's pool of small buffers (under 4 KiB), so that a turn
// of a few requests allocates no memory of its own; a larger turn doubles it.
const OUTBOX_BYTES = 2048;

/**
 * Room for n more bytes at the end of ws's outbox: one buffer that the frames sent in this turn of the event loop are
 * written into, and written to the socket after it (flushOutbox).
 */
function reserve(ws, n) {
  let box = ws.outbox;
  if (box === null) {
    box = ws.outbox = { buf: Buffer.allocUnsafe(Math.max(OUTBOX_BYTES, n)), len: 0 };
    process.nextTick(flushOutbox, ws);
  } else if (box.len + n > box.buf.length) {
    const bigger = Buffer.allocUnsafe(Math.max(2 * box.buf.length, box.len + n));
    box.buf.copy(bigger, 0, 0, box.len);
    box.buf = bigger;
  }
  return box;
}

/** Writes the frames a socket's sends gathered in this turn of the event loop, with one call. */
function flushOutbox(ws) {
  const box = ws.outbox;
  ws.outbox = null;
  if (!ws.open || !box.len) return;
  ws.socket.write(box.buf.subarray(0, box.len));
}

/** The opening handshake's request for URL u (a URL object) with key, and headers {name: value} added. */
function handshakeRequest(u, key, headers) {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return (
    `GET ${u.pathname || '/'}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`
  );
}

/** Sec-WebSocket-Accept for a key. */
const acceptFor = (key) =>
  crypto
    .createHash('sha1')
    .update(key + GUID)
    .digest('base64');

/**
 * One client connection. Handlers: onOpen(), onMessage(buf) (a whole message; buf valid during the call only),
 * onClose(code, error|null), called once. send(text) sends one text message; terminate() drops the connection.
 */
class WsSocket {
  /**
   * @param {string} url ws:// or wss://
   * @param {{headers?: Object<string, string>, handshakeTimeoutMs: number, onOpen: Function,
   *   onMessage: (buf: Buffer) => void, onClose: (code: number, error: Error|null) => void}} o
   */
  constructor(url, { headers = {}, handshakeTimeoutMs, onOpen, onMessage, onClose }) {
    const u = new URL(url);
    this.handlers = { onOpen, onMessage, onClose };
    this.open = false;
    this.closed = false;
    this.error = null;
    this.closeCode = 1006; // abnormal closure, unless a close frame says otherwise
    this.buf = null; // bytes received and not yet used (owned)
    this.parts = null; // a fragmented message's pieces so far
    this.outbox = null; // {buf, len}: the frames sent in this turn of the event loop, written after it (reserve)
    this.key = crypto.randomBytes(16).toString('base64');
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const secure = u.protocol === 'wss:';
    const port = Number(u.port) || (secure ? 443 : 80);
    if (secure) {
      this.socket = tls.connect({ host, port, servername: net.isIP(host) ? undefined : host });
      this.socket.on('data', (chunk) => this.onBytes(chunk, false));
    } else {
      const onread = {
        buffer: Buffer.allocUnsafe(64 * 1024),
        callback: (n, b) => void this.onBytes(b.subarray(0, n), true),
      };
      this.socket = net.connect({ host, port, onread });
    }
    this.socket.setNoDelay(true);
    this.socket.once(secure ? 'secureConnect' : 'connect', () => this.handshake(u, headers));
    this.socket.on('error', (err) => {
      if (!this.error) this.error = err;
    });
    this.socket.on('close', () => this.finish());
    this.timer = setTimeout(() => this.fail(new Error('WebSocket handshake timed out')), handshakeTimeoutMs);
    this.timer.unref();
  }

  handshake(u, headers) {
    this.socket.write(handshakeRequest(u, this.key, headers));
  }

  /**
   * Sends one text message. The frames sent in one turn of the event loop (the requests that answers read together
   * set off) go out in one write, after it: one system call, not one per request.
   */
  send(text) {
    if (!this.open) return;
    const len = Buffer.byteLength(text);
    const box = reserve(this, MAX_HEAD_BYTES + len);
    const at = frameHead(box.buf, box.len, OP.TEXT, len);
    box.buf.write(text, at, len, 'utf8');
    mask(box.buf, at, len);
    box.len = at + len;
  }

  /**
   * Sends the text message prefix + id (decimal) + suffix, prefix and suffix as UTF-8 bytes: a JSON-RPC request whose
   * body was prepared once, less its id, written into the frame without building a string for it.
   */
  sendWithId(prefix, id, suffix) {
    if (!this.open) return;
    const digits = digitsOf(id);
    const len = prefix.length + digits + suffix.length;
    const box = reserve(this, MAX_HEAD_BYTES + len);
    const buf = box.buf;
    const at = frameHead(buf, box.len, OP.TEXT, len);
    prefix.copy(buf, at);
    let i = at + prefix.length + digits;
    for (let x = id; i > at + prefix.length; x = Math.floor(x / 10)) buf[--i] = 48 + (x % 10);
    suffix.copy(buf, at + prefix.length + digits);
    mask(buf, at, len);
    box.len = at + len;
  }

  terminate() {
    this.socket.destroy();
  }

  /** Ends the connection with an error (a protocol error, a failed handshake). */
  fail(err) {
    if (!this.error) this.error = err;
    this.socket.destroy();
  }

  finish() {
    if (this.closed) return;
    this.closed = true;
    this.open = false;
    clearTimeout(this.timer);
    this.handlers.onClose(this.closeCode, this.error);
  }

  /** bytes: what one read gave; lent when they are the socket's read buffer, which the next read overwrites. */
  onBytes(bytes, lent) {
    const borrowed = lent && this.buf === null; // what is kept past this read is then copied
    let buf = this.buf === null ? bytes : Buffer.concat([this.buf, bytes]);
    this.buf = null;
    const keep = (b) => (borrowed ? Buffer.from(b) : b);
    try {
      if (!this.open) {
        const end = buf.indexOf(HEAD_END);
        if (end < 0) {
          if (buf.length > MAX_HEAD) throw new Error('WebSocket handshake answer larger than 16 KiB');
          this.buf = keep(buf);
          return;
        }
        this.accept(buf.latin1Slice(0, end));
        buf = buf.subarray(end + HEAD_END.length);
      }
      const used = this.frames(buf);
      if (used < buf.length && !this.closed) this.buf = keep(buf.subarray(used)); // a frame not yet whole
    } catch (err) {
      this.fail(err);
    }
  }

  /** Checks the server's answer to the opening handshake; the connection is then open. */
  accept(head) {
    const status = head.slice(0, head.indexOf('\r\n'));
    if (!/^HTTP\/1\.1 101/.test(status))
      throw new Error(`WebSocket handshake refused: ${status.slice(0, 120) || 'no status line'}`);
    const m = /\r\nsec-websocket-accept:[ \t]*([^\r]*)/i.exec(head);
    if (!m || m[1].trim() !== acceptFor(this.key)) throw new Error('WebSocket handshake: wrong Sec-WebSocket-Accept');
    if (/\r\nsec-websocket-extensions:/i.test(head)) throw new Error('WebSocket handshake: an extension not asked for');
    clearTimeout(this.timer);
    this.open = true;
    this.handlers.onOpen();
  }

  /** Reads every whole frame in buf; returns how many bytes they took. */
  frames(buf) {
    let at = 0;
    while (this.open && buf.length - at >= 2) {
      const b0 = buf[at];
      const b1 = buf[at + 1];
      if (b1 & 0x80) throw new Error('WebSocket: a masked frame from the server');
      if (b0 & 0x70) throw new Error('WebSocket: reserved bits set (no extension was agreed)');
      let len = b1 & 0x7f;
      let head = 2;
      if (len === 126) {
        if (buf.length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        head = 4;
      } else if (len === 127) {
        if (buf.length - at < 10) break;
        len = buf.readUInt32BE(at + 2) * 2 ** 32 + buf.readUInt32BE(at + 6);
        head = 10;
      }
      if (len > MAX_MESSAGE) throw new Error(`WebSocket: a frame of ${len} bytes`);
      if (buf.length - at < head + len) break;
      this.frame(b0 & 0x80, b0 & 0x0f, buf.subarray(at + head, at + head + len));
      at += head + len;
    }
    return at;
  }

  frame(fin, opcode, payload) {
    if (opcode === OP.TEXT || opcode === OP.BINARY || opcode === OP.CONT) {
      if ((opcode === OP.CONT) !== (this.parts !== null))
        throw new Error('WebSocket: a continuation frame out of place');
      if (fin && this.parts === null) return this.handlers.onMessage(payload);
      this.parts = [...(this.parts || []), Buffer.from(payload)];
      if (!fin) return undefined;
      const whole = Buffer.concat(this.parts);
      this.parts = null;
      return this.handlers.onMessage(whole);
    }
    if (opcode === OP.PING) return this.socket.write(clientFrame(OP.PONG, payload));
    if (opcode === OP.PONG) return undefined;
    if (opcode === OP.CLOSE) {
      this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      this.open = false;
      this.socket.end(clientFrame(OP.CLOSE, payload.subarray(0, 2))); // the closing handshake's answer
      return undefined;
    }
    throw new Error(`WebSocket: unknown opcode ${opcode}`);
  }
}

module.exports = { WsSocket, clientFrame, acceptFor, handshakeRequest };
