'use strict';
// The host runtime: the node runs on this machine as a child process in its
// own cgroup (pinned to CORES cores, CPU counted exactly), with Prometheus
// beside it. The load generator gets the remaining cores when there are any.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const clients = require('../clients');
const chains = require('../chains');
const { Cgroup, cgroupsUsable, spawnInGroup, groupsLeftover } = require('../platform/cgroup');
const { cgroupSource, pidSource } = require('../measure/cpu');
const { ensurePrometheus, prometheusVersion } = require('../install/prometheus');
const { startPrometheus } = require('./prometheus');
const { freePort, freePorts } = require('../util/net');
const { blockTicker } = require('./block-ticker');
const { attachTeardown } = require('./teardown');
const { applyHostLimits, blockDeviceOf, oomKills } = require('./limits');
const { enableIoCounting, cgroupIoSource } = require('../measure/io');
const { restoreHostState, restoreGenesisOnly, ensureScenarioState } = require('../state/restore');
const { processId } = require('../util/proc');
const { prepareNetwork, startNetwork } = require('../network/host-network');
const { startHostFleet } = require('./host-fleet');

/** "0-2" style list of cpus [from, to). */
const cpuList = (from, to) => (to - from === 1 ? `${from}` : `${from}-${to - 1}`);

/**
 * The node's and the generator's cgroups, when cgroups are writable here; null otherwise (taskset and /proc/PID/stat
 * then).
 */
function hostGroups(stack, { runId, nodeCpus, generatorCpus, ncpu, log }) {
  if (!cgroupsUsable()) {
    log('cgroups are not writable here: pinning with taskset and reading CPU from /proc/PID/stat instead');
    return null;
  }
  const group = new Cgroup(`chainperf/${runId}/node`, { cpus: nodeCpus });
  stack.cleanups.push(() => group.destroy());
  stack.generatorGroup = new Cgroup(`chainperf/${runId}/generator`, { cpus: generatorCpus || cpuList(0, ncpu) });
  stack.cleanups.push(() => stack.generatorGroup.destroy());
  stack.leftovers.push(() => groupsLeftover([group, stack.generatorGroup]));
  return group;
}

/** The node's data folder: a STATE profile restored into it, its limits, its block I/O counters. */
async function prepareHostData(stack, s, group, { bin, version, workDir, log, signal }) {
  const dataDir = path.join(workDir, 'node-data');
  fs.mkdirSync(dataDir, { recursive: true });
  if (s.STATE !== 'dev') {
    // SYNC=network: the node starts with the genesis block alone and snap-syncs the state from the network; a
    // fleet's replicas each copy the cached state into their own folder (host-fleet.js), so none is copied here
    let restore = s.SYNC === 'network' ? restoreGenesisOnly : restoreHostState;
    if (s.BALANCER === 'haproxy') restore = ensureScenarioState;
    stack.state = await restore(s, { bin, version, dataDir, log, signal });
    // a state with its history built in gets none; one without, the run's own
    stack.freshChain = !stack.state.manifest.history;
  }
  // a fleet's limits are each replica's, on its own group (host-fleet.js), not on the node group that holds them all
  if (s.BALANCER !== 'haproxy') stack.limits = applyHostLimits(s, group, dataDir, log);
  if (group && group.version === 1) {
    const counting = enableIoCounting(group.blkio, blockDeviceOf(dataDir));
    stack.ioCounters = cgroupIoSource(
      { memory: group.memory, blkio: counting ? group.blkio : null, dirtied: true },
      `cgroup ${group.name} (blkio.throttle.io_service_bytes/io_serviced, memory.stat total_pgmajfault; the bytes its processes dirtied for writing from /proc/PID/io)`,
    );
  }
  return dataDir;
}

/**
 * Spawns the node in its group and keeps it: stack.onNodeExit, stack.restartNode (COLD=yes), its stop as a cleanup.
 * Returns a function giving the current node process.
 */
function runNodeProcess(stack, { group, argv, spawnOpts, nodeLog }) {
  let exitInfo = null;
  let child = null;
  let restarting = false; // COLD=yes stops and starts the node between windows: not an exit
  const exitListeners = [];
  const spawnNode = () => {
    const logFd = fs.openSync(nodeLog, 'a');
    const c = spawnInGroup(group, argv, { stdio: ['ignore', logFd, logFd], ...spawnOpts });
    fs.closeSync(logFd);
    c.on('exit', (code, sig) => {
      if (c !== child || restarting) return;
      // Killed by the kernel for the group's memory limit (MEMORY_MB): said as such, as compose says OOM.
      exitInfo = {
        code,
        signal: sig === 'SIGKILL' && group && group.memory && oomKills(group.memory) > 0 ? 'OOM' : sig,
      };
      for (const fn of exitListeners) fn(exitInfo);
    });
    return c;
  };
  const stopNode = async () => {
    if (exitInfo || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT'); // a node frozen by SIGSTOP could not act on SIGTERM
    child.kill('SIGTERM'); // lets geth close its database
    const t = setTimeout(() => child.kill('SIGKILL'), 15000);
    await gone;
    clearTimeout(t);
  };
  child = spawnNode();
  stack.cleanups.push(stopNode);
  /** Stops the node, runs between() (COLD=yes: drop the page cache), starts it again in the same cgroup. */
  stack.restartNode = async (between) => {
    restarting = true;
    try {
      await stopNode();
      await between();
      child = spawnNode();
    } finally {
      restarting = false;
    }
    stack.node.pid = child.pid;
    if (!group) stack.cpu = pidSource(child.pid);
    else stack.cpuCheck = pidSource(child.pid);
  };
  if (!group)
    stack.leftovers.push(() =>
      exitInfo
        ? null
        : { what: `node process ${child.pid}`, command: `kill ${child.pid}`, process: processId(child.pid) },
    );
  stack.onNodeExit = (fn) => (exitInfo ? fn(exitInfo) : exitListeners.push(fn));
  return () => child;
}

/** The node's record, its URLs and its CPU sources. */
function describeHostNode(stack, { s, client, cmd, group, child, nodeCpus, log }) {
  stack.node = {
    pid: child.pid,
    cpus: nodeCpus,
    rpc_url: cmd.rpcUrl,
    ws_url: cmd.wsUrl || null,
    metrics_url: cmd.metrics ? `http://${cmd.metrics.target}${cmd.metrics.path}` : null,
  };
  if (cmd.pprofUrl) stack.node.pprof_url = cmd.pprofUrl;
  stack.rpcUrl = cmd.rpcUrl;
  stack.wsUrl = cmd.wsUrl || (/^wss?:/.test(cmd.rpcUrl) ? cmd.rpcUrl : undefined);
  if (client.metrics && client.metrics.requests) stack.requestsMetric = client.metrics;
  if (client.newBlockMethod)
    stack.cleanups.push(blockTicker(cmd.rpcUrl, client.newBlockMethod, s.DEV_BLOCK_TIME_S, log));

  // The cgroup counts the whole process tree; /proc/PID/stat of the node process is the independent cross-check.
  stack.cpu = group ? cgroupSource(group) : pidSource(child.pid);
  if (group) stack.nodeCgroup = group; // its per-CPU counter: the node's load on each core
  stack.cpuCheck = group ? pidSource(child.pid) : null;
  stack.memoryBytes = group ? () => group.memoryBytes() : null;
}

/** Prometheus beside the node, scraping its metrics. */
async function startHostPrometheus(stack, { promBin, workDir, runId, cmd, signal, log }) {
  const prom = await startPrometheus({
    bin: promBin,
    workDir,
    port: await freePort(),
    runId,
    targets: cmd.metrics.targets || [cmd.metrics.target],
    metricsPath: cmd.metrics.path,
    signal,
  });
  stack.cleanups.push(() => prom.stop());
  stack.leftovers.push(() =>
    prom.child.exitCode === null && prom.child.signalCode === null
      ? {
          what: `Prometheus process ${prom.child.pid}`,
          command: `kill -9 ${prom.child.pid}`,
          process: processId(prom.child.pid),
        }
      : null,
  );
  stack.prometheus = { ...prom, version: prometheusVersion(promBin) };
  const what = cmd.metrics.targets ? `${cmd.metrics.targets.length} replicas' metrics` : cmd.metrics.target;
  log(`Prometheus ${stack.prometheus.version} at ${prom.url} scraping ${what}`);
}

/** Starts the node under test in its group, from the chain's preparation (a chain spec) and the network's. */
async function startHostNode(
  stack,
  s,
  { client, bin, version, workDir, dataDir, ports, group, nodeCpus, network, log },
) {
  // A chain may prepare what its node starts from (Substrate: the chain spec, with dev accounts funded).
  const chain = chains[s.CHAIN];
  const prepared = chain.prepare ? await chain.prepare(s, { workDir, log, client, state: stack.state }) : {};
  if (prepared.source) stack.client.chain_spec = prepared.source;
  const cmd = client.command(s, { dataDir, ports, ...prepared, ...(network ? { network: network.member } : {}) });
  const nodeLog = path.join(workDir, 'node.log');
  const argv = group ? [bin, ...cmd.args] : ['taskset', '-c', nodeCpus, bin, ...cmd.args];
  log(`starting ${s.CLIENT} ${version} on cpus ${nodeCpus}: ${path.basename(bin)} ${cmd.args.join(' ')}`);
  // NODE_PROFILE=cpu: what the client needs for perf to name its frames (a Node.js process: its JIT map).
  const spawnOpts =
    s.NODE_PROFILE === 'cpu' && client.profileEnv ? { env: { ...process.env, ...client.profileEnv } } : {};
  const child = runNodeProcess(stack, { group, argv, spawnOpts, nodeLog })();
  stack.nodeLog = nodeLog;
  stack.nodeDataDir = dataDir; // COLD=yes evicts it from the page cache
  describeHostNode(stack, { s, client, cmd, group, child, nodeCpus, log });
  return cmd;
}

/**
 * What is measured: the node under test, or (BALANCER=haproxy) a fleet of replicas behind HAProxy. Returns its
 * command (a fleet's: the metrics of every replica, for Prometheus) and the nodes a network connects to.
 */
async function startMeasured(stack, s, ctx) {
  if (s.BALANCER === 'haproxy') {
    const { members, metrics } = await startHostFleet(stack, s, {
      ...ctx,
      prepared: ctx.network,
      balancerCpus: ctx.otherCpus,
    });
    if (ctx.client.metrics && ctx.client.metrics.requests) stack.requestsMetric = ctx.client.metrics;
    return { cmd: { metrics }, members };
  }
  const cmd = await startHostNode(stack, s, ctx);
  const members = ctx.network
    ? [
        {
          name: 'node under test',
          nodeKeyHex: ctx.network.member.nodeKeyHex,
          p2pPort: ctx.ports.p2p,
          authPort: ctx.ports.auth,
          rpcUrl: stack.rpcUrl,
          metricsUrl: stack.node.metrics_url,
          logFile: stack.nodeLog, // the client's own import times (head-watch.js)
        },
      ]
    : [];
  return { cmd, members };
}

/**
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').RuntimeContext} ctx
 * @returns {Promise<import('../contracts').Stack>} the stack: rpcUrl (HTTP, for the toolkit's own calls), wsUrl, cpu
 * sources, node info, onNodeExit, teardown
 */
async function startHost(s, { runId, workDir, log, signal, onStack }) {
  const client = clients[s.CLIENT];
  const bin = await client.ensureBinary(s, log);
  const promBin = await ensurePrometheus(log);
  const version = client.binaryVersion(bin);
  const ncpu = os.cpus().length;
  const nodeCpus = cpuList(0, s.CORES);
  const generatorCpus = s.CORES < ncpu ? cpuList(s.CORES, ncpu) : null;

  const binarySha256 = crypto.createHash('sha256').update(fs.readFileSync(bin)).digest('hex');
  const stack = {
    cleanups: [],
    leftovers: [],
    runtime: 'host',
    freshChain: true,
    generatorCpus,
    client: {
      name: s.CLIENT,
      version,
      binary: bin,
      binary_sha256: binarySha256,
      ...(client.kind && client.kind !== 'node' ? { kind: client.kind } : {}),
    },
  };
  attachTeardown(stack, log);
  if (onStack) onStack(stack); // what it has started so far, should the run be forced to exit

  try {
    const group = hostGroups(stack, { runId, nodeCpus, generatorCpus, ncpu, log });
    const ports = await freePorts(['rpc', 'ws', 'metrics', 'p2p', 'auth', 'pprof']);
    const dataDir = await prepareHostData(stack, s, group, { bin, version, workDir, log, signal });
    // NETWORK_NODES: the node under test joins a local network instead of sealing a dev chain of its own.
    const network =
      s.NETWORK_NODES > 0 ? prepareNetwork(s, { client, bin, workDir, dataDir, state: stack.state }) : null;
    const otherCpus = generatorCpus || cpuList(0, ncpu); // away from the node's cores where there are others
    const ctx = { client, bin, version, workDir, dataDir, ports, group, nodeCpus, network, runId, log, signal };
    const { cmd, members } = await startMeasured(stack, s, { ...ctx, otherCpus });
    if (network) await startNetwork(s, stack, { ...ctx, prepared: network, cpus: otherCpus, members });
    // LB_LAG_CHECK: the replicas' agents answer from the head watch while the network runs (the teardown stops it)
    if (stack.fleet && stack.network) {
      stack.fleet.armLagCheck(stack.network.heads);
      stack.cleanups.push(async () => stack.fleet.freezeLagCheck());
    }
    if (!cmd.metrics) {
      log(`${s.CLIENT} exports no metrics: no Prometheus beside it`);
      return stack;
    }
    await startHostPrometheus(stack, { promBin, workDir, runId, cmd, signal, log });
    return stack;
  } catch (err) {
    await stack.teardown();
    throw err;
  }
}

module.exports = { startHost, cpuList, blockTicker };
