// @ts-check
'use strict';
// NETWORK_NODES on the host runtime for a client whose nodes author their own
// blocks (a Substrate node's dev mode; its hooks: clients/substrate-network.js):
// N more nodes of the same chain spec beside the node under test, as processes
// in their own cgroup (their CPU never counts as the node's) on the cores the
// node does not use. Each network node keeps the node under test and the
// network nodes before it as reserved peers (the node under test admits them
// as inbound peers, up to its PEERS' inbound share). network-1 authors a block
// every DEV_BLOCK_TIME_S; every other node, the node under test included,
// imports it from its peers: no engine-API driver. NETWORK_TPS transfers enter
// through the network nodes (the client's feed). The watch, the cgroup and the
// teardown are the engine-API network's (watch.js, host-network.js).

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { Cgroup, cgroupsUsable, spawnInGroup } = require('../platform/cgroup');
const { freePorts } = require('../util/net');
const { sleep } = require('../util/time');
const { startNetworkWatch, counterReader } = require('./watch');
const { syncAuthored } = require('./authored-sync');
const { keepTidy } = require('./host-network');

const nodeKey = () => crypto.randomBytes(32).toString('hex');

/** Before the node under test starts: the network's folder and the node's own node key (its PeerId). */
function prepareAuthoredNetwork(s, { workDir }) {
  const dir = path.join(workDir, 'network');
  fs.mkdirSync(dir, { recursive: true });
  return { dir, member: { nodeKeyHex: nodeKey() } };
}

/** Spawns network node i in the network's group; it keeps `reserved` connected; network-1 authors. */
async function spawnPeer(s, { client, bin, prepared, chainSpec, group, cpus, reserved, i }) {
  const net = /** @type {import('../contracts').AuthoringPeer} */ (client.network);
  const dataDir = path.join(prepared.dir, `node-${i}`);
  const { rpc, metrics, p2p } = await freePorts(['rpc', 'metrics', 'p2p']);
  const nodeKeyHex = nodeKey();
  const cmd = net.peerCommand(s, {
    dataDir,
    chainSpec,
    ports: { rpc, metrics, p2p },
    network: { nodeKeyHex, reserved, author: i === 1 },
  });
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
    metricsUrl: cmd.metrics ? `http://${cmd.metrics.target}${cmd.metrics.path}` : null,
    address: net.multiaddr(nodeKeyHex, p2p),
  };
}

/** Waits until every node answers (up to timeoutS: a node's start takes seconds, longer on a loaded machine). */
async function answering(nodes, net, { signal, timeoutS = 120 }) {
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const ok = await Promise.all(
      nodes.map((n) =>
        net.answers(n.rpcUrl).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (ok.every(Boolean)) return;
    if (Date.now() > deadline)
      throw new Error(
        `the node and the network nodes: ${nodes
          .filter((n, i) => !ok[i])
          .map((n) => n.name)
          .join(', ')} not answering after ${timeoutS} s`,
      );
    await sleep(250, signal);
  }
}

/**
 * Waits (up to timeoutS) until every measured node has the peers its --in-peers admits from the network; short of
 * them, says so and goes on (the window's peer count is measured either way).
 */
async function awaitPeers(s, peers, { net, members, log, signal, timeoutS = 60 }) {
  const want = Math.min(peers.length, net.inboundPeers(s.PEERS));
  const deadline = Date.now() + timeoutS * 1000;
  const short = [];
  for (const m of members) {
    let have = 0;
    while (Date.now() < deadline) {
      have = await net.peerCount(m.rpcUrl).catch(() => 0);
      if (have >= want) break;
      await sleep(1000, signal);
    }
    if (have < want) {
      short.push(`${m.name} had ${have} of its ${want} peers when the wait for them ended (${timeoutS} s)`);
      log(`network: ${short[short.length - 1]}; measuring anyway`);
    }
  }
  return short;
}

/** Waits until every measured node has network-1's best block as it is now (the history is then in them). */
async function awaitHead(net, members, producer, { signal, timeoutS = 60 }) {
  const bestBlock = net.bestBlock;
  const target = await bestBlock(producer.rpcUrl);
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const heads = await Promise.all(members.map((m) => bestBlock(m.rpcUrl).catch(() => -1)));
    if (heads.every((h) => h >= target)) return;
    if (Date.now() > deadline)
      throw new Error(
        `the history is in ${producer.name}'s block ${target}, but after ${timeoutS} s the node is at block ${Math.min(...heads)}`,
      );
    await sleep(250, signal);
  }
}

const BLOCKS = (s) =>
  `authored by network-1 every ${s.DEV_BLOCK_TIME_S} s (the client's dev mode), imported by every other node, the node under test included, from its peers; no other node authors`;

/** Starts the network nodes, each keeping the measured nodes (not with SYNC=network: they are dialled later) and the
 * network nodes before it as reserved peers; waits until every node answers. */
async function startPeers(s, peers, { net, client, bin, prepared, chainSpec, group, cpus, members, signal }) {
  const measured = s.SYNC === 'network' ? [] : members.map((m) => net.multiaddr(m.nodeKeyHex, m.p2pPort));
  for (let i = 1; i <= s.NETWORK_NODES; i++) {
    const reserved = [...measured, ...peers.map((p) => p.address)];
    peers.push(await spawnPeer(s, { client, bin, prepared, chainSpec, group, cpus, reserved, i }));
  }
  await answering([...members, ...peers], net, { signal });
}

/** NETWORK_TPS transfers through the network nodes (none at 0). */
async function feedTransactions(s, net, peers, log) {
  if (!(s.NETWORK_TPS > 0)) return null;
  const feed = await net.startFeed({ urls: peers.map((p) => p.rpcUrl), tps: s.NETWORK_TPS, seed: s.SEED, log });
  log(
    `network: ${s.NETWORK_TPS} transfers per second enter through the network nodes, never through the node under test`,
  );
  return feed;
}

/** SYNC=network: the session's syncNode(), then the wait for the node's peers as at the start. */
function syncHooks(s, stack, { net, peers, members, short, log, signal }) {
  const m = members[0];
  const cpu = stack.cpu && stack.cpu.read && !stack.cpu.sampled ? stack.cpu : null;
  return {
    syncNode: async ({ timeoutS }) => {
      const record = await syncAuthored({
        member: { name: m.name, rpcUrl: m.rpcUrl, address: net.multiaddr(m.nodeKeyHex, m.p2pPort) },
        peers,
        net,
        readCounters: counterReader(m.metricsUrl, net.counters, new Set()),
        cpu,
        timeoutS,
        signal,
        log,
      });
      short.push(...(await awaitPeers(s, peers, { net, members, log, signal })));
      return record;
    },
  };
}

/**
 * Once the node under test runs: starts the network nodes, waits until they peer with it, counts network-1's blocks,
 * feeds transactions through the network nodes and watches the node. Sets stack.network and pushes its teardown.
 * @param {import('../contracts').Scenario} s
 * @param {any} stack the host runtime's stack
 * @param {{client: import('../contracts').Client, bin: string, prepared: ReturnType<typeof prepareAuthoredNetwork>,
 *   runId: string,
 *   cpus: string, members: {name: string, rpcUrl: string, metricsUrl: string|null, nodeKeyHex: string,
 *   p2pPort: number}[], log: (m: string) => void, signal?: AbortSignal}} o
 */
async function startAuthoredNetwork(s, stack, { client, bin, prepared, runId, cpus, members, log, signal }) {
  const net = /** @type {import('../contracts').AuthoringPeer} */ (client.network);
  const group = cgroupsUsable() ? new Cgroup(`chainperf/${runId}/network`, { cpus }) : null;
  const peers = [];
  const parts = { driver: null, feed: null, watch: null };
  keepTidy(stack, { peers, parts, group });
  log(
    `network: starting ${s.NETWORK_NODES} more ${s.CLIENT} nodes of the same chain spec on cpus ${cpus} (${net.protocol}; their logs in the work folder's network/)`,
  );
  const chainSpec = stack.chainSpec;
  await startPeers(s, peers, { net, client, bin, prepared, chainSpec, group, cpus, members, signal });
  log(`network: blocks ${BLOCKS(s)}`);
  // SYNC=network: the node under test has no peer until it syncs (syncHooks)
  const short = s.SYNC === 'network' ? [] : await awaitPeers(s, peers, { net, members, log, signal });
  parts.driver = net.countBlocks(peers[0].rpcUrl, { log });
  const watch = startNetworkWatch({
    rpcUrl: members[0].rpcUrl,
    metricsUrl: members[0].metricsUrl,
    counters: net.counters,
    peers,
    driver: parts.driver,
    group,
    peerCount: net.peerCount,
    peerSource: net.peerSource,
    log,
  });
  parts.watch = watch;
  const problems = watch.problems;
  watch.problems = () => [...short, ...problems()];
  watch.feed = parts.feed = await feedTransactions(s, net, peers, log);
  stack.network = {
    nodes: peers,
    watch,
    historyUrl: peers[0].rpcUrl, // the history enters where blocks are authored
    awaitHead: (o) => awaitHead(net, members, peers[0], o),
    ...(s.SYNC === 'network' ? syncHooks(s, stack, { net, peers, members, short, log, signal }) : {}),
    record: () => ({
      nodes: s.NETWORK_NODES,
      protocol: net.protocol,
      tps: s.NETWORK_TPS,
      cpus,
      blocks: BLOCKS(s),
      node_pids: peers.map((p) => p.pid),
    }),
  };
}

module.exports = { prepareAuthoredNetwork, startAuthoredNetwork };
