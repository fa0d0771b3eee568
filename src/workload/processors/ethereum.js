'use strict';
// Artillery processor for EVM chains. Each artillery worker loads this module
// once, so it holds one ethers provider per worker, never one per virtual user.
//
// Every request goes through ethers' JsonRpcProvider.send with batching and
// ethers' request de-duplication turned off: without that, ethers would fold
// identical concurrent calls (eth_blockNumber from many users) into one HTTP
// request and the request count would overstate what the node served.
//
// A request belongs to the measured window when it completes inside
// [start_at, end_at). Its outcome is recorded in samples written by this
// worker at end_at, and mirrored into artillery's own metrics.

const http = require('node:http');
const https = require('node:https');
const { performance } = require('node:perf_hooks');
const { ethers } = require('ethers');
const { paramsFor } = require('../../chains/ethereum/params');
const { classifyError } = require('../samples');
const { loadGenerator } = require('../generator');

const { spec, pool, random, pickMethod, recorder, flush } = loadGenerator();
const agentOpts = { keepAlive: true, maxSockets: Infinity };
const fetchReq = new ethers.FetchRequest(spec.rpc_url);
fetchReq.timeout = spec.timeout_ms;
fetchReq.getUrlFunc = ethers.FetchRequest.createGetUrlFunc({
  agent: spec.rpc_url.startsWith('https:') ? new https.Agent(agentOpts) : new http.Agent(agentOpts),
});
const network = ethers.Network.from(pool.chain_id);
const provider = new ethers.JsonRpcProvider(fetchReq, network, { staticNetwork: network, batchMaxCount: 1, cacheTimeout: -1 });

/** artillery `whileTrue`: virtual users loop until the window closes. */
function keepGoing(context, next) {
  return next(Date.now() < spec.end_at);
}

/** Sends one request of the mix and records its outcome. */
async function sendRequest(context, events) {
  if (Date.now() >= spec.end_at) return;
  const method = pickMethod(random());
  const params = paramsFor(method, pool, random);
  recorder.started();
  const t0 = performance.now();
  let failure = null;
  try {
    await provider.send(method, params);
  } catch (err) {
    failure = classifyError(err);
  }
  const outcome = recorder.completed(method, performance.now() - t0, failure, Date.now());
  if (outcome === 'window') {
    if (failure) events.emit('counter', `chainperf.failed.${failure.kind}`, 1);
    else events.emit('counter', `chainperf.ok.${method}`, 1);
    if (!failure) events.emit('histogram', `chainperf.latency_ms.${method}`, performance.now() - t0);
  } else if (outcome === 'before') {
    events.emit('counter', 'chainperf.before_window', 1);
  }
}

/** Last step of every virtual user: the first to finish after the window writes the samples. */
function afterScenario(context, events, next) {
  if (Date.now() >= spec.end_at) flush();
  return next();
}

module.exports = { keepGoing, sendRequest, afterScenario };
