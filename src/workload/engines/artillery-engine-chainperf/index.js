'use strict';
// artillery engine "chainperf": the lean JSON-RPC path (GENERATOR=lean).
//
// The generator must cost the machine far less than the node it measures, or
// it, not the node, sets the limit. This engine keeps one pool of keep-alive
// connections per artillery worker (plain HTTP/1.1 sockets, http.js, or
// WebSockets, ws.js), prepares requests ahead (a ring of requests
// whose parameters are drawn from the harvested pool with the run's seed), and
// parses a response only when it may carry a JSON-RPC error. Each virtual user
// of a closed loop sends back to back until the window closes; in an open
// loop each virtual user sends one request.
//
// artillery finds this engine by its package name through NODE_PATH, which
// the toolkit sets to the folder above this one.

const { performance } = require('node:perf_hooks');
const { loadGenerator, at } = require('../../generator');
const { paramsFor } = require('../../../chains/ethereum/params');
const { WsPool, bodyTail, parseWhole, NULL_RESULT } = require('./ws');
const { startNative, nativeUser } = require('./native');
const { emitCounts, countOutcome } = require('./counters');
const { replayWith } = require('../../replay');
const { HttpPool, prepareRequest } = require('./http');
const { shapedPacer } = require('../../shapes');
const { headReader } = require('../../named-blocks');

const RING = 4096;
let shared = null; // one generator state and one pool per worker

/** A ring of RING requests drawn with the pass's (or a kept generator's window's) seed. */
function buildRing(g, overWs) {
  const ring = [];
  for (let i = 0; i < (g.spec.replay ? 0 : RING); i++) {
    // a replay sends the capture's calls, not a mix
    const method = g.pickMethod(g.random());
    const params = paramsFor(method, g.pool, g.random);
    // HTTP: the whole request, head and body; WebSocket: the body after its id, which is given per connection when
    // sent. ok: the counter's name, made once here rather than for every request.
    const ok = `chainperf.ok.${method}`;
    const names = headReader(method, params); // an answer naming the head, read on a network (named-blocks.js)
    ring.push(
      overWs
        ? { method, ok, tail: bodyTail(method, params) }
        : {
            method,
            ok,
            names,
            bytes: prepareRequest(g.spec.rpc_url, JSON.stringify({ jsonrpc: '2.0', id: i, method, params })),
          },
    );
  }
  return ring;
}

function setup() {
  if (shared) return shared;
  const g = loadGenerator();
  const url = new URL(g.spec.rpc_url);
  const overWs = url.protocol === 'ws:' || url.protocol === 'wss:';
  const now = () => performance.now();
  if (g.spec.native_sender) {
    const judge = overWs ? (status, body) => parseWhole(body).failure : responseFailure;
    shared = Object.assign(g, { counts: new Map(), timer: null, ee: null });
    shared.native = startNative(g, { overWs, buildRing, judge });
    return shared;
  }
  // lendBody: sendOne and leanCall read a response's body in their callback or as their await resumes, before the next
  // read
  const http = overWs ? null : new HttpPool(g.spec.rpc_url, { timeoutMs: g.spec.timeout_ms, now, lendBody: true });
  const ws = overWs
    ? new WsPool(g.spec.rpc_url, {
        connections: g.spec.ws_connections || 4,
        timeoutMs: g.spec.timeout_ms,
        now,
        nullResults: Boolean(g.spec.replay),
      })
    : null;
  // A kept generator (generator.js) draws each window's requests with that window's seed, as a pass of its own would.
  const ring = g.kept ? [] : buildRing(g, overWs);
  if (g.kept)
    g.onWindow.push(() => {
      shared.ring = buildRing(g, overWs);
      shared.next = 0;
    });
  shared = Object.assign(g, { http, ws, ring, next: 0, counts: new Map(), timer: null, ee: null });
  return shared;
}

const ERROR = Buffer.from('"error"');
const RESULT = Buffer.from('"result"');
const TOP_KEY_BYTES = 48;

/** The failure a response stands for, or null when it is a JSON-RPC result. */
function responseFailure(status, body) {
  if (status < 200 || status >= 300) return { kind: 'http', message: `HTTP ${status}` };
  // A "result" key among the first bytes, with no "error" before it, is the top-level one ({"jsonrpc":"2.0","id":N,
  // "result":...}, the ids are numbers): a result, without reading the rest of a large body.
  const r = body.indexOf(RESULT);
  if (r !== -1 && r < TOP_KEY_BYTES && body.lastIndexOf(ERROR, r) === -1) return null;
  // Otherwise only a body that mentions "error" is parsed: a result never needs decoding here.
  if (body.indexOf(ERROR) !== -1) {
    try {
      const doc = JSON.parse(body.toString());
      if (doc.error) return { kind: 'rpc', message: `JSON-RPC ${doc.error.code}: ${doc.error.message}` };
    } catch {
      return { kind: 'other', message: 'response is not JSON' };
    }
  }
  if (r === -1) return { kind: 'other', message: 'response has neither result nor error' };
  return null;
}

/**
 * Sends the ring's next request and records its outcome, then calls done(), or done(err) should recording throw.
 * Callbacks rather than an async function: no promise is made per request.
 */
function sendOne(g, ee, done, lane) {
  const { method, ok, bytes, tail, names } = g.ring[g.next];
  g.next = (g.next + 1) % RING;
  const recorder = g.recorder; // the window it was sent in, should a kept generator's next one open before the answer
  recorder.started();
  const t0 = performance.now();
  const record = (failure) => {
    try {
      countOutcome(g, ee, recorder.completed(method, performance.now() - t0, failure, Date.now()), ok, failure);
    } catch (err) {
      return done(err);
    }
    return done();
  };
  if (g.ws) g.ws.request(tail, t0, record, lane);
  else
    g.http.request(bytes, t0, (res) => {
      const failure = res.failure || responseFailure(res.status, res.body);
      if (!failure && recorder.named && names) {
        const block = names(res.body); // a closed loop's user is a client; an open loop's requests have none
        if (block !== null) recorder.named.record(Date.now(), block, lane === undefined ? null : lane);
      }
      record(failure);
    });
}

/** A closed loop: one request after another while more() says so (over ws on one connection, its lane: ws.js). */
function closedLoop(g, ee, more) {
  const lane = (g.lanes = (g.lanes || 0) + 1);
  return new Promise((resolve, reject) => {
    const next = (err) => {
      if (err) reject(err);
      else if (more()) sendOne(g, ee, next, lane);
      else resolve();
    };
    next();
  });
}

const TICK_MS = 5;
const MAX_IN_FLIGHT = 8192;

/**
 * Open loop without artillery's arrival timer (which spins a core at any
 * rate): one virtual user paces requests itself. Every few milliseconds it
 * starts as many requests as the rate says should have started by then,
 * without waiting for answers. A linear ramp of rampS seconds leads in.
 * Requests the pacer could not start (over MAX_IN_FLIGHT unanswered) are
 * counted as skipped, never silently dropped. With a SHAPE (spec.shape) the
 * rate follows the shape on the window's clock (shapes.js).
 */
function openLoop(g, ee, rate, rampS) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const stopAt = g.spec.stop_at; // this window's, should a kept generator load the next before the last answer
    let started = 0;
    let inFlight = 0;
    const shaped = g.spec.shape ? shapedPacer(g.spec.shape, g.spec.start_at, rampS, t0) : null;
    const due = (now) => {
      if (shaped) return shaped(now);
      const t = (now - t0) / 1000;
      if (rampS > 0 && t < rampS) return (rate * t * t) / (2 * rampS); // integral of a linear ramp
      return rampS > 0 ? (rate * rampS) / 2 + rate * (t - rampS) : rate * t;
    };
    const finish = () => {
      if (inFlight === 0 && Date.now() >= stopAt) resolve();
    };
    const onDone = (err) => {
      inFlight--;
      if (err) reject(err);
      else finish();
    };
    const tick = () => {
      const now = Date.now();
      if (now >= stopAt) return finish();
      for (let n = Math.floor(due(now)) - started; n > 0; n--) {
        started++;
        if (inFlight >= MAX_IN_FLIGHT) {
          g.recorder.skipped();
          continue;
        }
        inFlight++;
        sendOne(g, ee, onDone);
      }
      setTimeout(tick, TICK_MS);
    };
    tick();
  });
}

/** WORKLOAD=replay: one call of the capture, prepared when sent; {failure, resultNull}. */
function leanCall(g) {
  return async (method, params) => {
    const t0 = performance.now();
    if (g.ws) {
      const failure = await g.ws.request(bodyTail(method, params), t0);
      return failure === NULL_RESULT ? { failure: null, resultNull: true } : { failure, resultNull: false };
    }
    const res = await g.http.request(
      prepareRequest(g.spec.rpc_url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })),
      t0,
    );
    const failure = res.failure || responseFailure(res.status, res.body);
    return {
      failure,
      resultNull: !failure && res.body.toString('latin1', Math.max(0, res.body.length - 20)).includes('"result":null}'),
    };
  };
}

async function replayLean(g, ee) {
  await replayWith(g, leanCall(g), (outcome, method, failure) => {
    countOutcome(g, ee, outcome, `chainperf.ok.${method}`, failure);
  });
  // The replay stops at the window's end; the user stays until stop_at, then writes the samples (processors/ethereum.js
  // alike). at(), not one timer, which may fire a ms early: the lean runner ends a worker whose users are done.
  await at(g.spec.stop_at);
}

// A user that failed (an error in the engine or in recording; a failed request is counted) stopped before the window's
// end: its samples are written at once with the error, which fails the window with it (measure/window.js).
function userFailed(g, err) {
  const errors = g.extras.user_errors || (g.extras.user_errors = []);
  if (errors.length < 5) errors.push(String((err && err.message) || err));
  g.flush();
}

/**
 * A kept generator's user (generator.js): a closed loop or an open loop in each window, idle between them, until the
 * session ends. An open loop's ramp leads in from the window's send_from.
 */
async function keptLoop(g, ee, { closed, rate, rampS }) {
  while (await g.nextWindow()) {
    if (rate)
      await openLoop(g, ee, g.spec.open_loop_rate || rate, rampS); // a saturation step's rate, or the pass's
    else if (closed) await closedLoop(g, ee, () => g.sending());
    else throw new Error('a kept generator runs a closed loop or an open loop paced by the engine');
    if (g.counts.size) emitCounts(g);
  }
}

class ChainperfEngine {
  constructor(script) {
    this.script = script;
  }

  createScenario(scenarioSpec, ee) {
    const closed = Boolean(scenarioSpec.closedLoop);
    const rate = scenarioSpec.openLoopRate;
    return (context, callback) => {
      const g = setup();
      ee.emit('started');
      const run = async () => {
        if (g.native) await nativeUser(g, ee, { closed, rate, replay: scenarioSpec.replay });
        else if (g.kept) await keptLoop(g, ee, { closed, rate, rampS: scenarioSpec.rampS || 0 });
        else if (scenarioSpec.replay) await replayLean(g, ee);
        else if (rate) await openLoop(g, ee, rate, scenarioSpec.rampS || 0);
        else if (closed) await closedLoop(g, ee, () => Date.now() < g.spec.stop_at);
        else if (Date.now() < g.spec.stop_at)
          await new Promise((resolve, reject) => sendOne(g, ee, (e) => (e ? reject(e) : resolve())));
        if (g.counts.size) emitCounts(g);
        if (Date.now() >= g.spec.stop_at) g.flush();
      };
      run().then(
        () => callback(null, context),
        (err) => {
          userFailed(g, err);
          callback(err, context);
        },
      );
    };
  }
}

module.exports = ChainperfEngine;
module.exports.responseFailure = responseFailure;
/** Forgets this worker's state (unit tests drive the engine against several fake nodes in one process). */
module.exports.reset = () => {
  if (shared && shared.ws) shared.ws.close();
  if (shared && shared.http) shared.http.close();
  if (shared && shared.timer) clearTimeout(shared.timer);
  if (shared && shared.native) shared.native.kill();
  shared = null;
};
