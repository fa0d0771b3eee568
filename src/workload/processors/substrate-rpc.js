'use strict';
// How the Substrate processor sees every JSON-RPC call @polkadot/api makes:
// the provider's send wrapped (with its result cache bypassed), rpc-core's
// sharing of identical calls turned off, and errors classified as the
// samples record them. Pure enough for unit tests with a fake provider.

const { performance } = require('node:perf_hooks');

/**
 * Classifies an error from @polkadot/api's provider: rpc (the node answered
 * with a JSON-RPC error), timeout (no answer within REQUEST_TIMEOUT_MS), or
 * other (not connected, connection lost, ...).
 */
function classifySubstrateError(err) {
  if (err && typeof err.code === 'number')
    return {
      kind: 'rpc',
      message: `JSON-RPC ${err.code}: ${String(err.message)
        .replace(/^-?\d+: /, '')
        .slice(0, 200)}`,
    };
  const msg = String((err && err.message) || err);
  if (/No response received from RPC endpoint/.test(msg)) return { kind: 'timeout', message: 'timeout' };
  return { kind: 'other', message: msg.slice(0, 200) };
}

// --- every JSON-RPC call, at the provider ---------------------------------

/** Wraps provider.send so every call is recorded, and no result comes from the provider's cache. */
function instrument(provider, recorder, onCall) {
  const send = provider.send.bind(provider);
  provider.send = (method, params, _isCacheable, subscription) => {
    recorder.started();
    const t0 = performance.now();
    const done = (failure) => onCall(method, performance.now() - t0, failure);
    return send(method, params, false, subscription).then(
      (result) => {
        done(null);
        return result;
      },
      (err) => {
        done(classifySubstrateError(err));
        throw err;
      },
    );
  };
  return provider;
}

/** Makes rpc-core create a new call for every request instead of sharing one among identical calls. */
function unmemoizeRpcCore(Core) {
  if (typeof Core.prototype._memomize !== 'function')
    throw new Error(
      '@polkadot/rpc-core has no _memomize: the version installed is not the one chainperf was written for (16.5.6)',
    );
  Core.prototype._memomize = function memoizeNothing(creator, def) {
    const call = creator(true);
    call.raw = creator(false);
    call.meta = def;
    call.unmemoize = () => {};
    call.raw.unmemoize = () => {};
    return call;
  };
}

module.exports = { classifySubstrateError, instrument, unmemoizeRpcCore };
