'use strict';
// What the recording proxy writes: one JSON line per JSON-RPC request, made
// from the request as the client sent it and the answer the node gave.
//
//   {"t": 1763880000123.456,          arrival, Unix ms
//    "transport": "http" | "ws",
//    "conn": 3,                        ws: the client connection's number
//    "method": "eth_getLogs", "params": [...],
//    "batch": null | {"seq": 12, "size": 3, "index": 0},
//    "latency_ms": 1.234,              arrival until the answer was back from the node
//    "bytes": 512,                     size of this request's answer (its element, in a batch)
//    "status": 200,                    http: the node's HTTP status
//    "head": 1234,                     latest block the proxy had seen answered, when known
//    "error": null | {"code": -32000, "message": "..."} | {"kind": "http"|"upstream"|"parse", "message": "..."}}
//
// Secrets in the node's URL never reach these lines: the URL is not written,
// and every string passes a scrubber that knows the URL's literal secrets.

const { classifyAnyChain } = require('../chains/method-classes');
const { CLASSES } = require('../workload/safety');

/** The parts of a URL that may be secret: credentials, query values, path segments. */
function urlSecrets(raw) {
  const u = new URL(raw);
  const out = [];
  if (u.username) out.push(u.username, decodeURIComponent(u.username));
  if (u.password) out.push(u.password, decodeURIComponent(u.password));
  for (const [k, v] of u.searchParams) out.push(k, v);
  if (u.search.length > 1) out.push(u.search.slice(1));
  for (const seg of u.pathname.split('/')) if (seg.length >= 3) out.push(seg, decodeURIComponent(seg));
  return [...new Set(out.filter((x) => x.length >= 3))].sort((a, b) => b.length - a.length);
}

/** A function that replaces every literal secret in a string. */
function scrubber(secrets) {
  return (text) => {
    let s = String(text);
    for (const x of secrets) s = s.split(x).join('<redacted>');
    return s;
  };
}

/** scheme://host:port of a URL: all the proxy ever prints about the node. */
function publicOrigin(raw) {
  const u = new URL(raw);
  const hidden =
    u.username || u.password || u.search || u.pathname.length > 1 ? ' (credentials, path and query hidden)' : '';
  return `${u.protocol}//${u.host}${hidden}`;
}

/** A block number the proxy can learn the head from, in the answer to method. */
function headFrom(method, result) {
  if (method === 'eth_blockNumber' && typeof result === 'string') return Number.parseInt(result, 16);
  if (
    (method === 'eth_getBlockByNumber' || method === 'eth_getBlockByHash') &&
    result &&
    typeof result.number === 'string'
  ) {
    return Number.parseInt(result.number, 16);
  }
  return null;
}

/** The error member of a JSON-RPC answer as recorded. */
function rpcError(answer) {
  if (!answer || typeof answer !== 'object') return { kind: 'parse', message: 'answer is not a JSON-RPC object' };
  if (answer.error) return { code: answer.error.code, message: String(answer.error.message || '').slice(0, 300) };
  if (!('result' in answer)) return { kind: 'parse', message: 'answer has neither result nor error' };
  return null;
}

/**
 * How one call of an exchange failed, or null: the proxy's failure, an HTTP status without an answer, the answer's
 * error.
 */
function callError(meta, a) {
  if (meta.failure) return meta.failure;
  if (meta.status && (meta.status < 200 || meta.status >= 300) && !a)
    return { kind: 'http', message: `HTTP ${meta.status}` };
  return a ? rpcError(a) : { kind: 'parse', message: 'no answer for this call' };
}

/** Size of a call's answer: its own JSON in a batch, the body received for a single call. */
function answerBytes(isBatch, a, raw) {
  if (isBatch) return a ? Buffer.byteLength(JSON.stringify(a)) : 0;
  return raw ? Buffer.byteLength(raw) : 0;
}

/** The latest head seen moves on with an answer that names a newer block. */
function noteHead(state, call, a) {
  const h = headFrom(call.method, a.result);
  if (h !== null && !Number.isNaN(h) && (state.head === null || h > state.head)) state.head = h;
}

/**
 * The capture's lines for one exchange.
 * @param {object} o
 * @param {object|object[]} o.request parsed request body (one call or a batch)
 * @param {object|object[]|null} o.answer parsed answer (null when the node gave none or it was not JSON)
 * @param {Buffer|string|null} o.raw the answer as received (its size for a single call)
 * @param {{t:number, latency_ms:number, transport:string, conn?:number, status?:number, seq:number, failure?:object}}
 * o.meta
 * @param {{head:number|null}} state where the latest head seen is kept
 */
function linesFor({ request, answer, raw, meta }, state) {
  const isBatch = Array.isArray(request);
  const calls = isBatch ? request : [request];
  const answers = Array.isArray(answer) ? answer : answer ? [answer] : [];
  const byId = new Map(answers.filter((a) => a && a.id !== undefined).map((a) => [JSON.stringify(a.id), a]));
  return calls.map((call, index) => {
    const a = isBatch ? byId.get(JSON.stringify(call && call.id)) : answers[0];
    const error = callError(meta, a);
    if (!error && a) noteHead(state, call, a);
    return {
      t: meta.t,
      transport: meta.transport,
      ...(meta.conn !== undefined ? { conn: meta.conn } : {}),
      method: call && typeof call.method === 'string' ? call.method : null,
      params: call && call.params !== undefined ? call.params : [],
      batch: isBatch ? { seq: meta.seq, size: calls.length, index } : null,
      latency_ms: Number(meta.latency_ms.toFixed(3)),
      bytes: answerBytes(isBatch, a, raw),
      ...(meta.status !== undefined ? { status: meta.status } : {}),
      head: state.head,
      error,
    };
  });
}

/** Counts per method and outcome, printed when the proxy stops. */
function newTally() {
  const methods = {};
  let requests = 0;
  let errors = 0;
  let batches = 0;
  let notifications = 0;
  return {
    add(lines) {
      if (lines.length && lines[0].batch) batches++;
      for (const l of lines) {
        requests++;
        const m = methods[l.method || '(invalid)'] || (methods[l.method || '(invalid)'] = { requests: 0, errors: 0 });
        m.requests++;
        if (l.error) {
          m.errors++;
          errors++;
        }
      }
    },
    notification() {
      notifications++;
    },
    summary: () => ({ requests, errors, batches, notifications, methods }),
  };
}

/** The summary as lines of text. */
function formatTally(t, classify = classifyAnyChain) {
  const entries = Object.entries(t.methods).sort((a, b) => b[1].requests - a[1].requests);
  const marked = entries.map(([m]) => classify(m)).filter((cls) => cls !== 'read').length;
  const rows = entries.map(([m, c]) => {
    const cls = classify(m);
    const mark = cls === 'read' ? '' : `  [${cls}: ${CLASSES[cls].what}]`;
    return `  ${m}: ${c.requests}${c.errors ? ` (${c.errors} errors)` : ''}${mark}`;
  });
  const note = marked
    ? [
        `${marked} of these methods are not reads (marked): a replay of this capture against a node chainperf did not start refuses them unless allowed (ALLOW_WRITES=yes for writes, ALLOW_METHODS for debug and unknown methods; administrative ones never), and ./run.sh mix leaves them out`,
      ]
    : [];
  return [
    `captured ${t.requests} requests (${t.errors} errors, ${t.batches} batches, ${t.notifications} subscription notifications)`,
    ...rows,
    ...note,
  ];
}

module.exports = { urlSecrets, scrubber, publicOrigin, linesFor, newTally, formatTally, headFrom };
