'use strict';
// The steps of a run before anything is measured, shared by a single run
// (run.js) and an A/B session (ab/run.js): start the runtime, wait for sync,
// create history on a fresh dev chain, harvest parameters, warm up, and learn
// the CPU source's refresh phase. What they find goes into the `run` record
// the caller writes into its report.

const fs = require('node:fs');
const path = require('node:path');
const chains = require('../chains');
const clients = require('../clients');
const runtimes = require('../runtime');
const { loadMix, startupSOf } = require('../workload/artillery');
const { runGenerators } = require('../measure/generators');
const { log: defaultLog } = require('../util/log');
const { prepareWindowHooks } = require('../measure/profile');
const { ensureProfileTools } = require('../measure/profilers');
const { scrubDeep } = require('../util/scrub');
const { shapeOf } = require('../workload/shapes');
const { replaySpec } = require('../workload/replay');
const { poolOfState } = require('../state/restore');
const { describeStatePool } = require('../state/pool');
const { rpcCall } = require('../util/rpc');
const { retrying, newRetryTally } = require('../util/retry');
const { ensureNativeSender } = require('../install/c-program');

/**
 * Starts the runtime and records what it is.
 * @returns {Promise<import('../contracts').Stack>} the stack
 */
async function provision(s, { run, runId, workDir, signal, log, onNodeExit, onStarting, rpc }) {
  const profileTools = await ensureProfileTools(s, clients[s.CLIENT], log);
  /** @type {import('../contracts').Runtime} */
  const runtime = runtimes[s.RUNTIME];
  const stack = await runtime.start(s, { runId, workDir, log, signal, onStack: onStarting, rpc });
  // NODE_PROFILE and per-core reads at each window's edges
  await prepareWindowHooks(s, stack, { tools: profileTools, log });
  run.node = runtime.nodeRecord(stack);
  if (stack.network) run.network = stack.network.record(); // NETWORK_NODES: the network around the node
  if (stack.fleet) run.fleet = stack.fleet.record(); // REPLICAS: the replicas and their balancer
  if (stack.limits) run.node.limits = stack.limits; // MEMORY_MB and DISK_* as applied (runtime/limits.js)
  if (stack.compose)
    run.stack = {
      compose: stack.compose,
      ...(stack.swarm ? { swarm: stack.swarm } : {}),
      grafana_url: stack.grafanaUrl || null,
      images: stack.images,
    };
  stack.onNodeExit(onNodeExit);
  return stack;
}

/** Creates history on a fresh dev chain (CREATE_HISTORY), through `url`: the node, or the network it syncs from. */
async function historyStep(s, stack, url, { run, phase, signal, log, rpc }) {
  if (!(s.CREATE_HISTORY === 'yes' || (s.CREATE_HISTORY === 'auto' && stack.freshChain))) return;
  phase('history');
  run.history = await chains[s.CHAIN].createHistory(url, {
    accounts: s.HISTORY_ACCOUNTS,
    transfers: s.HISTORY_TRANSFERS,
    calls: s.HISTORY_CONTRACT_CALLS,
    rounds: s.HISTORY_BLOCKS,
    seed: s.SEED,
    devKey: stack.devKey || clients[s.CLIENT].devKey, // a network member has no unlocked account
    signal,
    log,
    rpc,
  });
}

/** Waits for the node to be synced: on its own, or (SYNC=network) by downloading the chain from its peers. */
async function syncStep(s, stack, { run, phase, signal, log, rpc }) {
  const chain = chains[s.CHAIN];
  phase('sync');
  const where = s.RUNTIME === 'attach' ? '(RPC_URL)' : stack.rpcUrl;
  if (stack.network && stack.network.syncNode) {
    run.sync = await stack.network.syncNode({ timeoutS: s.SYNC_TIMEOUT_S });
    const mb = run.sync.p2p_in_bytes === null ? 'n/a' : (run.sync.p2p_in_bytes / 1e6).toFixed(2);
    log(`synced from the network in ${run.sync.seconds.toFixed(1)} s: ${run.sync.blocks} blocks, ${mb} MB received`);
  }
  log(`waiting for the node at ${where} to be synced (SYNC_TIMEOUT_S=${s.SYNC_TIMEOUT_S})`);
  const check = await chain.waitForSync(stack.rpcUrl, { timeoutS: s.SYNC_TIMEOUT_S, signal, log, rpc });
  run.sync = run.sync ? { ...run.sync, check } : check;
  log(`synced after ${check.seconds.toFixed(1)} s at block ${check.head}`);
}

/**
 * Waits for sync, creates history on a fresh dev chain, harvests the parameter pool into poolFile. onSynced is called
 * once the node is synced, before the history (if any) and the harvest.
 */
async function syncAndHarvest(s, stack, { run, phase, poolFile, signal, log, mix, rpc, onSynced }) {
  const chain = chains[s.CHAIN];
  const steps = { run, phase, signal, log, rpc };
  const net = stack.network;
  if (net && net.syncNode) {
    // SYNC=network: the chain is built on the network first; the node then downloads it from its peers
    await historyStep(s, stack, net.historyUrl, steps);
    await syncStep(s, stack, steps);
    onSynced();
  } else {
    await syncStep(s, stack, steps);
    onSynced();
    // on a network the history is sent through the block producer and reaches the node in blocks
    await historyStep(s, stack, net ? net.historyUrl : stack.rpcUrl, steps);
    if (net && run.history) await net.awaitHead({ signal });
  }

  phase('harvest');
  // A STATE profile's pool is drawn across its whole state and history (state/pool.js); a dev chain is harvested.
  const pool = stack.state
    ? await poolOfState(stack.state, s, stack.rpcUrl, { signal, log, rpc })
    : await chain.harvest(stack.rpcUrl, { signal, log, rpc, from: run.history ? run.history.first_round_block : null });
  if (stack.state) {
    log((chain.describeStatePool || describeStatePool)(pool));
    const m = stack.state.manifest;
    // history: the blocks built into the state (a state whose history is the run's own has none)
    run.state = {
      profile: m.profile,
      dir: stack.state.dir,
      accounts: m.accounts,
      slots: m.slots,
      history: m.history || null,
      size_bytes: m.size_bytes,
      build_seconds: m.build_seconds,
      built_at: m.built_at,
      distribution: s.STATE_DISTRIBUTION,
      ...(stack.state.evicted ? { evicted: stack.state.evicted } : {}),
    };
  }
  if (chain.prepareWrites && Object.keys(mix).some((m) => m.startsWith('tx.'))) {
    // one signing account per user; on a network, funded through the node that builds its blocks
    pool.writers = await chain.prepareWrites(stack.rpcUrl, {
      count: s.CONCURRENCY,
      seed: s.SEED,
      devKey: stack.devKey || clients[s.CLIENT].devKey, // a network member has no unlocked account
      fundUrl: stack.network ? stack.network.historyUrl : undefined,
      signal,
      log,
      rpc,
    });
  }
  fs.writeFileSync(poolFile, `${JSON.stringify(scrubDeep(pool))}\n`);
  log(
    `parameter pool: ${chain.describePool ? chain.describePool(pool) : `${pool.blocks.length} blocks, ${pool.tx_hashes.length} transactions, ${pool.addresses.length} addresses, contract ${pool.contract || 'none'}`}`,
  );
  // a replay brings its own parameters
  const missing = replaySpec(s) ? [] : chain.missingForMix(pool, Object.keys(mix));
  if (missing.length) throw new Error(`the chain lacks what the workload needs: ${missing.join('; ')}`);
}

/** The generator spec builder for this stack: the workload's endpoint, pool, mix and seed; `over` sets the window. */
function specBuilder(s, stack, { poolFile, mix, log, nativeSender = null }) {
  // The workload's endpoint: the node's WebSocket with TRANSPORT=ws, its HTTP endpoint otherwise.
  const workloadUrl = s.TRANSPORT === 'ws' ? stack.wsUrl : stack.rpcUrl;
  if (!workloadUrl)
    throw new Error(`TRANSPORT=${s.TRANSPORT}: the ${stack.runtime} runtime gave no ${s.TRANSPORT} endpoint`);
  if (s.TRANSPORT === 'ws') log(`workload over WebSocket at ${s.RUNTIME === 'attach' ? '(RPC_URL)' : workloadUrl}`);
  return (over) => ({
    rpc_url: workloadUrl,
    transport: s.TRANSPORT,
    ws_connections: Math.min(s.WS_CONNECTIONS, s.CONCURRENCY),
    pool_file: poolFile,
    mix,
    timeout_ms: s.REQUEST_TIMEOUT_MS,
    seed: s.SEED,
    samples_dir: null,
    shape: shapeOf(s),
    replay: replaySpec(s),
    ...(nativeSender ? { native_sender: nativeSender } : {}), // LEAN_SENDER=native: the program's path
    ...over,
  });
}

/** WARMUP_S of the workload, not measured, with progress every 30 s. */
async function warmUp(s, stack, { spec, workDir, signal, log, name = 'warmup' }) {
  if (!(s.WARMUP_S > 0)) return;
  const chain = chains[s.CHAIN];
  log(`${name}: warming up for ${s.WARMUP_S} s (not measured)`);
  const due = Date.now() + startupSOf(s) * 1000 + s.RAMP_S * 1000 + s.WARMUP_S * 1000;
  const from = Date.now();
  const progress = setInterval(
    () => log(`${name}: ${Math.round((Date.now() - from) / 1000)} s of ${Math.round((due - from) / 1000)} s`),
    30000,
  );
  const runs = await runGenerators({
    scenario: s,
    stack,
    spec: spec({ start_at: due, end_at: due }),
    dir: workDir,
    name,
    processor: chain.processor,
    signal,
  }).finally(() => clearInterval(progress));
  for (const r of runs)
    if (r.code !== 0) throw new Error(`the load generator failed during warm-up (status ${r.code}); see ${r.logFile}`);
}

/**
 * Everything before the first measured window: provision, sync, history,
 * harvest, warm-up, calibration of a refreshing CPU source.
 * @param {object} s resolved scenario
 * @param {object} o
 * @param {object} o.run the run record to fill (node, stack, sync, history, phase)
 * @param {(stack:object)=>void} o.onStack called as soon as the stack is up (so teardown can reach it)
 * @param {(stack:object)=>void} [o.onStarting] called by the runtime while it is still starting the stack (a forced
 * exit names what it left)
 * @param {(info:object)=>void} o.onNodeExit called when the node exits or restarts
 * @param {boolean} [o.warm] warm up now (false: the caller calls warmUp when it chooses)
 * @param {(ctx:object)=>void} [o.onSynced] called with the measuring context once the node is synced, before the
 * history and the harvest (the run's kept generator starts then; the pool file is written before prepareNode returns)
 * @returns {Promise<object>} the measuring context: s, stack, chain, spec, workDir, reportDir, runId, signal, mix,
 * warnings
 */
async function prepareNode(
  s,
  {
    run,
    runId,
    workDir,
    reportDir,
    signal,
    log = defaultLog,
    onStack = () => {},
    onStarting = () => {},
    onNodeExit,
    warm = true,
    onSynced = () => {},
  },
) {
  const phase = (name) => {
    run.phase = name;
  };
  const chain = chains[s.CHAIN];
  const mix = loadMix(s.WORKLOAD);
  // LEAN_SENDER=native's program, built (a few seconds, once) before any node starts: a machine without a C compiler
  // is told so at once
  const nativeSender = s.GENERATOR === 'lean' && s.LEAN_SENDER === 'native' ? await ensureNativeSender(log) : null;
  phase('provision');
  // The steps before the window retry what a flaky endpoint fails (util/retry.js); run.json counts those calls.
  run.retries = newRetryTally();
  const rpc = retrying(rpcCall, { budgetS: s.RETRY_S, log, tally: run.retries, phase: () => run.phase });
  const stack = await provision(s, { run, runId, workDir, signal, log, onNodeExit, onStarting, rpc });
  onStack(stack);
  const poolFile = path.join(reportDir, 'params.json');
  const spec = specBuilder(s, stack, { poolFile, mix, log, nativeSender });
  const ctx = { s, stack, chain, spec, workDir, reportDir, runId, signal, mix, warnings: run.warnings };
  await syncAndHarvest(s, stack, { run, phase, poolFile, signal, log, mix, rpc, onSynced: () => onSynced(ctx) });
  if (warm) {
    phase('warmup');
    await warmUp(s, stack, { spec, workDir, signal, log });
  }
  if (stack.cpu.calibrate) {
    phase('calibrate');
    const period = await stack.cpu.calibrate(signal);
    log(`the node's CPU counter refreshes every ${(period / 1000).toFixed(1)} s; windows are aligned to its refreshes`);
  }
  return ctx;
}

module.exports = { prepareNode, warmUp };
