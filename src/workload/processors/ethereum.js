'use strict';
// Artillery processor for EVM chains. Each artillery worker loads this module
// once, so it holds one ethers provider per worker, never one per virtual user.
//
// Every request goes through ethers' provider.send (JsonRpcProvider over HTTP,
// its bytes on keep-alive sockets of chainperf's own: ethers-http.js;
// WebSocketProvider with TRANSPORT=ws: one WebSocket per worker) with batching and
// ethers' request de-duplication turned off: without that, ethers would fold
// identical concurrent calls (eth_blockNumber from many users) into one HTTP
// request and the request count would overstate what the node served.
//
// A request belongs to the measured window when it completes inside
// [start_at, end_at). Its outcome is recorded in samples written by this
// worker at end_at, and mirrored into artillery's own metrics.

const { performance } = require('node:perf_hooks');
const { ethers } = require('ethers');
const { paramsFor } = require('../../chains/ethereum/params');
const { classifyError } = require('../samples');
const { namedBlock } = require('../named-blocks');
const { loadGenerator, at } = require('../generator');
const { ethersProvider, fetchRequestFor, useNativeUtf8Decoding } = require('../../chains/ethereum/provider');
const { ethersGetUrl } = require('../ethers-http');
const { isWebSocketUrl } = require('../../util/rpc');
const { shapedGate } = require('../shapes');
const { replayWith } = require('../replay');
const { newWriter, isWrite } = require('../writes');
const { newSubscriber, isSubscription } = require('../subscriptions');

// g.spec, g.recorder, g.random and g.pickMethod are the current window's: a generator kept across windows (A/B
// sessions, generator.js) changes them as each window opens, and reads g.pool when its first one does. `spec` is the
// pass's: its URL, timeout, workload.
const g = loadGenerator();
const { spec, extras } = g;
useNativeUtf8Decoding(); // ethers' own UTF-8 decoder was a third of this generator's CPU (provider.js)
// Users keep sending until stop_at, a little past the window (generator.js); a subscription workload holds its
// subscriptions to the window's end only: one opened after it would be closed before it was established.
const holdsSubscriptions = Object.keys(spec.mix).some(isSubscription);
const until = () => (holdsSubscriptions ? g.spec.end_at : g.spec.stop_at);
const overWs = isWebSocketUrl(spec.rpc_url); // TRANSPORT=ws gives a ws:// or wss:// URL

/**
 * HTTP: a FetchRequest whose bytes travel on keep-alive sockets of chainperf's own (ethers-http.js: Node's http client
 * cost more than ethers itself). ws: a WebSocketProvider, made again if its socket closes.
 */
function makeProvider() {
  const network = ethers.Network.from(g.pool.chain_id);
  const options = { staticNetwork: network, batchMaxCount: 1, cacheTimeout: -1 };
  if (overWs) return ethersProvider(spec.rpc_url, network, options);
  const fetchReq = fetchRequestFor(spec.rpc_url);
  fetchReq.timeout = spec.timeout_ms;
  fetchReq.getUrlFunc = ethersGetUrl(spec.rpc_url, { timeoutMs: spec.timeout_ms });
  return ethersProvider(spec.rpc_url, network, options, { fetchRequest: fetchReq });
}
// A kept generator's is made at its first request: its pool is read when its first window opens (generator.js)
let provider = g.pool ? makeProvider() : null;

const gate = spec.shape ? shapedGate(spec.shape, spec.start_at) : null;

const TIMEOUT = Object.freeze({ code: 'TIMEOUT' });

/**
 * provider.send with REQUEST_TIMEOUT_MS. Over HTTP the FetchRequest times out
 * itself; ethers' WebSocketProvider has no timeout, so one is raced here.
 */
function send(method, params) {
  if (!provider) provider = makeProvider();
  if (!overWs) return provider.send(method, params);
  if (provider.closed()) {
    provider.destroy();
    provider = makeProvider();
  }
  let timer;
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(TIMEOUT), spec.timeout_ms);
  });
  return Promise.race([provider.send(method, params), timeout]).finally(() => clearTimeout(timer));
}

/** artillery `whileTrue`: virtual users loop until the window closes (a kept generator's: until the session ends). */
function keepGoing(context, next) {
  return next(g.kept ? !g.ended : Date.now() < until());
}

/** Sends one request of the mix and records its outcome. */
async function sendRequest(context, events) {
  if (g.kept && !g.sending()) {
    await g.nextWindow(); // idle until the next window's send_from (or the session's end)
    return;
  }
  if (Date.now() >= until()) return;
  if (gate && !gate(Date.now())) return; // SHAPE: this arrival is above the rate the shape asks for now
  const method = g.pickMethod(g.random());
  if (isWrite(method)) return writeOne(method, context.vars);
  if (isSubscription(method)) return holdOne(method);
  const params = paramsFor(method, g.pool, g.random);
  const recorder = g.recorder; // the window it was sent in, should a kept generator's next one open before the answer
  recorder.started();
  const t0 = performance.now();
  let failure = null;
  let result;
  try {
    result = await send(method, params);
  } catch (err) {
    failure = classifyError(err);
  }
  const outcome = recorder.completed(method, performance.now() - t0, failure, Date.now());
  const block = recorder.named && !failure ? namedBlock(method, params, result) : null;
  if (block !== null) recorder.named.record(Date.now(), block, context); // the virtual user is the client
  if (outcome === 'window') {
    if (failure) events.emit('counter', `chainperf.failed.${failure.kind}`, 1);
    else events.emit('counter', `chainperf.ok.${method}`, 1);
    if (!failure) events.emit('histogram', `chainperf.latency_ms.${method}`, performance.now() - t0);
  } else if (outcome === 'before') {
    events.emit('counter', 'chainperf.before_window', 1);
  }
}

let writer = null;
/** A transaction of the write workloads (writes.js); its JSON-RPC calls are recorded there. */
async function writeOne(kind, vars) {
  if (!writer) {
    const claimsDir = `${process.env.CHAINPERF_GENERATOR_SPEC.replace(/\.generator\.json$/, '')}.writers`;
    writer = newWriter({ spec, pool: g.pool, recorder: g.recorder, extras, send, classify: classifyError, claimsDir });
  }
  try {
    await writer.write(kind, vars);
  } catch (err) {
    extras.writes.failed += Date.now() >= spec.start_at && Date.now() < spec.end_at ? 1 : 0;
    const m = String(err.message).slice(0, 200);
    extras.writes.errors[m] = (extras.writes.errors[m] || 0) + 1;
  }
}

let subscriber = null;
/** A subscription held by this virtual user until the window closes (subscriptions.js). */
async function holdOne(kind) {
  if (!subscriber) subscriber = newSubscriber({ spec, pool: g.pool, recorder: g.recorder, extras });
  await subscriber.hold(kind);
  // ended early (an error): not in a tight loop
  if (Date.now() < spec.end_at) await new Promise((r) => setTimeout(r, 1000));
}

/** WORKLOAD=replay: this virtual user sends the capture's calls (replay.js) until the window closes. */
async function replay(context, events) {
  const call = async (method, params) => {
    try {
      return { failure: null, resultNull: (await send(method, params)) === null };
    } catch (err) {
      return { failure: classifyError(err), resultNull: false };
    }
  };
  await replayWith({ spec, recorder: g.recorder, extras }, call, (outcome, method, failure) => {
    if (outcome === 'window')
      events.emit('counter', failure ? `chainperf.failed.${failure.kind}` : `chainperf.ok.${method}`, 1);
    else if (outcome === 'before') events.emit('counter', 'chainperf.before_window', 1);
  });
  // The replay stops sending at the window's end; the user stays until stop_at like the looping ones, so that
  // afterScenario writes the samples even when nothing else keeps this worker alive until its flush timer (at(): a
  // timer alone may fire a millisecond before Date.now() reaches its instant).
  await at(until());
}

/** Last step of every virtual user: the first to finish after the window writes the samples. */
function afterScenario(context, events, next) {
  if (writer) writer.release(context.vars);
  if (Date.now() >= until()) g.flush();
  return next();
}

module.exports = { keepGoing, sendRequest, replay, afterScenario };
