'use strict';
// The lean engine's HTTP path: HTTP/1.1 keep-alive connections on plain
// sockets, one request in flight on each, the whole request (head and body)
// prepared ahead as one buffer and written with one call, responses read
// into one buffer per pool (net's onread) rather than a new one per read.
//
// A general HTTP client (undici) spends most of a JSON-RPC request's cost on
// what these requests never need: header objects and their validation,
// per-request state machines, stream plumbing. Here a response is read just
// far enough to know its status, its length (Content-Length, or chunked
// transfer coding) and whether the server will close the connection; the body
// is handed back whole (with its Content-Encoding, for ethers' transport,
// src/workload/ethers-http.js, which asks for gzip). A request unanswered after timeout_ms fails as a
// timeout and its connection is closed (a sweep checks, rather than one timer
// per request). A connection the server closed is dropped and a new one is
// opened for the next request.

const net = require('node:net');
const tls = require('node:tls');
const { timeoutSweep } = require('./sweep');
const { splitAuth } = require('../../../util/url-auth');

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const TIMEOUT = Object.freeze({ kind: 'timeout', message: 'timeout' });
const MAX_HEAD = 64 * 1024;

/** The bytes of one POST of `body` (a string or Buffer) to url: head and body in one buffer. */
function prepareRequest(url, body) {
  const u = new URL(url);
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const auth = splitAuth(url).headers.authorization; // basic auth from the URL
  const head = `POST ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n${auth ? `Authorization: ${auth}\r\n` : ''}Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

/**
 * Reads one HTTP/1.1 response at a time from the bytes a connection
 * receives. push(chunk) returns a completed response {status, body, close} or
 * null while more bytes are needed; an error is thrown for bytes that are not
 * an HTTP response.
 */
class ResponseReader {
  constructor() {
    this.reset();
  }

  reset() {
    this.buf = null; // bytes received and not yet used
    this.status = 0;
    this.length = -1; // body length when Content-Length gave it
    this.chunked = false;
    this.close = false;
    this.encoding = null; // Content-Encoding, for a caller that asked for one (ethers' gzip)
    this.bodyAt = -1; // offset of the body in buf once the head is read
    this.parts = null; // chunked: the body's pieces so far
    this.pos = 0; // chunked: where the next chunk-size line starts
  }

  /**
   * chunk borrowed: its memory is overwritten by the next read, so what is kept past this call is copied (the bytes of
   * a response not yet complete; the body too, unless lend: the caller reads it before the next read).
   */
  push(chunk, borrowed = false, lend = false) {
    this.buf = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    const res = this.bodyAt < 0 && !this.readHead() ? null : this.chunked ? this.readChunked() : this.readSized();
    if (!borrowed) return res;
    if (!res) {
      if (this.buf === chunk) this.buf = Buffer.from(chunk);
      if (this.parts) this.parts = this.parts.map((p) => (p.buffer === chunk.buffer ? Buffer.from(p) : p));
    } else if (!lend && res.body.buffer === chunk.buffer) res.body = Buffer.from(res.body);
    return res;
  }

  readHead() {
    const end = this.buf.indexOf(HEAD_END);
    if (end < 0) {
      if (this.buf.length > MAX_HEAD) throw new Error('response head larger than 64 KiB');
      return false;
    }
    const head = this.buf.latin1Slice(0, end).toLowerCase();
    if (!head.startsWith('http/1.')) throw new Error(`not an HTTP/1.x response: ${JSON.stringify(head.slice(0, 40))}`);
    this.status = Number(head.slice(9, 12));
    if (!(this.status >= 100 && this.status <= 599))
      throw new Error(`bad HTTP status line: ${JSON.stringify(head.split('\r\n')[0])}`);
    this.close = head.startsWith('http/1.0')
      ? !/\r\nconnection:[ \t]*keep-alive/.test(head)
      : /\r\nconnection:[ \t]*close/.test(head);
    const ce = /\r\ncontent-encoding:[ \t]*([^\r]*)/.exec(head);
    if (ce) this.encoding = ce[1].trim();
    const te = /\r\ntransfer-encoding:([^\r]*)/.exec(head);
    const cl = /\r\ncontent-length:[ \t]*(\d+)/.exec(head);
    if (te && /chunked/.test(te[1])) this.chunked = true;
    else if (cl) this.length = Number(cl[1]);
    else if (this.status === 204 || this.status === 304 || this.status < 200) this.length = 0;
    else throw new Error('response has neither Content-Length nor chunked transfer coding');
    this.bodyAt = end + HEAD_END.length;
    this.pos = this.bodyAt;
    return true;
  }

  readSized() {
    const end = this.bodyAt + this.length;
    if (this.buf.length < end) return null;
    if (this.buf.length > end) throw new Error('bytes after the response (the server answered a request not sent)');
    const res = {
      status: this.status,
      body: this.buf.subarray(this.bodyAt, end),
      close: this.close,
      encoding: this.encoding,
    };
    this.reset();
    return res;
  }

  readChunked() {
    this.parts = this.parts || [];
    for (;;) {
      const eol = this.buf.indexOf(CRLF, this.pos);
      if (eol < 0) return null;
      // chunk extensions after ';' are ignored by parseInt
      const size = parseInt(this.buf.latin1Slice(this.pos, eol), 16);
      if (!Number.isFinite(size)) throw new Error('bad chunk size in a chunked response');
      if (size === 0) {
        // the last chunk, then optional trailers, then an empty line
        const end = this.buf.indexOf(HEAD_END, eol);
        if (end < 0) return null;
        const res = {
          status: this.status,
          body: this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts),
          close: this.close,
          encoding: this.encoding,
        };
        this.reset();
        return res;
      }
      const dataEnd = eol + 2 + size;
      if (this.buf.length < dataEnd + 2) return null;
      this.parts.push(this.buf.subarray(eol + 2, dataEnd));
      this.pos = dataEnd + 2;
    }
  }
}

/** One keep-alive connection and the request in flight on it, if any. */
class Connection {
  constructor(pool) {
    this.pool = pool;
    this.reader = new ResponseReader();
    this.current = null; // {done, t0}
    this.dead = false;
    const { hostname, port, protocol } = pool.url;
    const host = hostname.replace(/^\[|\]$/g, '');
    if (protocol === 'https:') {
      this.socket = tls.connect({ host, port: Number(port) || 443, servername: net.isIP(host) ? undefined : host });
      this.socket.on('data', (chunk) => this.onData(chunk, false));
    } else {
      // Read into the pool's one buffer, without a stream's 'data' events and a new Buffer for every read
      const onread = { buffer: pool.readBuffer, callback: (n, buf) => void this.onData(buf.subarray(0, n), true) };
      this.socket = net.connect({ host, port: Number(port) || 80, onread });
    }
    this.socket.setNoDelay(true);
    this.socket.on('error', (err) =>
      this.fail({ kind: 'other', message: String(err.code || err.message).slice(0, 200) }),
    );
    this.socket.on('close', () => this.fail({ kind: 'other', message: 'connection closed by the server' }));
  }

  send(bytes, t0, done) {
    this.current = { done, t0 };
    this.socket.write(bytes);
  }

  /** chunk: the bytes read; borrowed when they are in the pool's read buffer, which the next read overwrites. */
  onData(chunk, borrowed) {
    if (!this.current) return this.fail({ kind: 'other', message: 'unexpected bytes from the server' });
    let res;
    try {
      res = this.reader.push(chunk, borrowed, this.pool.lendBody);
    } catch (err) {
      return this.fail({ kind: 'other', message: err.message });
    }
    if (!res) return undefined;
    const { done } = this.current;
    this.current = null;
    if (res.close) this.destroy();
    else this.pool.release(this);
    return done(res);
  }

  /** Ends the connection; the request in flight, if any, resolves with `failure`. */
  fail(failure) {
    const cur = this.current;
    this.current = null;
    this.destroy();
    if (cur) cur.done({ failure });
  }

  destroy() {
    if (this.dead) return;
    this.dead = true;
    this.pool.forget(this);
    this.socket.destroy();
  }
}

/**
 * A worker's HTTP connections: as many as there are requests in flight, kept
 * open between requests. request(bytes, t0, done) calls done with {status,
 * body} or {failure}, once; without done it returns a promise of the same,
 * which never rejects.
 */
class HttpPool {
  /**
   * lendBody: a response's body may be the read buffer itself, valid until the next read (the caller reads it at once:
   * in its callback, or in the continuation of its await); otherwise it is copied.
   */
  constructor(url, { timeoutMs, now, lendBody = false }) {
    this.url = new URL(url);
    this.readBuffer = Buffer.allocUnsafe(64 * 1024);
    this.lendBody = lendBody;
    this.idle = [];
    this.all = new Set();
    this.closed = false;
    this.sweep = timeoutSweep(timeoutMs, now, (before) => {
      for (const c of this.all) if (c.current && c.current.t0 < before) c.fail(TIMEOUT);
    });
  }

  request(bytes, t0, done) {
    if (!done) return new Promise((resolve) => this.request(bytes, t0, resolve));
    // never at once: a closed loop would call again and again without a turn of the event loop
    if (this.closed) return void setImmediate(done, { failure: { kind: 'other', message: 'HTTP pool closed' } });
    let c = this.idle.pop();
    while (c && c.dead) c = this.idle.pop();
    if (!c) {
      c = new Connection(this);
      this.all.add(c);
    }
    return c.send(bytes, t0, done);
  }

  release(c) {
    if (!c.dead && !this.closed) this.idle.push(c);
  }

  forget(c) {
    this.all.delete(c);
  }

  get size() {
    return this.all.size;
  }

  close() {
    this.closed = true;
    clearInterval(this.sweep);
    for (const c of [...this.all]) c.fail({ kind: 'other', message: 'HTTP pool closed' });
    this.idle = [];
  }
}

module.exports = { HttpPool, ResponseReader, prepareRequest, TIMEOUT };
