// @ts-check
'use strict';
// NETWORK_NODES in the compose runtime: N more nodes of the same client as services `network-1` .. `network-N` of
// the run's compose project, from the node's own image, each with its own volume, pinned to the cores the node does
// not use. The network's compose file is written per run into the work folder (network.yml) beside the limits file:
// it also gives the `node` service what a member needs (the network's folder with the genesis and the engine secret;
// its engine API and metrics published on 127.0.0.1 for chainperf's driver and watch). Every data volume gets the
// network's genesis with a one-off `compose run` of the client's own init before `up`. The nodes peer by service
// name (devp2p resolves it), and from there on the network is the host runtime's (members.js): the same driver, watch
// and feed.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const docker = require('../platform/docker');
const { cgroupOfPid, lastingCgroupOfPid } = require('../platform/pid-cgroup');
const { freePorts } = require('../util/net');
const { writeJwtSecret } = require('./engine-api');
const { peerMesh, runNetwork, stopNetworkParts, nodeSyncMode } = require('./members');
const { chainLoadOf } = require('./chain-load/network');
const { copyProblem } = require('../state/disk');

/** Where the network's folder (genesis, secret) is mounted in every container of the network. */
const MOUNT = '/chainperf-network';
const nodeKey = () => crypto.randomBytes(32).toString('hex');
/** A port published on the host's loopback only. */
const loopback = (port, inside) => `127.0.0.1:${port}:${inside}`;

/**
 * The network's compose file (JSON, which is YAML: Compose reads it as is): the network nodes' services and volumes,
 * and what the node service gains as a member. ./run.sh config renders it with stand-in keys and ports.
 * @param {string} file
 * @param {import('../contracts').Scenario} s
 * @param {{client: import('../contracts').Client, dir: string, imageRef: string, cpus: string,
 *   nodePorts: {auth: number, metrics: number}, chainNeeds?: object|null,
 *   peers: {name: string, nodeKeyHex: string, ports: {rpc: number, auth: number, metrics: number}}[]}} o
 */
function writeNetworkFile(file, s, { client, dir, imageRef, cpus, nodePorts, peers, chainNeeds = null }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const inside = containerPorts(client);
  const services = {
    node: {
      ports: [loopback(nodePorts.auth, inside.auth), loopback(nodePorts.metrics, inside.metrics)],
      volumes: [`${dir}:${MOUNT}:ro`],
    },
  };
  for (const p of peers) {
    const cmd = net.peerCommand(s, {
      dataDir: '/data',
      ports: inside,
      external: true,
      network: { nodeKeyHex: p.nodeKeyHex, jwtFile: `${MOUNT}/jwt.hex`, chainNeeds }, // CHAIN_LOAD: room for it
    });
    const service = { imageRef, command: cmd.args, cpus, ports: p.ports, inside, dir, name: p.name };
    services[p.name] = { ...memberService(service), labels: { 'io.chainperf.role': 'network-node' } };
  }
  const volumes = Object.fromEntries(peers.map((p) => [`${p.name}-data`, {}]));
  fs.writeFileSync(file, JSON.stringify({ services, volumes }, null, 2));
}

/**
 * A node of the run's network as a compose service (a network node, a fleet's replica): the node's image and a
 * command, pinned to cpus, its RPC, engine API and metrics published on 127.0.0.1, the network's folder mounted
 * read-only, its own data volume (`<name>-data`).
 */
function memberService({ imageRef, command, cpus, ports, inside, dir, name }) {
  return {
    image: imageRef,
    command,
    cpuset: cpus,
    restart: 'no',
    stop_grace_period: '30s',
    ports: [
      loopback(ports.rpc, inside.rpc),
      loopback(ports.auth, inside.auth),
      loopback(ports.metrics, inside.metrics),
    ],
    volumes: [`${dir}:${MOUNT}:ro`, `${name}-data:/data`],
  };
}

/** The ports the client's container listens on. */
const containerPorts = (client) =>
  /** @type {NonNullable<import('../contracts').ComposeService['ports']>} */ (
    /** @type {import('../contracts').ComposeService} */ (client.compose).ports
  );

/**
 * Before `up`: the genesis and the secret in the work folder, node keys, published ports, and the compose file that
 * adds the network nodes and makes the node a member. `prepared.network` goes to the node's command line.
 * @param {import('../contracts').Scenario} s
 * @param {{client: import('../contracts').Client, bin: string, workDir: string, imageRef: string, cpus: string}} o
 */
async function planComposeNetwork(s, { client, bin, workDir, imageRef, cpus }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const inside = containerPorts(client);
  const dir = path.join(workDir, 'network');
  fs.mkdirSync(dir, { recursive: true });
  const load = chainLoadOf(s);
  net.writeGenesis(bin, path.join(dir, 'genesis.json'), { gasLimit: load ? load.needs.gas_limit : null });
  const jwtFile = writeJwtSecret(path.join(dir, 'jwt.hex'));
  const member = { nodeKeyHex: nodeKey(), jwtFile: `${MOUNT}/jwt.hex`, syncMode: nodeSyncMode(s) };
  const nodePorts = /** @type {{auth: number, metrics: number}} */ (await freePorts(['auth', 'metrics']));
  const peers = [];
  for (let i = 1; i <= s.NETWORK_NODES; i++) {
    const ports = /** @type {{rpc: number, auth: number, metrics: number}} */ (
      await freePorts(['rpc', 'auth', 'metrics'])
    );
    peers.push({ name: `network-${i}`, nodeKeyHex: nodeKey(), ports });
  }
  const file = path.join(dir, 'network.yml');
  writeNetworkFile(file, s, { client, dir, imageRef, cpus, nodePorts, peers, chainNeeds: load ? load.needs : null });
  return { dir, file, jwtFile, member, nodePorts, peers, cpus, inside };
}

/**
 * Before `up` (or the swarm's deploy): the network's genesis written into the node's volume and each network node's,
 * by the client's init in a one-off `compose run` (the volumes are the project's, which a stack of the same name uses);
 * skip: services whose volume is not here (SWARM_NODE: the node's container runs the init itself).
 */
async function initComposeNetwork(s, plan, o) {
  const { client, run, log, replicas = [], state = null, genesisOnly = null, skip = [] } = o;
  const peers = plan.peers.map((p) => p.name);
  if (state && genesisOnly) {
    // SYNC=network: the replicas start as the node does, with the profile's genesis block alone, and sync the state
    await copyStateInto(s, replicas, { state, run, log, from: genesisOnly });
    return copyStateInto(s, peers, { state, run, log });
  }
  if (state) return copyStateInto(s, [...replicas, ...peers], { state, run, log });
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const services = ['node', ...replicas, ...plan.peers.map((p) => p.name)].filter((x) => !skip.includes(x));
  log(`network: writing the network's genesis into the volumes of ${services.join(', ')}`);
  for (const svc of services) {
    const args = net.initArgs('/data', `${MOUNT}/genesis.json`, s.DB_ENGINE);
    const r = await run(['run', '--rm', '--no-deps', '-T', svc, ...args]);
    if (r.code !== 0)
      throw new Error(
        `network: ${client.name} init in service ${svc} exited with status ${r.code}: ${r.out.trim().split('\n').slice(-2).join(' / ')}`,
      );
  }
}

/**
 * With a STATE profile: a copy of the cached profile's folder in each network node's and replica's volume (the node's
 * own volume holds its copy already, or the genesis block alone with SYNC=network; `from`: that folder instead, for
 * the replicas that sync as the node does), by a one-off `compose run` of cp
 * in the service's own image, with the cached folder mounted read-only. Checks the engine's disk for every copy first.
 */
async function copyStateInto(s, services, { state, run, log, from = null }) {
  if (!services.length) return;
  const root = await docker.dataRoot();
  const problem = copyProblem(
    `${s.STATE} (a copy for each of ${services.join(', ')})`,
    state.manifest.size_bytes * services.length,
    root,
  );
  if (problem) throw new Error(problem);
  const what = from ? `STATE=${s.STATE}'s genesis block alone` : `STATE=${s.STATE}`;
  log(`network: copying ${what} into the volumes of ${services.join(', ')}`);
  for (const svc of services) {
    const mount = ['-v', `${from || state.dataDir}:/chainperf-state:ro`, '--entrypoint', 'cp'];
    const r = await run(['run', '--rm', '--no-deps', '-T', ...mount, svc, '-a', '/chainperf-state/.', '/data/']);
    if (r.code !== 0)
      throw new Error(
        `network: copying STATE=${s.STATE} into service ${svc}'s volume exited with status ${r.code}: ${r.out.trim().split('\n').slice(-2).join(' / ')}`,
      );
  }
}

/** Looks at the network's containers every 2 s and tells each one's listeners once when it is no longer running. */
function watchContainers(peers, onTick = () => {}) {
  return docker.watchExits(peers, {
    idOf: (p) => p.containerId,
    everyMs: 2000,
    onTick,
    onExit: (p, info) => {
      p.exited = true;
      for (const fn of p.listeners) fn(info ? info.State.ExitCode : null, info && info.State.OOMKilled ? 'OOM' : null);
    },
  });
}

/**
 * The network containers' CPU and memory together, from their cgroups on this host, for the watch (null when one is
 * not found). A container that exits keeps the last counts read of it, so the sum over a window stays whole.
 */
function containersGroup(pids) {
  const groups = pids.map((pid) => lastingCgroupOfPid(pid));
  if (!groups.length || groups.some((g) => !g)) return null;
  return {
    cpu: () => ({ total_s: groups.reduce((t, g) => t + g.cpu().total_s, 0) }),
    memoryBytes: () => groups.reduce((t, g) => t + g.memoryBytes(), 0),
  };
}

/** The node container's CPU from its cgroup on this host (SYNC=network: the CPU over the sync), or null. */
async function nodeCgroupCpu(stack) {
  const info = stack.node && stack.node.container_id ? await docker.inspectContainer(stack.node.container_id) : null;
  const g = info && info.State.Pid ? cgroupOfPid(info.State.Pid) : null;
  return g ? { read: async () => g.cpu() } : null;
}

/** The network nodes as the shared network code knows them (members.js: Peer), from their running containers. */
async function networkPeers(plan, net, services) {
  const peers = [];
  for (const p of plan.peers) {
    const id = await services.containerOf(p.name);
    const info = id && (await docker.inspectContainer(id));
    if (!info) throw new Error(`compose started no ${p.name} container`);
    const listeners = [];
    peers.push({
      name: p.name,
      rpcUrl: `http://127.0.0.1:${p.ports.rpc}`,
      authUrl: `http://127.0.0.1:${p.ports.auth}`,
      metricsUrl: `http://127.0.0.1:${p.ports.metrics}/debug/metrics/prometheus`,
      enode: net.enode(p.nodeKeyHex, plan.inside.p2p, p.name),
      container: info.Name.replace(/^\//, ''),
      containerId: info.Id,
      hostPid: info.State.Pid,
      exited: false,
      listeners,
      onExit: (fn) => listeners.push(fn),
    });
  }
  return peers;
}

/**
 * After `up` and once the node answers: the network nodes' containers, the mesh, the driver, watch and feed. Their
 * logs are saved into the network folder before the project goes down (the report keeps their tails).
 * @param {import('../contracts').Scenario} s
 * @param {object} stack the compose runtime's stack
 * @param {{client: import('../contracts').Client, plan: Awaited<ReturnType<typeof planComposeNetwork>>,
 *   services: {containerOf: (name: string) => Promise<string|null>, logsOf: (name: string) => Promise<string>},
 *   nodeRpcUrl?: string, nodeHost?: string, replicas?: import('./members').Member[], log: (m: string) => void,
 *   signal?: AbortSignal}} o nodeRpcUrl: the node's own endpoint (with a fleet the run's is the balancer);
 *   nodeHost: where the node's engine API and metrics are published (SWARM_NODE: the swarm node it runs on);
 *   replicas: a fleet's other replicas, members too; services: a service's container and its log (compose: `compose
 *   ps` and `compose logs`; swarm: the stack's task container)
 */
async function startComposeNetwork(
  s,
  stack,
  { client, plan, services, nodeRpcUrl, nodeHost = '127.0.0.1', replicas = [], log, signal },
) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const peers = await networkPeers(plan, net, services);
  const pids = peers.map((p) => p.hostPid);
  const parts = { driver: null, feed: null, watch: null };
  const group = containersGroup(pids);
  // read every 2 s too: a container that exits keeps the counts of its last read
  const stopWatching = watchContainers(peers, () => group && group.cpu());
  stack.cleanups.push(async () => {
    await stopNetworkParts(parts);
    stopWatching();
    for (const p of plan.peers)
      fs.writeFileSync(
        path.join(plan.dir, `${p.name.replace('network-', 'node-')}.log`),
        await services.logsOf(p.name),
      );
  });
  log(
    `network: ${s.NETWORK_NODES} more ${s.CLIENT} nodes run as services ${peers.map((p) => p.name).join(', ')} on cpus ${plan.cpus} (${net.protocol})`,
  );
  const member = {
    name: replicas.length ? 'replica-1' : 'node under test',
    nodeKeyHex: plan.member.nodeKeyHex,
    p2pPort: plan.inside.p2p,
    enode: net.enode(plan.member.nodeKeyHex, plan.inside.p2p, 'node'),
    authUrl: `http://${nodeHost}:${plan.nodePorts.auth}`,
    rpcUrl: nodeRpcUrl || stack.rpcUrl,
    metricsUrl: `http://${nodeHost}:${plan.nodePorts.metrics}${client.compose ? client.compose.metrics.path : ''}`,
  };
  const members = [member, ...replicas]; // REPLICAS: every replica is a member (compose-fleet.js)
  await peerMesh(peers, { net, members, signal });
  await runNetwork(s, stack, {
    net,
    peers,
    members,
    jwtFile: plan.jwtFile,
    group, // their CPU and memory, from their containers' cgroups; none of it the node's
    parts,
    record: { cpus: plan.cpus, containers: peers.map((p) => p.container) },
    syncCpu: await nodeCgroupCpu(stack), // cAdvisor's samples are too coarse for a sync of a second
    log,
    signal,
  });
}

module.exports = {
  MOUNT,
  memberService,
  loopback,
  writeNetworkFile,
  planComposeNetwork,
  initComposeNetwork,
  startComposeNetwork,
};
