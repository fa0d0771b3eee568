'use strict';
// Rules of a scenario's workload and load shape: an open or closed loop,
// writes, subscriptions, a replayed capture, a shaped rate.

const fs = require('node:fs');
const path = require('node:path');
const { KEYS } = require('./keys');
const yaml = require('js-yaml');
const { WORKLOADS_DIR } = require('../util/paths');

/** RATE (open loop) or CONCURRENCY (closed loop): one of them, the environment's over the file's. */
function loopChecks(v, sources, given, at, errors) {
  if (!given.RATE || !given.CONCURRENCY) return;
  const fromEnv = (key) => given[key].where.startsWith('environment');
  if (fromEnv('RATE') === fromEnv('CONCURRENCY')) {
    errors.push(
      `${at('RATE')}: RATE and CONCURRENCY are both set (${at('CONCURRENCY')}): set RATE for an open loop or CONCURRENCY for a closed loop, not both`,
    );
  } else if (fromEnv('RATE')) {
    // The environment chose the open loop over the file's closed loop.
    v.CONCURRENCY = KEYS.CONCURRENCY.default;
    sources.CONCURRENCY = `default (RATE from the environment replaces ${given.CONCURRENCY.where})`;
  } else {
    v.RATE = null;
    sources.RATE = `default (CONCURRENCY from the environment replaces ${given.RATE.where})`;
  }
}

/** A workload file's mix (method -> weight); {} for a replay, a method, a file that cannot be read (its check says). */
function workloadMix(workload) {
  if (!workload || workload.includes(':')) return {};
  try {
    return (yaml.load(fs.readFileSync(path.join(WORKLOADS_DIR, `${workload}.yml`), 'utf8')) || {}).mix || {};
  } catch {
    return {};
  }
}

/** Whether a mix holds eth_subscribe subscriptions (sub.* entries). */
const subscribes = (mix) => Object.keys(mix).some((m) => m.startsWith('sub.'));

/** Whether a workload holds eth_subscribe subscriptions. */
const holdsSubscriptions = (workload) => subscribes(workloadMix(workload));

/**
 * The write workloads (mix entries tx.*) sign in a closed loop through ethers; the subscription workloads (sub.*) hold
 * WebSocket subscriptions.
 */
function writeChecks(v, at, errors) {
  const mix = workloadMix(v.WORKLOAD);
  if (subscribes(mix)) {
    if (v.TRANSPORT !== 'ws')
      errors.push(
        `${at('TRANSPORT')}: TRANSPORT=${v.TRANSPORT}: WORKLOAD=${v.WORKLOAD} holds eth_subscribe subscriptions over WebSocket; set TRANSPORT=ws`,
      );
    if (v.RATE || v.GENERATOR !== 'ethers')
      errors.push(
        `${at('WORKLOAD')}: WORKLOAD=${v.WORKLOAD}: each of CONCURRENCY users holds a subscription (a closed loop with GENERATOR=ethers); leave RATE and GENERATOR unset`,
      );
  }
  if (!Object.keys(mix).some((m) => m.startsWith('tx.'))) return;
  if (v.CHAIN !== 'ethereum')
    errors.push(`${at('WORKLOAD')}: WORKLOAD=${v.WORKLOAD} sends Ethereum transactions; CHAIN is ${v.CHAIN}`);
  if (v.RATE)
    errors.push(
      `${at('RATE')}: RATE: WORKLOAD=${v.WORKLOAD} gives each of CONCURRENCY users its own account and waits for inclusion (a closed loop); set CONCURRENCY, not RATE`,
    );
  if (v.GENERATOR !== 'ethers')
    errors.push(
      `${at('GENERATOR')}: GENERATOR=${v.GENERATOR}: WORKLOAD=${v.WORKLOAD} signs through ethers; leave GENERATOR=ethers`,
    );
  if (v.PROFILE === 'methods' || v.SATURATE === 'yes')
    errors.push(`${at('WORKLOAD')}: WORKLOAD=${v.WORKLOAD}: PROFILE=methods and SATURATE=yes measure read mixes`);
}

/** A replay brings its own timing and parameters. */
function replayChecks(v, at, errors) {
  if (!v.WORKLOAD || !v.WORKLOAD.startsWith('replay:')) return;
  if (v.CHAIN !== 'ethereum')
    errors.push(`${at('WORKLOAD')}: WORKLOAD=replay: replays Ethereum JSON-RPC captures; CHAIN is ${v.CHAIN}`);
  if (v.RATE)
    errors.push(
      `${at('RATE')}: RATE: a replay keeps the capture's timing (REPLAY_SPEED scales it; 0 is a closed loop of CONCURRENCY users); leave RATE unset`,
    );
  if (v.SATURATE === 'yes')
    errors.push(`${at('SATURATE')}: SATURATE=yes sets its own rates; it does not replay a capture`);
  if (v.PROFILE === 'methods')
    errors.push(`${at('PROFILE')}: PROFILE=methods measures the methods of a mix; a replay sends the capture as it is`);
}

/** SHAPE shapes an open loop's rate inside the window: it needs RATE, room in the window, and no saturation search. */
function shapeChecks(v, at, errors) {
  if (v.SHAPE === 'steady') return;
  if (!v.RATE) errors.push(`${at('SHAPE')}: SHAPE=${v.SHAPE} shapes an open loop's rate: set RATE (requests/s)`);
  if (v.SATURATE === 'yes')
    errors.push(
      `${at('SHAPE')}: SHAPE=${v.SHAPE}: a saturation search (SATURATE=yes) sets its own rates; leave SHAPE=steady`,
    );
  if (v.SHAPE === 'spike' && v.SPIKE_S >= v.DURATION_S)
    errors.push(
      `${at('SPIKE_S')}: SPIKE_S: the spike (${v.SPIKE_S} s) must be shorter than the window (DURATION_S=${v.DURATION_S})`,
    );
  if (v.SHAPE === 'step' && v.DURATION_S < v.SHAPE_STEPS)
    errors.push(
      `${at('SHAPE_STEPS')}: SHAPE_STEPS: ${v.SHAPE_STEPS} steps need DURATION_S of at least ${v.SHAPE_STEPS} s`,
    );
}

/** GENERATORS > 1 divides the users or the rate between processes: each needs a share, and a replay is one timeline. */
function generatorsChecks(v, at, errors) {
  if (!(v.GENERATORS > 1)) return;
  const where = at('GENERATORS');
  if (v.WORKLOAD && v.WORKLOAD.startsWith('replay:'))
    errors.push(`${where}: GENERATORS=${v.GENERATORS}: a replay keeps the capture's one timeline; set GENERATORS=1`);
  else if (v.RATE && v.RATE < v.GENERATORS)
    errors.push(`${where}: GENERATORS=${v.GENERATORS}: RATE=${v.RATE} leaves a generator without a request a second`);
  else if (!v.RATE && v.CONCURRENCY < v.GENERATORS)
    errors.push(`${where}: GENERATORS=${v.GENERATORS}: CONCURRENCY=${v.CONCURRENCY} leaves a generator without a user`);
}

/** LEAN_SENDER=native sends the lean engine's closed loops over plain HTTP or WebSocket, on chainperf's machine. */
function senderChecks(v, at, errors) {
  if (v.LEAN_SENDER !== 'native') return;
  const where = at('LEAN_SENDER');
  const why = (what) => errors.push(`${where}: LEAN_SENDER=native ${what}; leave LEAN_SENDER=node for it`);
  if (v.GENERATOR !== 'lean') why(`is the lean engine's sender, and GENERATOR=${v.GENERATOR}`);
  if (v.RATE) why('sends closed loops (CONCURRENCY), not an open loop (RATE)');
  if (v.SATURATE === 'yes') why('sends closed loops, and a saturation search (SATURATE=yes) sets rates');
  if (v.WORKLOAD && v.WORKLOAD.startsWith('replay:')) why('sends a mix, not a replay');
  if (v.SWARM_GENERATOR_NODES) why('runs beside chainperf, not in generators on swarm nodes (SWARM_GENERATOR_NODES)');
  if (v.RUNTIME === 'attach' && /^(https|wss):/i.test(v.RPC_URL || '')) why('speaks no TLS: the attached RPC_URL is');
}

module.exports = {
  holdsSubscriptions,
  loopChecks,
  writeChecks,
  replayChecks,
  shapeChecks,
  generatorsChecks,
  senderChecks,
};
