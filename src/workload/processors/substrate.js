'use strict';
// Artillery processor for Substrate chains. Each artillery worker loads this
// module once, so it holds one @polkadot/api ApiPromise (one WebSocket) per
// worker, never one per virtual user.
//
// A virtual user performs operations (ops.js) drawn from the weighted mix;
// one operation may make several JSON-RPC calls (api.at(hash) looks up the
// runtime version of the block, a transfer asks for the nonce, submits, and
// unwatches). What is recorded is every call @polkadot/api sends: the
// provider's send is wrapped, so requests, latencies and CPU time per request
// are per JSON-RPC call, whoever made it (a virtual user or the library
// itself). The provider's own result cache is bypassed, so every call counted
// reached the node. A JSON-RPC error is a failed request.
//
// @polkadot/api also folds identical calls into one: rpc-core memoizes each
// call by its parameters while it is in flight, and keeps historical ones
// (with a block hash) 1.75 s after. With one ApiPromise serving many virtual
// users, that would let one request answer many users' operations (as
// ethers' de-duplication would, which the EVM processor turns off too), so
// the memoization is turned off below: every operation's calls reach the node.
//
// Operations, their failures, subscriptions' notifications and the transfer
// workload's transactions (inclusion latency) are recorded beside the
// requests, in the same worker samples file.

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { ApiPromise, WsProvider } = require('@polkadot/api');
const { RpcCore } = require('@polkadot/rpc-core');
const { instrument, unmemoizeRpcCore } = require('./substrate-rpc');
const { Keyring } = require('@polkadot/keyring');
const { cryptoWaitReady } = require('@polkadot/util-crypto');
const { OPS, pickParams, SUBSCRIPTION_HOLD_MS } = require('../../chains/substrate/ops');
const { wsUrl } = require('../../chains/substrate/url');
const { splitAuth } = require('../../util/url-auth');
const { loadGenerator } = require('../generator');

const MAX_ERROR_MESSAGES = 20;
/** A transfer not in a block after this long counts as failed. */
const INCLUSION_TIMEOUT_MS = 60000;

const { spec, pool, random, pickMethod, recorder, flush } = loadGenerator();
const inWindow = (now) => now >= spec.start_at && now < spec.end_at;

/** artillery's event emitter of the latest virtual user: counters emitted on it are the worker's. */
let ee = null;

/** Counters of calls completed before any virtual user gave an emitter (the library's own start-up calls). */
const held = [];

function emit(...args) {
  if (ee) ee.emit(...args);
  else held.push(args);
}

function onCall(method, ms, failure) {
  const outcome = recorder.completed(method, ms, failure, Date.now());
  if (outcome === 'window') {
    if (failure) {
      emit('counter', `chainperf.failed.${failure.kind}`, 1);
    } else {
      emit('counter', `chainperf.ok.${method}`, 1);
      emit('histogram', `chainperf.latency_ms.${method}`, ms);
    }
  } else if (outcome === 'before') {
    emit('counter', 'chainperf.before_window', 1);
  }
}

unmemoizeRpcCore(RpcCore);
const target = splitAuth(wsUrl(spec.rpc_url)); // basic auth from the URL goes as a header
const provider = instrument(new WsProvider(target.url, 1000, target.headers, spec.timeout_ms, 0), recorder, onCall);
const apiReady = ApiPromise.create({ provider, noInitWarn: true });
apiReady.catch(() => {}); // reported by the operations that wait for it

// --- operations, transactions and notifications, beside the requests --------

const extra = {
  ops: {},
  op_errors: {},
  notifications: 0,
  tx: { submitted: 0, included: 0, failed: 0, inclusion_ms: [], errors: {} },
};
const snapshot = recorder.snapshot.bind(recorder);
recorder.snapshot = () => ({ ...snapshot(), substrate: extra });

function noteError(map, message) {
  if (map[message] !== undefined || Object.keys(map).length < MAX_ERROR_MESSAGES)
    map[message] = (map[message] || 0) + 1;
}

function opDone(op, err) {
  if (!inWindow(Date.now())) return;
  const o = extra.ops[op] || (extra.ops[op] = { ok: 0, failed: 0 });
  if (err) {
    o.failed++;
    noteError(extra.op_errors, `${op}: ${String(err.message || err).slice(0, 200)}`);
    if (ee) ee.emit('counter', `chainperf.op_failed.${op}`, 1);
  } else {
    o.ok++;
    if (ee) ee.emit('counter', `chainperf.op.${op}`, 1);
  }
}

async function api() {
  let timer;
  try {
    return await Promise.race([
      apiReady,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`@polkadot/api not connected to the node after ${(spec.timeout_ms * 3) / 1000} s`)),
          spec.timeout_ms * 3,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// --- the subscription a virtual user holds ------------------------------------

async function subscribeNewHeads(a, vars) {
  if (vars.chainperfUnsub) vars.chainperfUnsub(); // a user holds one subscription: a new one replaces it
  vars.chainperfUnsub = await a.rpc.chain.subscribeNewHeads(() => {
    if (inWindow(Date.now())) {
      extra.notifications++;
      if (ee) ee.emit('counter', 'chainperf.notifications.chain_newHead', 1);
    }
  });
  if (!vars.chainperfClosedLoop) {
    await new Promise((r) => setTimeout(r, SUBSCRIPTION_HOLD_MS));
    vars.chainperfUnsub();
    vars.chainperfUnsub = null;
  }
}

// --- signed transfers from funded dev accounts --------------------------------

/**
 * Claims are files in a folder per pass, created exclusively: a dev account signs for one virtual user at a time across
 * workers.
 */
const claimsDir = `${process.env.CHAINPERF_GENERATOR_SPEC.replace(/\.generator\.json$/, '')}.signers`;
let keyring = null;
const pairs = new Map();

function claimSigner() {
  fs.mkdirSync(claimsDir, { recursive: true });
  for (let i = 0; i < pool.signers.length; i++) {
    try {
      fs.closeSync(fs.openSync(path.join(claimsDir, String(i)), 'wx'));
      return i;
    } catch {
      // held by another virtual user
    }
  }
  return null;
}

function releaseSigner(i) {
  fs.rmSync(path.join(claimsDir, String(i)), { force: true });
}

async function signer(i) {
  if (!keyring) {
    await cryptoWaitReady();
    keyring = new Keyring({ type: 'sr25519', ss58Format: pool.ss58_format });
  }
  if (!pairs.has(i)) pairs.set(i, keyring.addFromUri(pool.signers[i]));
  return pairs.get(i);
}

/** Signs and submits a transfer; resolves when it is in a block. */
function transferInBlock(a, pair, p) {
  return new Promise((resolve, reject) => {
    let unsub = null;
    let settled = false;
    const settle = (fn, arg) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (unsub) unsub();
      fn(arg);
    };
    const timer = setTimeout(
      () => settle(reject, new Error(`not in a block after ${INCLUSION_TIMEOUT_MS / 1000} s`)),
      INCLUSION_TIMEOUT_MS,
    );
    a.tx.balances
      .transferKeepAlive(p.dest, p.amount)
      .signAndSend(pair, { nonce: -1 }, (res) => {
        if (res.dispatchError) settle(reject, new Error(`dispatch error ${res.dispatchError.toString()}`));
        else if (res.status.isInBlock || res.status.isFinalized)
          settle(resolve); // instant finality reports Finalized alone
        else if (res.status.isInvalid || res.status.isDropped || res.status.isUsurped)
          settle(reject, new Error(`transaction ${res.status.type}`));
      })
      .then(
        (u) => {
          unsub = u;
          if (settled) u();
        },
        (err) => settle(reject, err),
      );
  });
}

async function transfer(a, vars, p) {
  let slot = vars.chainperfSigner;
  if (slot === undefined || slot === null) {
    slot = claimSigner();
    if (slot === null)
      throw new Error(`all ${pool.signers.length} funded dev accounts are signing for other virtual users`);
    vars.chainperfSigner = slot;
  }
  const pair = await signer(slot);
  const t0 = performance.now();
  const submittedInWindow = inWindow(Date.now());
  if (submittedInWindow) extra.tx.submitted++;
  try {
    await transferInBlock(a, pair, p);
    if (inWindow(Date.now())) {
      extra.tx.included++;
      extra.tx.inclusion_ms.push(Math.round((performance.now() - t0) * 1000) / 1000);
    }
  } catch (err) {
    if (inWindow(Date.now())) {
      extra.tx.failed++;
      noteError(extra.tx.errors, String(err.message || err).slice(0, 200));
    }
    throw err;
  } finally {
    if (!vars.chainperfClosedLoop) {
      releaseSigner(slot);
      vars.chainperfSigner = null;
    }
  }
}

// --- artillery's entry points ---------------------------------------------------

/** artillery `whileTrue`: virtual users loop until the window closes. */
function keepGoing(context, next) {
  context.vars.chainperfClosedLoop = true;
  return next(Date.now() < spec.stop_at);
}

/** Performs one operation of the mix. */
async function sendRequest(context, events) {
  ee = events;
  while (held.length) ee.emit(...held.shift());
  if (Date.now() >= spec.stop_at) return;
  const op = pickMethod(random());
  const params = pickParams(op, pool, random);
  try {
    const a = await api();
    const def = OPS[op];
    if (def.subscription) await subscribeNewHeads(a, context.vars);
    else if (def.write) await transfer(a, context.vars, params);
    else await def.run(a, params);
    opDone(op, null);
  } catch (err) {
    opDone(op, err);
  }
}

/** Last step of every virtual user: closes what it holds; the first to finish after the window writes the samples. */
function afterScenario(context, events, next) {
  const v = context.vars;
  if (v.chainperfUnsub) {
    v.chainperfUnsub();
    v.chainperfUnsub = null;
  }
  if (v.chainperfSigner !== undefined && v.chainperfSigner !== null) {
    releaseSigner(v.chainperfSigner);
    v.chainperfSigner = null;
  }
  if (Date.now() >= spec.stop_at) flush();
  return next();
}

module.exports = { keepGoing, sendRequest, afterScenario };
