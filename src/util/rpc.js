'use strict';
// A minimal JSON-RPC client for the toolkit's own control calls (sync checks,
// harvesting). The measured workload goes through the chain's client library.

let nextId = 1;

class RpcError extends Error {
  constructor(method, error) {
    super(`${method}: ${error.message || JSON.stringify(error)}`);
    this.code = error.code;
  }
}

/** Calls one method; rejects on HTTP errors, JSON-RPC errors and timeouts. */
async function rpcCall(url, method, params = [], { timeoutMs = 10000, signal } = {}) {
  const timeout = AbortSignal.timeout(timeoutMs);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status} ${res.statusText}`);
  const body = await res.json();
  if (body.error) throw new RpcError(method, body.error);
  return body.result;
}

module.exports = { rpcCall, RpcError };
