'use strict';
// The recording proxy (./run.sh record): a JSON-RPC endpoint that forwards
// every request to the node, answers the client with the node's answer, and
// appends one line per request to the capture (capture.js). HTTP POSTs go to
// the node's HTTP endpoint; WebSocket clients each get their own connection
// to the node's WebSocket endpoint, and the answers on it are matched to the
// requests by JSON-RPC id. Subscription notifications are passed on and
// counted, not written.

const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const { performance } = require('node:perf_hooks');
const WebSocket = require('ws');
const { urlSecrets, scrubber, linesFor, newTally } = require('./capture');

const MAX_BODY = 64 * 1024 * 1024;
const now = () => performance.timeOrigin + performance.now();

/** The node's HTTP and WebSocket URLs from --to (and --to-ws). */
function upstreams(to, toWs) {
  const u = new URL(to);
  const ws = /^wss?:$/.test(u.protocol);
  const swap = (url, proto) => {
    const x = new URL(url);
    x.protocol = proto;
    return x.toString();
  };
  return {
    http: ws ? swap(to, u.protocol === 'wss:' ? 'https:' : 'http:') : to,
    ws: toWs || (ws ? to : swap(to, u.protocol === 'https:' ? 'wss:' : 'ws:')),
  };
}

/**
 * Starts the proxy.
 * @param {{listen:{host:string, port:number}, to:string, toWs?:string, out:string, log?:(m:string)=>void}} o
 * @returns {Promise<{address:{host:string, port:number}, close:()=>Promise<object>, tally:object}>}
 */
async function startProxy({ listen, to, toWs, out }) {
  const target = upstreams(to, toWs);
  const scrub = scrubber([...urlSecrets(target.http), ...urlSecrets(target.ws)]);
  const file = fs.createWriteStream(out, { flags: 'a' });
  const tally = newTally();
  const state = { head: null, seq: 0, conns: 0 };
  const write = (lines) => {
    tally.add(lines);
    for (const l of lines) file.write(`${scrub(JSON.stringify(l))}\n`);
  };
  const httpUrl = new URL(target.http);
  const agent = new (httpUrl.protocol === 'https:' ? https : http).Agent({ keepAlive: true, maxSockets: 256 });

  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-type': 'text/plain' }).end('JSON-RPC over POST or WebSocket\n');
      return;
    }
    const t = now();
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => forwardHttp({ body: Buffer.concat(chunks), t, req, res, httpUrl, agent, state, write }));
  });
  const wss = new WebSocket.Server({ server });
  wss.on('connection', (client) => proxyWs({ client, url: target.ws, state, write, tally, scrub }));

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  const addr = server.address();
  return {
    address: { host: addr.address, port: addr.port },
    tally,
    close: () =>
      new Promise((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => {
          agent.destroy();
          file.end(() => resolve(tally.summary()));
        });
      }),
  };
}

/** The request options for the node's URL: its host, path, credentials, and the client's authorization. */
function upstreamOptions(httpUrl, agent, req, length) {
  const headers = { 'content-type': 'application/json', 'content-length': length };
  if (req.headers.authorization) headers.authorization = req.headers.authorization;
  return {
    agent,
    method: 'POST',
    hostname: httpUrl.hostname,
    port: httpUrl.port,
    path: `${httpUrl.pathname}${httpUrl.search}`,
    auth: httpUrl.username
      ? `${decodeURIComponent(httpUrl.username)}:${decodeURIComponent(httpUrl.password)}`
      : undefined,
    headers,
  };
}

/** The node's answer passed back to the client, and its calls recorded. */
function onHttpAnswer(answer, { request, t, res, seq, state, write }) {
  const parts = [];
  answer.on('data', (c) => parts.push(c));
  answer.on('end', () => {
    const raw = Buffer.concat(parts);
    const latency = now() - t;
    res.writeHead(answer.statusCode, { 'content-type': answer.headers['content-type'] || 'application/json' }).end(raw);
    let parsed = null;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      // recorded as an error of each call below
    }
    const meta = { t, latency_ms: latency, transport: 'http', status: answer.statusCode, seq };
    write(linesFor({ request: request || {}, answer: parsed, raw, meta }, state));
  });
}

/** The node did not answer: the client gets a JSON-RPC error, the calls are recorded as failed upstream. */
function onHttpUpstreamError(err, { request, t, res, seq, state, write }) {
  const latency = now() - t;
  const id = request && !Array.isArray(request) ? request.id : null;
  const error = { code: -32603, message: 'chainperf record: the node did not answer' };
  res
    .writeHead(502, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error }));
  const failure = { kind: 'upstream', message: String(err.code || err.message) };
  const meta = { t, latency_ms: latency, transport: 'http', seq, failure };
  write(linesFor({ request: request || {}, answer: null, raw: null, meta }, state));
}

/** Forwards one HTTP POST and records its calls. */
function forwardHttp({ body, t, req, res, httpUrl, agent, state, write }) {
  let request = null;
  try {
    request = JSON.parse(body.toString('utf8'));
  } catch {
    // forwarded as it is: the node answers what it answers; recorded as one unparsable call
  }
  const call = { request, t, res, seq: ++state.seq, state, write };
  const up = (httpUrl.protocol === 'https:' ? https : http).request(
    upstreamOptions(httpUrl, agent, req, body.length),
    (answer) => onHttpAnswer(answer, call),
  );
  up.on('error', (err) => onHttpUpstreamError(err, call));
  up.end(body);
}

/** A message from the node on a client's WebSocket: passed on; an answer to a pending call is recorded. */
function onWsAnswer(data, isBinary, { client, pending, conn, state, write, tally }) {
  const text = data.toString('utf8');
  if (client.readyState === WebSocket.OPEN) client.send(isBinary ? data : text);
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    return;
  }
  if (!Array.isArray(answer) && answer.method && answer.params && answer.params.subscription !== undefined) {
    tally.notification();
    return;
  }
  const key = keyOf(answer);
  const p = key === null ? null : pending.get(key);
  if (!p) return;
  pending.delete(key);
  const meta = { t: p.t, latency_ms: now() - p.t, transport: 'ws', conn, seq: p.seq };
  write(linesFor({ request: p.request, answer, raw: text, meta }, state));
}

/** The calls still waiting when the node's connection ends, recorded as failed upstream. */
function failPending(why, { pending, conn, state, write, scrub }) {
  for (const p of pending.values()) {
    const failure = { kind: 'upstream', message: scrub(why) };
    const meta = { t: p.t, latency_ms: now() - p.t, transport: 'ws', conn, seq: p.seq, failure };
    write(linesFor({ request: p.request, answer: null, raw: null, meta }, state));
  }
  pending.clear();
}

/** One client WebSocket: its own connection to the node, requests matched to answers by id. */
function proxyWs({ client, url, state, write, tally, scrub }) {
  const conn = ++state.conns;
  const upstream = new WebSocket(url);
  const pending = new Map(); // JSON id of a call (or of a batch's first call) -> {request, t, seq}
  const ctx = { client, pending, conn, state, write, tally, scrub };
  const queue = [];
  const send = (data) => (upstream.readyState === WebSocket.OPEN ? upstream.send(data) : queue.push(data));
  upstream.on('open', () => {
    for (const d of queue.splice(0)) upstream.send(d);
  });
  client.on('message', (data, isBinary) => {
    const t = now();
    try {
      const request = JSON.parse(data.toString('utf8'));
      const key = keyOf(request);
      if (key !== null) pending.set(key, { request, t, seq: ++state.seq });
    } catch {
      // not JSON: passed on, not recorded
    }
    send(isBinary ? data : data.toString('utf8'));
  });
  upstream.on('message', (data, isBinary) => onWsAnswer(data, isBinary, ctx));
  upstream.on('error', (err) => {
    failPending(String(err.code || err.message), ctx);
    client.close(1011, 'the node did not answer');
  });
  upstream.on('close', () => {
    failPending('the node closed the connection', ctx);
    if (client.readyState === WebSocket.OPEN) client.close();
  });
  client.on('close', () => upstream.terminate());
  client.on('error', () => upstream.terminate());
}

/** The id that ties an answer to its request: the call's id, or for a batch, its ids sorted. */
function keyOf(msg) {
  if (Array.isArray(msg)) {
    const ids = msg
      .filter((m) => m && m.id !== undefined && m.id !== null)
      .map((m) => JSON.stringify(m.id))
      .sort();
    return ids.length ? `batch:${ids.join(',')}` : null;
  }
  if (!msg || msg.id === undefined || msg.id === null) return null;
  return JSON.stringify(msg.id);
}

module.exports = { startProxy, upstreams };
