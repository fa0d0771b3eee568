'use strict';
// The lean engine's WebSocket path (TRANSPORT=ws): a few persistent
// connections per artillery worker (ws-socket.js), several requests in flight
// on each, every answer matched to its request by JSON-RPC id. A closed-loop
// user keeps to one connection (its lane), so that the answers one read brings
// set off requests on that connection alone, written with one call.
//
// Bodies are prepared ahead like the HTTP ones, less their id: a request is
// '{"jsonrpc":"2.0","id":' + id + tail, with ids counted per connection,
// written into its frame as bytes (the tail is encoded once). An
// answer is not decoded when it starts the way geth writes it,
// '{"jsonrpc":"2.0","id":<digits>,"result":' (the id is read from its bytes);
// one with ',"error":' after the id, or in any other shape, is parsed whole.
// A request unanswered after timeout_ms fails as a timeout (a sweep checks,
// rather than one timer per request); a connection that closes fails the
// requests in flight on it and is opened again after a pause. A request's
// outcome goes to a callback (no promise per request on the engine's path),
// or to a promise when none is given.

const { WsSocket } = require('./ws-socket');
const { timeoutSweep } = require('./sweep');
const { splitAuth } = require('../../../util/url-auth');

const HEAD = '{"jsonrpc":"2.0","id":';
const PREFIX = Buffer.from(HEAD);
const AFTER_ID_RESULT = Buffer.from(',"result":');
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 2000;

/** The part of a request body after its id, ',"method":...,"params":[...]}', as UTF-8 bytes. */
function bodyTail(method, params) {
  return Buffer.from(`,${JSON.stringify({ method, params }).slice(1)}`);
}

function rpcFailure(error) {
  return { kind: 'rpc', message: `JSON-RPC ${error.code}: ${error.message}` };
}

/** Any answer, decoded: {id (a number, or null when it has none usable), failure (null for a result)}. */
function parseWhole(buf) {
  let doc;
  try {
    doc = JSON.parse(buf.toString());
  } catch {
    return { id: null, failure: { kind: 'other', message: 'response is not JSON' } };
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return { id: null, failure: { kind: 'other', message: 'response is not a JSON-RPC object' } };
  let id = null;
  if (Number.isSafeInteger(doc.id)) id = doc.id;
  else if (typeof doc.id === 'string' && /^\d{1,15}$/.test(doc.id)) id = Number(doc.id);
  if (doc.error)
    return {
      id,
      failure:
        doc.error.code !== undefined
          ? rpcFailure(doc.error)
          : { kind: 'rpc', message: `JSON-RPC error: ${JSON.stringify(doc.error).slice(0, 200)}` },
    };
  if (!('result' in doc)) return { id, failure: { kind: 'other', message: 'response has neither result nor error' } };
  return { id, failure: null };
}

/** True when buf holds `token` at offset at. */
function hasAt(buf, token, at) {
  return at + token.length <= buf.length && buf.compare(token, 0, token.length, at, at + token.length) === 0;
}

/**
 * The id of an answer and the failure it stands for (null for a result).
 * Fast path without decoding for geth's '{"jsonrpc":"2.0","id":N,"result":';
 * everything else is parsed.
 */
function parseAnswer(buf) {
  if (hasAt(buf, PREFIX, 0)) {
    let i = PREFIX.length;
    let id = 0;
    for (let c = buf[i]; c >= 48 && c <= 57 && i < PREFIX.length + 15; c = buf[++i]) id = id * 10 + (c - 48);
    if (i > PREFIX.length && hasAt(buf, AFTER_ID_RESULT, i)) return { id, failure: null };
  }
  return parseWhole(buf);
}

/** One persistent connection: its requests in flight by id, in the order they were sent. */
class Connection {
  constructor(pool, url) {
    this.pool = pool;
    this.url = url;
    this.pending = new Map(); // id -> {done, t0}
    this.queue = []; // ids of requests waiting for the socket to open, each followed by its tail
    this.nextId = 1;
    this.open = false;
    this.retryMs = RECONNECT_MIN_MS;
    this.connect();
  }

  connect() {
    if (this.pool.closed) return;
    const target = splitAuth(this.url); // basic auth from the URL goes as a header
    this.ws = new WsSocket(target.url, {
      headers: target.headers,
      handshakeTimeoutMs: this.pool.timeoutMs,
      onOpen: () => {
        this.open = true;
        this.retryMs = RECONNECT_MIN_MS;
        for (let i = 0; i < this.queue.length; i += 2) this.ws.sendWithId(PREFIX, this.queue[i], this.queue[i + 1]);
        this.queue = [];
      },
      onMessage: (data) => this.answer(data), // read at once: data is the socket's read buffer
      onClose: (code, error) => this.closed(code, error),
    });
  }

  closed(code, error) {
    this.open = false;
    this.queue = [];
    const message = error
      ? `WebSocket: ${String(error.code || error.message).slice(0, 160)}`
      : `WebSocket closed (code ${code})`;
    this.failAll({ kind: 'other', message });
    this.pool.reconnects++;
    if (this.pool.closed) return;
    setTimeout(() => this.connect(), this.retryMs).unref();
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
  }

  answer(data) {
    const { id, failure: f } = parseAnswer(data);
    // Replay tells a null result (the call's block or transaction is not on this chain) from others.
    const failure =
      !f && this.pool.nullResults && data.toString('latin1', Math.max(0, data.length - 20)).includes('"result":null}')
        ? NULL_RESULT
        : f;
    const p = id === null ? undefined : this.pending.get(id);
    if (!p) {
      this.pool.unmatched++; // an answer to a request already timed out, or one without a usable id
      return;
    }
    this.pending.delete(id);
    p.done(failure);
  }

  /** Sends one request (tail: bodyTail's bytes); done(failure) with its outcome, null for a result. */
  request(tail, t0, done) {
    const id = this.nextId++;
    this.pending.set(id, { done, t0 });
    if (this.open) this.ws.sendWithId(PREFIX, id, tail);
    else this.queue.push(id, tail);
  }

  failAll(failure) {
    const pending = this.pending;
    this.pending = new Map();
    for (const p of pending.values()) p.done(failure);
  }

  /** Fails the requests sent before `before` (performance.now() ms); they are oldest first. */
  expire(before) {
    for (const [id, p] of this.pending) {
      if (p.t0 >= before) break;
      this.pending.delete(id);
      p.done(TIMEOUT);
    }
  }
}

const TIMEOUT = Object.freeze({ kind: 'timeout', message: 'timeout' });
/** With nullResults: an answer whose result is null (not a failure; the caller tells it apart). */
const NULL_RESULT = Object.freeze({ kind: 'null_result', message: 'result is null' });

/**
 * A worker's WebSocket connections.
 * request(tail, t0, done, lane) calls done with null (a result) or a failure {kind, message}, once; without done it
 * returns a promise of the same, which never rejects.
 */
class WsPool {
  constructor(url, { connections, timeoutMs, now, nullResults = false }) {
    this.timeoutMs = timeoutMs;
    this.nullResults = nullResults;
    this.closed = false;
    this.reconnects = 0;
    this.unmatched = 0;
    this.next = 0;
    this.conns = Array.from({ length: Math.max(1, connections) }, () => new Connection(this, url));
    this.sweep = timeoutSweep(timeoutMs, now, (before) => {
      for (const c of this.conns) c.expire(before);
    });
  }

  /**
   * A lane's requests go on connection lane % n (a closed-loop user's: the answers one read brings then set off
   * requests on that connection alone, written with one call, not one write per connection); without a lane, round
   * robin. Over a closed connection (its requests wait for it) only when none is open.
   */
  request(tail, t0, done, lane = undefined) {
    if (!done) return new Promise((resolve) => this.request(tail, t0, resolve, lane));
    const n = this.conns.length;
    let c = this.conns[lane === undefined ? this.next : lane % n];
    if (lane === undefined) this.next = (this.next + 1) % n;
    if (!c.open) {
      for (let k = 1; k < n; k++) {
        const other = this.conns[(this.next + k) % n];
        if (other.open) {
          c = other;
          break;
        }
      }
    }
    return c.request(tail, t0, done);
  }

  close() {
    this.closed = true;
    clearInterval(this.sweep);
    for (const c of this.conns) {
      c.failAll({ kind: 'other', message: 'WebSocket pool closed' });
      if (c.ws) c.ws.terminate();
    }
  }
}

module.exports = { WsPool, parseAnswer, parseWhole, bodyTail, HEAD, NULL_RESULT };
