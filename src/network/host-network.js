// @ts-check
'use strict';
// NETWORK_NODES on the host runtime: N more nodes of the same client beside
// the node under test, as processes in their own cgroup (their CPU never counts
// as the node's), pinned to the cores the node does not use where there are
// any. They share one genesis with the node under test, peer with it through
// the client's own protocol (static peers, no discovery beyond the machine),
// get their blocks from the engine-API driver (engine-driver.js, the
// consensus-client stand-in; the first network node produces), and
// NETWORK_TPS transfers enter through them (tx-feed.js).
//
// prepareNetwork runs before the node under test starts (its genesis, its
// node key, the engine secret); startNetwork once it runs.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { Cgroup, cgroupsUsable, spawnInGroup, groupsLeftover } = require('../platform/cgroup');
const { freePorts } = require('../util/net');
const { rpcCall } = require('../util/rpc');
const { processId } = require('../util/proc');
const { sleep } = require('../util/time');
const { writeJwtSecret, startEngineDriver } = require('./engine-driver');
const { fundSenders, startTxFeed } = require('./tx-feed');
const { startNetworkWatch, counterReader } = require('./watch');
const { syncFromNetwork } = require('./sync');

const nodeKey = () => crypto.randomBytes(32).toString('hex');

/**
 * Before the node under test starts: the network's genesis written into its data folder, and what its command line
 * needs to join (its node key, the engine API's secret).
 * @param {import('../contracts').Scenario} s
 * @param {{client: import('../contracts').Client, bin: string, workDir: string, dataDir: string}} o
 */
function prepareNetwork(s, { client, bin, workDir, dataDir }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const dir = path.join(workDir, 'network');
  fs.mkdirSync(dir, { recursive: true });
  const genesisFile = path.join(dir, 'genesis.json');
  net.writeGenesis(bin, genesisFile);
  net.init(bin, dataDir, genesisFile, s.DB_ENGINE);
  const jwtFile = writeJwtSecret(path.join(dir, 'jwt.hex'));
  return { dir, genesisFile, jwtFile, member: { nodeKeyHex: nodeKey(), jwtFile } };
}

/** Spawns network node i in the network's group; its log in the network folder. */
async function spawnPeer(s, { client, bin, prepared, group, cpus, i }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  const dataDir = path.join(prepared.dir, `node-${i}`);
  fs.mkdirSync(dataDir, { recursive: true });
  net.init(bin, dataDir, prepared.genesisFile, s.DB_ENGINE);
  const { rpc, metrics, p2p, auth } = await freePorts(['rpc', 'metrics', 'p2p', 'auth']);
  const ports = { rpc, metrics, p2p, auth };
  const member = { nodeKeyHex: nodeKey(), jwtFile: prepared.jwtFile };
  const cmd = net.peerCommand(s, { dataDir, ports, network: member });
  const logFd = fs.openSync(path.join(prepared.dir, `node-${i}.log`), 'a');
  const argv = group ? [bin, ...cmd.args] : ['taskset', '-c', cpus, bin, ...cmd.args];
  const child = spawnInGroup(group, argv, { stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  return {
    name: `network-${i}`,
    child,
    rpcUrl: cmd.rpcUrl,
    authUrl: `http://127.0.0.1:${ports.auth}`,
    metricsUrl: cmd.metrics ? `http://${cmd.metrics.target}${cmd.metrics.path}` : null,
    enode: net.enode(member.nodeKeyHex, ports.p2p),
  };
}

/**
 * Waits until every URL answers `method`, for up to timeoutS (a geth start takes seconds, but on a loaded machine
 * opening its database has taken a minute).
 */
async function waitForRpc(urls, method, { timeoutS = 120, signal, what }) {
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const answers = await Promise.all(urls.map((u) => rpcCall(u, method, [], { timeoutMs: 2000 }).catch(() => null)));
    if (answers.every((a) => a !== null)) return answers;
    if (Date.now() > deadline) {
      const silent = urls.filter((u, i) => answers[i] === null).map((u) => u.replace(/^https?:\/\//, ''));
      throw new Error(`${what}: ${silent.join(', ')} not answering after ${timeoutS} s`);
    }
    await sleep(250, signal);
  }
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
    if (parts.feed) await parts.feed.stop();
    if (parts.driver) await parts.driver.stop();
    if (parts.watch) parts.watch.stop(); // before the processes go: their exits are not losses
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
 * A node measured on the network: the node under test, or each replica of a fleet (REPLICAS).
 * @typedef {{name: string, nodeKeyHex: string, p2pPort: number, authPort: number, rpcUrl: string,
 *   metricsUrl: string|null}} Member
 */

/**
 * Starts the network nodes, waits for them and the measured nodes, and makes a full mesh of static peers.
 * @param {import('../contracts').Scenario} s
 * @param {object[]} peers filled here
 * @param {{client: import('../contracts').Client, bin: string, prepared: ReturnType<typeof prepareNetwork>,
 *   group: object|null, cpus: string, members: Member[], log: (m: string) => void, signal?: AbortSignal}} o
 */
async function startPeers(s, peers, { client, bin, prepared, group, cpus, members, log, signal }) {
  const net = /** @type {import('../contracts').NetworkPeer} */ (client.network);
  log(
    `network: starting ${s.NETWORK_NODES} more ${s.CLIENT} nodes on cpus ${cpus} (${net.protocol}; their logs in the work folder's network/)`,
  );
  for (let i = 1; i <= s.NETWORK_NODES; i++) peers.push(await spawnPeer(s, { client, bin, prepared, group, cpus, i }));
  await waitForRpc([...members.map((m) => m.rpcUrl), ...peers.map((p) => p.rpcUrl)], 'net_version', {
    signal,
    what: 'the measured nodes and the network nodes',
  });
  // Each network node dials every measured node and the network nodes after it: every link once. Measured nodes
  // (replicas) do not dial each other: each has the network nodes as its own peers.
  const measured = members.map((m) => net.enode(m.nodeKeyHex, m.p2pPort));
  for (const [i, p] of peers.entries()) {
    for (const target of [...measured, ...peers.slice(i + 1).map((q) => q.enode)])
      await rpcCall(p.rpcUrl, 'admin_addPeer', [target]);
  }
}

/** A measured node as the driver knows it. */
const driven = (m) => ({ name: m.name, authUrl: `http://127.0.0.1:${m.authPort}` });

/**
 * The engine-API driver over every node, the first network node producing. With SYNC=network the node under test
 * is left out until it joins by sync (src/network/sync.js).
 */
async function driveBlocks(s, peers, { prepared, members, log }) {
  const genesis = await rpcCall(peers[0].rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
  const driver = startEngineDriver({
    nodes: [
      ...peers.map((p) => ({ name: p.name, authUrl: p.authUrl })),
      ...(s.SYNC === 'network' ? [] : members.map(driven)),
    ],
    secretHex: fs.readFileSync(prepared.jwtFile, 'utf8'),
    head: genesis.hash,
    headTimeS: Number(genesis.timestamp),
    periodS: s.DEV_BLOCK_TIME_S,
    feeRecipient: `0x${'00'.repeat(19)}01`,
    log,
  });
  log(
    `network: blocks every ${s.DEV_BLOCK_TIME_S} s built by ${peers[0].name} on request of chainperf's engine-API driver (the consensus-client stand-in), handed to every node`,
  );
  return driver;
}

/** NETWORK_TPS transfers through the network nodes, once their senders are funded (after the first blocks). */
async function feedTransactions(s, peers, { devKey, log, signal }) {
  const wallets = await fundSenders({ url: peers[0].rpcUrl, devKey, seed: s.SEED, rpc: rpcCall, signal });
  const feed = startTxFeed({ urls: peers.map((p) => p.rpcUrl), wallets, tps: s.NETWORK_TPS, rpc: rpcCall, log });
  log(
    `network: ${s.NETWORK_TPS} transfers per second enter through the network nodes, never through the node under test`,
  );
  return feed;
}

/**
 * SYNC=network: the history is built on the network (through network-1), and syncNode() makes the node under test
 * download the chain from its peers; the session calls it in place of the usual sync wait.
 */
function syncHooks(s, stack, { peers, driver, net, member, log, signal }) {
  stack.historyUrl = peers[0].rpcUrl;
  return {
    syncNode: ({ timeoutS }) =>
      syncFromNetwork({
        nodeRpcUrl: member.rpcUrl,
        networkRpcUrl: peers[0].rpcUrl,
        member: driven(member),
        driver,
        readCounters: counterReader(member.metricsUrl, net.counters, new Set()),
        cpu: stack.cpu && stack.cpu.read && !stack.cpu.sampled ? stack.cpu : null,
        timeoutS,
        signal,
        log,
      }),
  };
}

/**
 * Once the node under test runs: starts the network nodes, peers them with it and with each other, drives their
 * blocks and feeds them transactions. Sets stack.network (what the run records, the window hook), stack.devKey (the
 * node has no unlocked account: history is signed with the dev key) and pushes its teardown into stack.cleanups.
 * @param {import('../contracts').Scenario} s
 * @param {object} stack the host runtime's stack (node's rpcUrl, cleanups, leftovers)
 * @param {{client: import('../contracts').Client, bin: string, prepared: ReturnType<typeof prepareNetwork>,
 *   runId: string, cpus: string, members: Member[], log: (m: string) => void, signal?: AbortSignal}} o members:
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
  parts.driver = await driveBlocks(s, peers, o);
  const watch = startNetworkWatch({
    rpcUrl: members[0].rpcUrl,
    metricsUrl: members[0].metricsUrl,
    counters: net.counters,
    peers,
    driver: parts.driver,
    group,
    log,
  });
  parts.watch = watch;
  watch.profileFrames = net.profileFrames || null; // NODE_PROFILE=cpu: the share of the node's CPU in networking
  if (s.NETWORK_TPS > 0)
    watch.feed = parts.feed = await feedTransactions(s, peers, { devKey: net.devKey, log, signal });
  stack.devKey = net.devKey;
  stack.network = {
    nodes: peers,
    watch,
    ...(s.SYNC === 'network'
      ? syncHooks(s, stack, { peers, driver: parts.driver, net, member: members[0], log, signal })
      : {}),
    record: () => ({
      nodes: s.NETWORK_NODES,
      protocol: net.protocol,
      tps: s.NETWORK_TPS,
      cpus,
      blocks:
        "built by network-1 on request of chainperf's engine-API driver (engine_forkchoiceUpdatedV3, engine_getPayloadV5, engine_newPayloadV4), handed to every node",
      node_pids: peers.map((p) => p.child.pid),
      ...(members.length > 1 ? { watched: members[0].name } : {}),
    }),
  };
}

module.exports = { prepareNetwork, startNetwork };
