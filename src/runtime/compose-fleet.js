// @ts-check
'use strict';
// REPLICAS in the compose and swarm runtimes: replica 1 is the `node`
// service; replicas 2..N are services `replica-2` .. `replica-N` from the
// node's image with the node's own command (each its own node key and
// volume, the node's cpuset: CORES applies per replica and the replicas share
// those cores), and HAProxy is the service `haproxy` (an image built locally
// like the others) on the other cores, its configuration generated from the
// scenario and mounted. They come in one compose file written per run
// (fleet.yml). Every replica is a member of the run's network (NETWORK_NODES).
// Each replica's CPU and memory come from its container's cgroup on this
// host, the fleet's CPU is their sum, and HAProxy's counters and access log
// give each replica's requests and latency, as in the host runtime
// (fleet-hooks.js).

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const docker = require('../platform/docker');
const { lastingCgroupOfPid } = require('../platform/pid-cgroup');
const { freePorts } = require('../util/net');
const { sleep } = require('../util/time');
const { renderConfig, serverCounts, HEALTH_BODY } = require('./haproxy');
const { fleetHooks } = require('./fleet-hooks');
const { MOUNT, memberService, loopback } = require('../network/compose-network');
const { nodeSyncMode } = require('../network/members');

const LB_PORT = 8000; // inside the haproxy container
const STATS_PORT = 8001;

/** The service a replica is: replica 1 is the node itself. */
const serviceOf = (i) => (i === 1 ? 'node' : `replica-${i}`);

/** HAProxy's configuration, generated from the scenario, in the work folder (mounted into its container). */
function writeBalancerConfig(s, { workDir, replicas, inside }) {
  const dir = path.join(workDir, 'fleet');
  fs.mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(
    configFile,
    renderConfig({
      port: LB_PORT,
      statsPort: STATS_PORT,
      servers: replicas.map((r) => ({ name: r.name, host: r.service, port: inside.rpc })),
      algorithm: s.LB_ALGORITHM,
      healthBody: HEALTH_BODY,
      bind: '0.0.0.0',
      dns: true,
    }),
  );
  return { dir, configFile };
}

/**
 * Before `up`: the fleet's compose file (replicas 2..N and HAProxy) and HAProxy's configuration, in the work folder.
 * @param {import('../contracts').Scenario} s
 * @param {{client: import('../contracts').Client, workDir: string, imageRef: string, haproxyRef: string,
 *   nodeCpus: string, balancerCpus: string, network: {dir: string, member: {nodeKeyHex: string}}}} o
 */
async function planComposeFleet(s, { client, workDir, imageRef, haproxyRef, nodeCpus, balancerCpus, network }) {
  const compose = /** @type {import('../contracts').ComposeService} */ (client.compose);
  const inside = /** @type {NonNullable<import('../contracts').ComposeService['ports']>} */ (compose.ports);
  const replicas = [{ name: 'replica-1', service: 'node', nodeKeyHex: network.member.nodeKeyHex, ports: null }];
  for (let i = 2; i <= s.REPLICAS; i++) {
    const ports = /** @type {{rpc: number, auth: number, metrics: number}} */ (
      await freePorts(['rpc', 'auth', 'metrics'])
    );
    replicas.push({
      name: `replica-${i}`,
      service: serviceOf(i),
      nodeKeyHex: crypto.randomBytes(32).toString('hex'),
      ports,
    });
  }
  const { dir, configFile } = writeBalancerConfig(s, { workDir, replicas, inside });
  const { lb, stats } = await freePorts(['lb', 'stats']);
  const services = {};
  for (const r of replicas.slice(1)) {
    const member = { nodeKeyHex: r.nodeKeyHex, jwtFile: `${MOUNT}/jwt.hex`, syncMode: nodeSyncMode(s) };
    const command = compose.args(s, { network: member });
    const service = { imageRef, command, cpus: nodeCpus, ports: r.ports, inside, dir: network.dir, name: r.service };
    services[r.service] = { ...memberService(service), labels: { 'io.chainperf.role': 'replica' } };
  }
  services.haproxy = {
    image: haproxyRef,
    command: ['-db', '-f', '/etc/chainperf/haproxy.cfg'],
    // as its container's first process it lets SIGTERM pass (a stop took the engine's whole 10 s); SIGUSR1 is its
    // soft stop: it closes its listeners and exits once its connections are done
    stop_signal: 'SIGUSR1',
    cpuset: balancerCpus,
    restart: 'no',
    ports: [loopback(lb, LB_PORT), loopback(stats, STATS_PORT)],
    volumes: [`${configFile}:/etc/chainperf/haproxy.cfg:ro`],
    labels: { 'io.chainperf.role': 'balancer' },
    depends_on: replicas.map((r) => r.service), // started after them: it resolves their names as it starts
  };
  const volumes = Object.fromEntries(replicas.slice(1).map((r) => [`${r.service}-data`, {}]));
  const file = path.join(dir, 'fleet.yml');
  fs.writeFileSync(file, JSON.stringify({ services, volumes }, null, 2));
  return { file, configFile, replicas, lbPort: lb, statsPort: stats, nodeCpus, balancerCpus, inside };
}

/** A container's cgroup counters, kept at their last reading once it is gone (platform/cgroup.js). */
function lastingCgroup(pid) {
  const g = lastingCgroupOfPid(pid);
  if (!g) throw new Error(`REPLICAS: no cgroup found for container process ${pid}`);
  return g;
}

/** A replica's container as fleet-hooks.js knows a replica (its exit is looked for by watchReplicas). */
async function containerReplica(r, id) {
  const info = await docker.inspectContainer(id);
  const group = lastingCgroup(info.State.Pid);
  const gone = [];
  return {
    name: r.name,
    service: r.service,
    container: info.Name.replace(/^\//, ''),
    id: info.Id,
    group,
    exited: false,
    gone,
    kill: () => {
      group.cpu(); // its cgroup goes with the container: the last reading, a moment before the kill
      return docker.engine('POST', `/containers/${info.Id}/kill?signal=KILL`);
    },
    onGone: (fn) => gone.push(fn),
  };
}

/**
 * Looks every second for a replica's container that exited (keeping each one's cgroup reading fresh, so that one
 * that exits keeps its last): named in the fleet's lost replicas unless the run is stopping.
 */
function watchReplicas(replicas, fleet, log) {
  return docker.watchExits(replicas, {
    idOf: (r) => r.id,
    everyMs: 1000,
    onTick: () => replicas.forEach((r) => r.exited || r.group.cpu()),
    onExit: (r, info) => {
      r.exited = true;
      for (const fn of r.gone) fn();
      if (fleet.stopping) return;
      fleet.lost.push({ replica: r.name, at_ms: Date.now(), code: info ? info.State.ExitCode : null, signal: null });
      log(`replica ${r.name} (container ${r.container}) exited`);
    },
  });
}

/** Waits until HAProxy's health checks pass for every replica (60 s at most). */
async function waitForBalancer(counts, replicas) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const c = await counts().catch(() => ({}));
    if (replicas.every((r) => c[r.name] && c[r.name].up)) return;
    if (Date.now() > deadline) throw new Error('HAProxy: not every replica passed its health check in 60 s');
    await sleep(250);
  }
}

/**
 * After `up`, once the node answers: the fleet's containers, HAProxy's health, and what the stack's users need
 * (rpcUrl: the balancer; cpu: the replicas' cgroups summed; stack.fleet). Returns the replicas.
 * @param {import('../contracts').Scenario} s
 * @param {any} stack
 * @param {{plan: Awaited<ReturnType<typeof planComposeFleet>>, containers: any,
 *   services: {containerOf: (name: string) => Promise<string|null>, logsOf: (name: string) => Promise<string>},
 *   log: (m: string) => void, placed?: any, balancer?: any}} o placed: a fleet SWARM_NODE placed on swarm nodes
 *   (swarm-placement.js placedFleet): its replicas, their CPU and their exits, through the swarm and cAdvisor;
 *   balancer: HAProxy SWARM_BALANCER_NODE placed on another (placedBalancer)
 */
async function startComposeFleet(s, stack, { plan, containers, services, log, placed = null, balancer = null }) {
  const fleet = { lost: [], stopping: false };
  const replicas = [];
  for (const r of plan.replicas) {
    if (placed) {
      replicas.push(placed.replica(r, containers[r.service]));
      continue;
    }
    const id = r.service === 'node' ? containers.node.id : await services.containerOf(r.service);
    if (!id) throw new Error(`no running container of ${r.service}`);
    replicas.push(await containerReplica(r, id));
  }
  const lb = balancer || (await localBalancer(services, plan));
  const counts = async () =>
    serverCounts(await (await fetch(lb.statsUrl, { signal: AbortSignal.timeout(15000) })).text());
  await waitForBalancer(counts, replicas);
  const stopWatching = placed ? placed.watch(replicas, fleet, log) : watchReplicas(replicas, fleet, log);
  stack.cleanups.push(() => {
    fleet.stopping = true;
    stopWatching();
  });
  describeComposeFleet(stack, { replicas, plan, placed, lbUrl: lb.rpcUrl });
  stack.fleet = fleetHooks(s, {
    replicas,
    lost: fleet.lost,
    lb: { counts, logText: lb.logText, cpuSpan: lb.cpuSpan },
    lbGroup: lb.group || null,
    balancerCpus: balancer ? null : plan.balancerCpus,
    healthCheck: HEALTH_BODY,
    replicaSource: placed ? placed.describe : undefined,
  });
  const where = balancer ? `on ${balancer.hostname}` : `on cpus ${plan.balancerCpus}`;
  log(`HAProxy (${s.LB_ALGORITHM}) at ${stack.rpcUrl} in front of ${replicas.length} replicas, ${where}`);
  return replicas;
}

/**
 * HAProxy's container on this engine: its cgroup, its counters at the published port, its access log (the
 * container's standard output, read whole: a window's lines, not a tail).
 */
async function localBalancer(services, plan) {
  const lbId = await services.containerOf('haproxy');
  if (!lbId) throw new Error('no running container of haproxy');
  return {
    group: lastingCgroup((await docker.inspectContainer(lbId)).State.Pid),
    statsUrl: `http://127.0.0.1:${plan.statsPort}/metrics`,
    rpcUrl: `http://127.0.0.1:${plan.lbPort}`,
    logText: () => docker.containerLogs(lbId, { stdoutOnly: true }),
  };
}

/**
 * The stack's view of the fleet: the balancer as its endpoint, the replicas' cgroups together as its CPU (placed on
 * other swarm nodes: their cAdvisors', placed.cpuOf).
 */
function describeComposeFleet(stack, { replicas, plan, placed, lbUrl }) {
  stack.rpcUrl = lbUrl;
  stack.wsUrl = null;
  stack.cpuCheck = null;
  stack.node = {
    ...stack.node,
    rpc_url: stack.rpcUrl,
    replicas: replicas.map((r) => ({ name: r.name, container: r.container })),
  };
  stack.extraLogs = [{ file: plan.configFile, name: 'haproxy.cfg', whole: true }];
  if (placed) {
    stack.cpu = placed.cpuOf(replicas);
    stack.memoryBytes = undefined; // no cgroup of theirs here
    return;
  }
  stack.cpu = {
    kind: 'cgroup',
    describe: "the replicas' containers' cgroups, summed (cgroup v1 cpuacct.usage or v2 cpu.stat usage_usec)",
    split: false,
    read: async () => ({
      user_s: null,
      system_s: null,
      total_s: replicas.reduce((t, r) => t + r.group.cpu().total_s, 0),
      at_ms: Date.now(),
    }),
  };
  stack.memoryBytes = () => replicas.reduce((t, r) => t + r.group.memoryBytes(), 0);
}

/**
 * Replicas 2..N as members of the run's network: by service name inside the project, by published port from here;
 * each one's CPU from its container's cgroup (started: startComposeFleet's replicas), for its sync (SYNC=network).
 */
function fleetMembers(plan, client, started = []) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const compose = /** @type {import('../contracts').ComposeService} */ (client.compose);
  return plan.replicas.slice(1).map((r) => {
    const replica = (started || []).find((x) => x.name === r.name);
    const host = (replica && replica.host) || '127.0.0.1'; // on another swarm node: its ports are published there
    return {
      name: r.name,
      nodeKeyHex: r.nodeKeyHex,
      p2pPort: plan.inside.p2p,
      enode: net.enode(r.nodeKeyHex, plan.inside.p2p, r.service),
      authUrl: `http://${host}:${r.ports.auth}`,
      rpcUrl: `http://${host}:${r.ports.rpc}`,
      metricsUrl: `http://${host}:${r.ports.metrics}${compose.metrics.path}`,
      ...groupCpu(replica),
    };
  });
}

/** A started replica's CPU reader, for the network's sync hooks; nothing when it has no cgroup here. */
function groupCpu(replica) {
  return replica && replica.group ? { cpu: { read: async () => replica.group.cpu() } } : {};
}

module.exports = { planComposeFleet, startComposeFleet, fleetMembers, serviceOf };
