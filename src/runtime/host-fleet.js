// @ts-check
'use strict';
// REPLICAS on the host runtime: N replicas of the node under test behind
// HAProxy. Each replica has its own database (initialised from the network's
// genesis), its own node key and ports, its own cgroup under the run's node
// cgroup (chainperf/<run>/node/replica-<i>, pinned to the node's CORES cores:
// CORES applies per replica, and the replicas share those cores), and the
// network nodes as its own peers (with SYNC=network it starts at the genesis
// and syncs the chain from them). The node cgroup above them counts the whole
// fleet: CPU per request is the fleet's. HAProxy (its configuration generated
// from the scenario, kept with the report) runs in its own cgroup on the other
// cores; the workload talks to it only. A replica that dies is reported, not
// fatal: the run fails only when every replica is gone. With LB_LAG_CHECK,
// HAProxy also asks each replica's agent (lag-agent.js) whether it keeps up
// with the chain, and drains it while it lags.

const crypto = require('node:crypto');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { Cgroup, spawnInGroup, groupsLeftover } = require('../platform/cgroup');
const { cgroupSource } = require('../measure/cpu');
const { freePorts } = require('../util/net');
const { ensureDebianTool } = require('../install/debian');
const { renderConfig, startHaproxy, HEALTH_BODY } = require('./haproxy');
const { fleetHooks } = require('./fleet-hooks');
const { startLagAgents } = require('./lag-agent');
const { memberData } = require('../network/host-network');
const { restoreGenesisOnly } = require('../state/restore');
const { applyHostLimits, oomKills } = require('./limits');

const readOr = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

/**
 * Spawns replica i in its own cgroup under the node's; its data initialised from the network's genesis, or a copy of
 * the STATE profile's.
 */
async function spawnReplica(s, { client, bin, workDir, prepared, runId, nodeCpus, i, nodeKeyHex, log }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const dir = path.join(workDir, `replica-${i}`);
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dir, { recursive: true });
  // SYNC=network: the profile's genesis block alone (made once, copied), which the replica snap-syncs from its peers
  if (prepared.genesisOnlyDir) execFileSync('cp', ['-a', '--reflink=auto', prepared.genesisOnlyDir, dataDir]);
  else memberData(s, net, bin, prepared, dataDir, { name: `replica-${i}`, log });
  const { rpc, ws, metrics, p2p, auth } = await freePorts(['rpc', 'ws', 'metrics', 'p2p', 'auth']);
  const cmd = client.command(s, {
    dataDir,
    ports: { rpc, ws, metrics, p2p, auth },
    network: { nodeKeyHex, jwtFile: prepared.jwtFile, syncMode: prepared.member.syncMode },
  });
  const group = new Cgroup(`chainperf/${runId}/node/replica-${i}`, { cpus: nodeCpus });
  // MEMORY_MB and DISK_* apply to each replica: on its own group, before it starts
  const limits = applyHostLimits(s, group, dataDir, i === 1 ? log : () => {});
  const logFile = path.join(dir, 'node.log');
  const fd = fs.openSync(logFile, 'a');
  const child = spawnInGroup(group, [bin, ...cmd.args], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  return {
    name: `replica-${i}`,
    child,
    pid: child.pid,
    kill: () => child.kill('SIGKILL'),
    onGone: (fn) => child.once('exit', fn),
    group,
    limits,
    logFile,
    nodeKeyHex,
    ports: { rpc, p2p, auth },
    rpcUrl: cmd.rpcUrl,
    metricsUrl: cmd.metrics ? `http://${cmd.metrics.target}${cmd.metrics.path}` : null,
    cmd,
  };
}

/** LB_LAG_CHECK=on: an agent per replica (lag-agent.js), stopped with the stack; null when off. */
async function startAgents(s, stack, replicas, log) {
  if (s.LB_LAG_CHECK !== 'on') return null;
  const names = replicas.map((r) => r.name);
  const agents = await startLagAgents({ names, boundS: Number(s.MAX_HEAD_LAG_S), log });
  stack.cleanups.push(() => agents.stop());
  log(
    `LB_LAG_CHECK=on: HAProxy asks each replica's agent every ${agents.interMs / 1000} s; it drains a replica whose head lags more than MAX_HEAD_LAG_S=${s.MAX_HEAD_LAG_S} s`,
  );
  return agents;
}

/**
 * HAProxy in front of the replicas, in its own cgroup (with LB_LAG_CHECK, each replica's agent beside its health
 * check); waits until every replica passes its health check.
 */
async function startBalancer(s, stack, { replicas, workDir, runId, cpus, log, signal }) {
  const bin = await ensureDebianTool('haproxy', 'haproxy', log);
  const { port, statsPort } = await freePorts(['port', 'statsPort']);
  const group = new Cgroup(`chainperf/${runId}/balancer`, { cpus });
  stack.cleanups.push(() => group.destroy());
  stack.leftovers.push(() => groupsLeftover([group]));
  const agents = await startAgents(s, stack, replicas, log);
  const config = renderConfig({
    port,
    statsPort,
    servers: replicas.map((r) => ({
      name: r.name,
      host: '127.0.0.1',
      port: r.ports.rpc,
      ...(agents ? { agent: { addr: '127.0.0.1', port: agents.ports[r.name] } } : {}),
    })),
    algorithm: s.LB_ALGORITHM,
    healthBody: HEALTH_BODY,
    bind: '127.0.0.1',
    ...(agents ? { agentInterMs: agents.interMs } : {}),
  });
  const lb = await startHaproxy({ bin, dir: path.join(workDir, 'balancer'), config, port, statsPort, group, signal });
  stack.cleanups.push(() => lb.stop());
  const deadline = Date.now() + 60000;
  for (;;) {
    const counts = await lb.counts();
    if (replicas.every((r) => counts[r.name] && counts[r.name].up)) break;
    if (Date.now() > deadline)
      throw new Error(`HAProxy: not every replica passed its health check in 60 s; see ${lb.logFile}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  log(`HAProxy (${s.LB_ALGORITHM}) at ${lb.url} in front of ${replicas.length} replicas, on cpus ${cpus}`);
  return { lb, group, agents };
}

/** Starts the replicas; `fleet` gathers them, the ones lost, and who waits for all of them to be gone. */
async function startReplicas(stack, s, fleet, ctx) {
  const { client, bin, version, workDir, nodeCpus, runId, log, signal } = ctx;
  let { prepared } = ctx;
  if (s.SYNC === 'network' && prepared.stateDir) {
    const genesisOnlyDir = path.join(workDir, 'replica-genesis-only');
    await restoreGenesisOnly(s, { bin, version, dataDir: genesisOnlyDir, log, signal });
    prepared = { ...prepared, genesisOnlyDir };
  }
  stack.cleanups.push(async () => {
    fleet.stopping = true;
    for (const r of fleet.replicas)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
    await Promise.all(fleet.replicas.map((r) => r.group.destroy(15000)));
  });
  stack.leftovers.push(() => groupsLeftover(fleet.replicas.map((r) => r.group)));
  const data = prepared.genesisOnlyDir
    ? `, each with STATE=${s.STATE}'s genesis block alone to sync from the network`
    : prepared.stateDir
      ? ` and on its own copy of STATE=${s.STATE}`
      : '';
  log(
    `REPLICAS=${s.REPLICAS}: starting ${s.REPLICAS} replicas of ${s.CLIENT}, each on cpus ${nodeCpus} in its own cgroup${data}`,
  );
  for (let i = 1; i <= s.REPLICAS; i++) {
    const nodeKeyHex = i === 1 ? prepared.member.nodeKeyHex : crypto.randomBytes(32).toString('hex');
    const r = await spawnReplica(s, { client, bin, workDir, prepared, runId, nodeCpus, i, nodeKeyHex, log });
    r.child.on('exit', (code, killedBy) => {
      if (fleet.stopping) return;
      // killed by the kernel for its group's memory limit (MEMORY_MB): said as such, as for a lone node
      const sig = killedBy === 'SIGKILL' && r.group.memory && oomKills(r.group.memory) > 0 ? 'OOM' : killedBy;
      fleet.lost.push({ replica: r.name, at_ms: Date.now(), code, signal: sig });
      log(`replica ${r.name} (pid ${r.child.pid}) exited (${sig || `status ${code}`})`);
      if (fleet.lost.length === fleet.replicas.length) for (const fn of fleet.exitListeners) fn({ code, signal: sig });
    });
    fleet.replicas.push(r);
  }
  const { limits } = fleet.replicas[0];
  if (limits) stack.limits = { ...limits, applies_to: 'each replica' };
}

/** The stack's view of the fleet: the balancer as its endpoint, the node cgroup (every replica) as its CPU. */
function describeFleet(stack, { replicas, lb, group, nodeCpus, exitListeners }) {
  stack.node = {
    pid: replicas[0].child.pid,
    cpus: nodeCpus,
    rpc_url: lb.url,
    ws_url: null,
    metrics_url: replicas[0].metricsUrl,
    replicas: replicas.map((r) => ({ name: r.name, pid: r.child.pid, rpc_url: r.rpcUrl, metrics_url: r.metricsUrl })),
  };
  stack.rpcUrl = lb.url;
  stack.cpu = cgroupSource(group); // the node cgroup holds every replica's: the fleet's CPU
  stack.nodeCgroup = group;
  stack.cpuCheck = null;
  stack.memoryBytes = () => group.memoryBytes();
  stack.nodeLog = replicas[0].logFile;
  stack.extraLogs = [
    ...replicas.slice(1).map((r) => ({ file: r.logFile, name: `${r.name}.log` })),
    { file: lb.configFile, name: 'haproxy.cfg', whole: true },
  ];
  stack.onNodeExit = (fn) => exitListeners.push(fn);
}

/**
 * Starts the fleet: replicas, then HAProxy. Sets what the stack's users need (rpcUrl: the balancer; cpu: the node
 * cgroup, which holds every replica; onNodeExit: every replica gone) and stack.fleet (its window hook and record).
 * Returns the measured nodes for the network (src/network/host-network.js) and the replicas' metrics for Prometheus.
 */
async function startHostFleet(stack, s, ctx) {
  const { group, nodeCpus, balancerCpus, workDir, runId, log, signal } = ctx;
  if (!group) throw new Error('REPLICAS: a fleet needs writable cgroups (one per replica); run as root');
  const fleet = { replicas: [], lost: [], exitListeners: [], stopping: false };
  await startReplicas(stack, s, fleet, ctx);
  const { replicas, lost, exitListeners } = fleet;
  const balancer = await startBalancer(s, stack, { replicas, workDir, runId, cpus: balancerCpus, log, signal });
  describeFleet(stack, { replicas, lb: balancer.lb, group, nodeCpus, exitListeners });
  stack.fleet = fleetHooks(s, {
    replicas,
    lost,
    lb: { counts: balancer.lb.counts, logText: async () => readOr(balancer.lb.logFile) },
    lbGroup: balancer.group,
    balancerCpus,
    healthCheck: HEALTH_BODY,
    lagCheck: balancer.agents,
  });
  const members = replicas.map((r) => ({
    name: r.name,
    nodeKeyHex: r.nodeKeyHex,
    p2pPort: r.ports.p2p,
    authPort: r.ports.auth,
    rpcUrl: r.rpcUrl,
    metricsUrl: r.metricsUrl,
    cpu: { read: async () => r.group.cpu() }, // SYNC=network: its own CPU over its sync
    logFile: r.logFile,
  }));
  // Prometheus scrapes every replica, each series labelled with its replica: sums over them are the fleet's.
  const withMetrics = replicas.filter((r) => r.cmd.metrics);
  const metrics = withMetrics.length
    ? {
        path: withMetrics[0].cmd.metrics.path,
        targets: withMetrics.map((r) => ({ address: r.cmd.metrics.target, replica: r.name })),
      }
    : null;
  return { members, metrics };
}

module.exports = { startHostFleet };
