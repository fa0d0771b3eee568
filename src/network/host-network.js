// @ts-check
'use strict';
// NETWORK_NODES on the host runtime: N more nodes of the same client beside
// the node under test, as processes in their own cgroup (their CPU never counts
// as the node's), pinned to the cores the node does not use where there are
// any. They share one genesis with the node under test, peer with it through
// the client's own protocol (static peers, no discovery beyond the machine),
// get their blocks from the engine-API driver (engine-driver.js, the
// consensus-client stand-in; the first network node produces), and
// NETWORK_TPS transfers enter through them (tx-feed.js); what does not depend
// on where the nodes run is in members.js.
//
// prepareNetwork runs before the node under test starts (its genesis, its
// node key, the engine secret); startNetwork once it runs.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { copyProblem } = require('../state/disk');
const { Cgroup, cgroupsUsable, spawnInGroup, groupsLeftover } = require('../platform/cgroup');
const { freePorts } = require('../util/net');
const { processId } = require('../util/proc');
const { writeJwtSecret } = require('./engine-api');
const { peerMesh, runNetwork, stopNetworkParts, nodeSyncMode } = require('./members');
const { chainLoadOf } = require('./chain-load/network');

const nodeKey = () => crypto.randomBytes(32).toString('hex');

/**
 * Before the node under test starts: the network's genesis written into its data folder, and what its command line
 * needs to join (its node key, the engine API's secret). With a STATE profile (state: the restored one) the genesis is
 * the profile's: every network node gets a copy of the profile's data folder, and the node under test has its own copy
 * (SYNC=local) or the genesis block alone, which geth then snap-syncs (SYNC=network).
 * @param {import('../contracts').Scenario} s
 * @param {{client: import('../contracts').Client, bin: string, workDir: string, dataDir: string,
 *   state?: {dataDir: string, manifest: {size_bytes: number}}|null}} o
 */
function prepareNetwork(s, { client, bin, workDir, dataDir, state = null }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const dir = path.join(workDir, 'network');
  fs.mkdirSync(dir, { recursive: true });
  const genesisFile = path.join(dir, 'genesis.json');
  const load = chainLoadOf(s); // CHAIN_LOAD: blocks that hold its traffic, network nodes with room for it
  if (state) {
    // each replica has a copy of its own too, unless it syncs the state from the network (SYNC=network)
    const replicas = s.BALANCER === 'haproxy' && s.SYNC !== 'network' ? s.REPLICAS : 0;
    const copies = s.NETWORK_NODES + replicas;
    const problem = copyProblem(
      `${s.STATE} (a copy for each of ${s.NETWORK_NODES} network nodes${replicas ? ` and ${replicas} replicas` : ''})`,
      state.manifest.size_bytes * copies,
      dir,
    );
    if (problem) throw new Error(problem);
  } else {
    net.writeGenesis(bin, genesisFile, { gasLimit: load ? load.needs.gas_limit : null });
    net.init(bin, dataDir, genesisFile, s.DB_ENGINE);
  }
  const jwtFile = writeJwtSecret(path.join(dir, 'jwt.hex'));
  return {
    dir,
    genesisFile,
    stateDir: state ? state.dataDir : null,
    jwtFile,
    chainNeeds: load ? load.needs : null,
    member: { nodeKeyHex: nodeKey(), jwtFile, syncMode: nodeSyncMode(s) },
  };
}

/** A network node's or a replica's data folder: a copy of the STATE profile's, or the network's genesis (init). */
function memberData(s, net, bin, prepared, dataDir, { name, log }) {
  if (prepared.stateDir) {
    const t0 = Date.now();
    execFileSync('cp', ['-a', '--reflink=auto', prepared.stateDir, dataDir]);
    log(`${name}: its copy of STATE=${s.STATE} made in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  net.init(bin, dataDir, prepared.genesisFile, s.DB_ENGINE);
}

/** Spawns network node i in the network's group; its log in the network folder. */
async function spawnPeer(s, { client, bin, prepared, group, cpus, i, log }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const dataDir = path.join(prepared.dir, `node-${i}`);
  memberData(s, net, bin, prepared, dataDir, { name: `network-${i}`, log });
  const { rpc, metrics, p2p, auth } = await freePorts(['rpc', 'metrics', 'p2p', 'auth']);
  const ports = { rpc, metrics, p2p, auth };
  const member = { nodeKeyHex: nodeKey(), jwtFile: prepared.jwtFile, chainNeeds: prepared.chainNeeds };
  const cmd = net.peerCommand(s, { dataDir, ports, network: member });
  const logFd = fs.openSync(path.join(prepared.dir, `node-${i}.log`), 'a');
  const argv = group ? [bin, ...cmd.args] : ['taskset', '-c', cpus, bin, ...cmd.args];
  const child = spawnInGroup(group, argv, { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  return {
    name: `network-${i}`,
    child,
    pid: child.pid,
    onExit: (fn) => child.on('exit', fn),
    rpcUrl: cmd.rpcUrl,
    authUrl: `http://127.0.0.1:${ports.auth}`,
    metricsUrl: cmd.metrics ? `http://${cmd.metrics.target}${cmd.metrics.path}` : null,
    enode: net.enode(member.nodeKeyHex, ports.p2p),
  };
}

/** Stops the network's processes: SIGTERM (geth closes its database), SIGKILL after 10 s. */
async function stopPeers(peers) {
  await Promise.all(
    peers.map(async (p) => {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      const gone = new Promise((r) => p.child.once('exit', r));
      p.child.kill('SIGTERM');
      const t = setTimeout(() => p.child.kill('SIGKILL'), 10000);
      await gone;
      clearTimeout(t);
    }),
  );
}

/** The network's cleanup (feed, driver, watch, processes, cgroup) and what a killed run would leave. */
function keepTidy(stack, { peers, parts, group }) {
  stack.cleanups.push(async () => {
    await stopNetworkParts(parts); // before the processes go: their exits are not losses
    await stopPeers(peers);
    if (group) await group.destroy();
  });
  stack.leftovers.push(() => {
    if (group) return groupsLeftover([group]);
    const live = peers.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    if (!live.length) return null;
    const pids = live.map((p) => p.child.pid);
    return {
      what: `network node processes ${pids.join(', ')}`,
      command: `kill ${pids.join(' ')}`,
      process: processId(pids[0]),
    };
  });
}

/**
 * Starts the network nodes, waits for them and the measured nodes, and makes a full mesh of static peers.
 * @param {import('../contracts').Scenario} s
 * @param {object[]} peers filled here
 * @param {{client: import('../contracts').Client, bin: string, prepared: ReturnType<typeof prepareNetwork>,
 *   group: object|null, cpus: string, members: import('./members').Member[], log: (m: string) => void,
 *   signal?: AbortSignal}} o
 */
async function startPeers(s, peers, { client, bin, prepared, group, cpus, members, log, signal }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  log(
    `network: starting ${s.NETWORK_NODES} more ${s.CLIENT} nodes on cpus ${cpus}${prepared.stateDir ? `, each on a copy of STATE=${s.STATE}` : ''} (${net.protocol}; their logs in the work folder's network/)`,
  );
  for (let i = 1; i <= s.NETWORK_NODES; i++)
    peers.push(await spawnPeer(s, { client, bin, prepared, group, cpus, i, log }));
  await peerMesh(peers, { net, members, signal });
}

/**
 * Once the node under test runs: starts the network nodes, peers them with it and with each other, drives their
 * blocks and feeds them transactions. Sets stack.network (what the run records, the window hook), stack.devKey (the
 * node has no unlocked account: history is signed with the dev key) and pushes its teardown into stack.cleanups.
 * @param {import('../contracts').Scenario} s
 * @param {object} stack the host runtime's stack (node's rpcUrl, cleanups, leftovers)
 * @param {{client: import('../contracts').Client, bin: string, prepared: ReturnType<typeof prepareNetwork>,
 *   runId: string, cpus: string, members: import('./members').Member[], log: (m: string) => void,
 *   signal?: AbortSignal}} o members:
 *   the measured nodes (the node under test; each replica of a fleet); the first is the one the watch reads
 */
async function startNetwork(s, stack, o) {
  const { client, runId, cpus, members, log, signal } = o;
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const group = cgroupsUsable() ? new Cgroup(`chainperf/${runId}/network`, { cpus }) : null;
  const peers = [];
  const parts = { driver: null, feed: null, watch: null };
  keepTidy(stack, { peers, parts, group });
  await startPeers(s, peers, { ...o, group });
  await runNetwork(s, stack, {
    net,
    peers,
    members,
    jwtFile: o.prepared.jwtFile,
    group,
    parts,
    record: { cpus, node_pids: peers.map((p) => p.pid) },
    log,
    signal,
  });
}

module.exports = { prepareNetwork, startNetwork, memberData };
