'use strict';
// A minimal JSON-RPC client for the toolkit's own control calls (sync checks,
// harvesting), over HTTP or, for a ws:// or wss:// URL, over one WebSocket per
// URL that is closed again after a second without calls. The measured
// workload goes through the load generator, not through this.

const WebSocket = require('ws');
const { splitAuth } = require('./url-auth');

let nextId = 1;

/** How long an idle control WebSocket stays open for the next call. */
const WS_IDLE_MS = 1000;

class RpcError extends Error {
  constructor(method, error) {
    super(`${method}: ${error.message || JSON.stringify(error)}`);
    this.code = error.code;
  }
}

const isWebSocketUrl = (url) => /^wss?:/i.test(url);

/**
 * Calls one method; rejects on HTTP errors, JSON-RPC errors and timeouts.
 * @param {string} url http(s):// or ws(s)://
 * @param {string} method
 * @param {any[]} [params]
 * @param {{timeoutMs?: number, signal?: AbortSignal}} [opts]
 */
async function rpcCall(url, method, params = [], { timeoutMs = 10000, signal } = {}) {
  if (isWebSocketUrl(url)) return wsCall(url, method, params, { timeoutMs, signal });
  const timeout = AbortSignal.timeout(timeoutMs);
  const target = splitAuth(url); // basic auth from the URL goes as a header
  let body;
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (!res.ok)
      throw Object.assign(new Error(`${method}: HTTP ${res.status} ${res.statusText}`), { status: res.status });
    body = await res.json();
  } catch (err) {
    // fetch's own words ("The operation was aborted due to timeout") name neither the call nor the wait
    if (timeout.aborted && !(signal && signal.aborted))
      throw Object.assign(new Error(`${method}: no answer after ${timeoutMs} ms`), { name: 'TimeoutError' });
    throw err;
  }
  if (body.error) throw new RpcError(method, body.error);
  return body.result;
}

const sockets = new Map(); // url -> {ws, opened, pending: Map<id, {settle, fail}>, idle}

/** The open (or opening) control connection to url, made on first use. */
function connection(url, timeoutMs) {
  const known = sockets.get(url);
  if (known && known.ws.readyState <= WebSocket.OPEN) return known;
  const target = splitAuth(url);
  const ws = new WebSocket(target.url, { handshakeTimeout: timeoutMs, headers: target.headers });
  const c = { ws, pending: new Map(), idle: null, error: null };
  c.opened = new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('close', () =>
      reject(new Error(`WebSocket closed before it opened${c.error ? `: ${c.error.message}` : ''}`)),
    );
  });
  c.opened.catch(() => {}); // a caller awaits it; an idle connection failing is no one's error
  ws.on('error', (err) => {
    c.error = err; // 'close' follows and fails what is pending
  });
  ws.on('message', (data) => {
    let doc;
    try {
      doc = JSON.parse(data);
    } catch {
      return;
    }
    const p = doc && c.pending.get(doc.id);
    if (p) p.settle(doc);
  });
  ws.on('close', (code) => {
    if (sockets.get(url) === c) sockets.delete(url);
    clearTimeout(c.idle);
    const reason = new Error(`WebSocket closed (code ${code})${c.error ? `: ${c.error.message}` : ''}`);
    for (const p of [...c.pending.values()]) p.fail(reason);
  });
  sockets.set(url, c);
  return c;
}

function wsCall(url, method, params, { timeoutMs, signal }) {
  const c = connection(url, timeoutMs);
  clearTimeout(c.idle);
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
      c.pending.delete(id);
      if (!c.pending.size) {
        c.idle = setTimeout(() => {
          if (sockets.get(url) === c) sockets.delete(url);
          c.ws.close();
        }, WS_IDLE_MS);
        c.idle.unref();
      }
    };
    const fail = (err) => {
      done();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`${method}: no answer after ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => fail(signal.reason);
    if (signal) {
      if (signal.aborted) return fail(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    c.pending.set(id, {
      settle: (doc) => {
        done();
        if (doc.error) reject(new RpcError(method, doc.error));
        else resolve(doc.result);
      },
      fail: (err) => fail(new Error(`${method}: ${err.message}`)),
    });
    const message = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    c.opened.then(
      () => {
        if (c.pending.has(id)) c.ws.send(message);
      },
      (err) => {
        if (c.pending.has(id)) fail(new Error(`${method}: ${err.message}`));
      },
    );
  });
}

/** Closes the control WebSockets still open (they also close by themselves when idle). */
function closeRpcConnections() {
  for (const c of sockets.values()) c.ws.close();
  sockets.clear();
}

module.exports = { rpcCall, RpcError, isWebSocketUrl, closeRpcConnections };
