// @ts-check
'use strict';
// The runtime-neutral part of a local network (NETWORK_NODES), once its nodes
// run, wherever they run (host processes: host-network.js; compose services:
// compose-network.js): the wait until every node answers, the full mesh of
// static peers, the engine-API driver over every node, the watch, the
// transactions fed through the network nodes, and stack.network.

const fs = require('node:fs');
const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { startEngineDriver } = require('./engine-driver');
const { startNetworkWatch, counterReader } = require('./watch');
const { startHeadWatch } = require('./head-watch');
const { pauseFault } = require('./pause-fault');
const { startTraffic, funderKey, quietChain } = require('./traffic');
const { syncFromNetwork, compareState } = require('./sync');

/**
 * A node measured on the network: the node under test, or each replica of a fleet (REPLICAS). Its enode and engine
 * URL are given where it does not run on this host's loopback (a container), else built from its ports; cpu reads
 * its own CPU where it has a group of its own (a host fleet's replica: its CPU over its sync, SYNC=network).
 * @typedef {{name: string, nodeKeyHex: string, p2pPort: number, authPort?: number, authUrl?: string,
 *   enode?: string, rpcUrl: string, metricsUrl: string|null, cpu?: {read: () => Promise<{total_s: number}>},
 *   logFile?: string}} Member
 */

/**
 * A network node, whichever runtime started it: its URLs, its enode as the other nodes dial it, and how to hear of
 * its exit (pid for a process, container for a service).
 * @typedef {{name: string, rpcUrl: string, authUrl: string, metricsUrl: string|null, enode: string,
 *   onExit: (fn: (code: number|null, signal: string|null) => void) => void, pid?: number, container?: string}} Peer
 */

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

/** A measured node's enode as the network nodes dial it. */
const enodeOf = (net, m) => m.enode || net.enode(m.nodeKeyHex, m.p2pPort);

/** A measured node as the driver knows it. */
const driven = (m) => ({ name: m.name, authUrl: m.authUrl || `http://127.0.0.1:${m.authPort}` });

/**
 * Waits for the measured nodes and the network nodes, then makes a full mesh of static peers: each network node
 * dials every measured node and the network nodes after it (every link once). Measured nodes (replicas) do not dial
 * each other: each has the network nodes as its own peers.
 * @param {Peer[]} peers
 * @param {{net: import('../contracts').NetworkPeer, members: Member[], signal?: AbortSignal}} o
 */
async function peerMesh(peers, { net, members, signal }) {
  await waitForRpc([...members.map((m) => m.rpcUrl), ...peers.map((p) => p.rpcUrl)], 'net_version', {
    signal,
    what: 'the measured nodes and the network nodes',
  });
  const measured = members.map((m) => enodeOf(net, m));
  for (const [i, p] of peers.entries()) {
    for (const target of [...measured, ...peers.slice(i + 1).map((q) => q.enode)])
      await rpcCall(p.rpcUrl, 'admin_addPeer', [target]);
  }
}

/**
 * Waits (up to timeoutS) until every measured node has the peers its PEERS lets the network give it, asking the
 * network nodes to dial it again every 5 s: a dial that failed (a handshake timing out on a loaded machine) is
 * otherwise retried only much later. Short of them, it says so and the run goes on: the window's peer count is
 * measured either way.
 */
async function awaitPeers(s, peers, { net, members, log, signal, timeoutS = 60 }) {
  const cap = net.inboundPeers ? net.inboundPeers(s.PEERS) : s.PEERS;
  const want = Math.min(peers.length, cap);
  const deadline = Date.now() + timeoutS * 1000;
  const short = [];
  for (const m of members) {
    let have = 0;
    for (let k = 0; Date.now() < deadline; k++) {
      have = Number(await rpcCall(m.rpcUrl, 'net_peerCount', [], { timeoutMs: 2000 }).catch(() => 0));
      if (have >= want) break;
      if (k % 5 === 4)
        for (const p of peers) await rpcCall(p.rpcUrl, 'admin_addPeer', [enodeOf(net, m)]).catch(() => null);
      await sleep(1000, signal);
    }
    if (have < want) {
      short.push(`${m.name} had ${have} of its ${want} peers when the wait for them ended (${timeoutS} s)`);
      log(`network: ${short[short.length - 1]}; measuring anyway`);
    }
  }
  return short; // for the run's warnings
}

/** How the network's blocks are made and reach the nodes (BLOCK_DELIVERY), as the log and run.json say it. */
const blocksText = (s, producer) =>
  s.BLOCK_DELIVERY === 'head'
    ? `built by ${producer} on request of chainperf's engine-API driver (engine_forkchoiceUpdatedV3, engine_getPayloadV5); every other node is told the new head alone (engine_forkchoiceUpdatedV3) and fetches the block from its peers over devp2p (BLOCK_DELIVERY=head)`
    : `built by ${producer} on request of chainperf's engine-API driver (engine_forkchoiceUpdatedV3, engine_getPayloadV5, engine_newPayloadV4), handed to every node`;

/**
 * The engine-API driver over every node, the first network node producing. With SYNC=network the node under test
 * is left out until it joins by sync (src/network/sync.js).
 */
async function driveBlocks(s, peers, { jwtFile, members, log }) {
  const genesis = await rpcCall(peers[0].rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
  const driver = startEngineDriver({
    headNumber: Number(genesis.number),
    nodes: [
      ...peers.map((p) => ({ name: p.name, authUrl: p.authUrl })),
      ...(s.SYNC === 'network' ? [] : members.map(driven)),
    ],
    secretHex: fs.readFileSync(jwtFile, 'utf8'),
    head: genesis.hash,
    headTimeS: Number(genesis.timestamp),
    headsOnly: s.BLOCK_DELIVERY === 'head',
    periodS: s.DEV_BLOCK_TIME_S,
    feeRecipient: `0x${'00'.repeat(19)}01`,
    log,
  });
  log(
    `network: blocks every ${s.DEV_BLOCK_TIME_S} s ${blocksText(s, peers[0].name)} (the driver stands in for a consensus client)`,
  );
  return driver;
}

/** The node under test's sync mode: snap when it starts with a STATE profile's genesis block alone (SYNC=network). */
const nodeSyncMode = (s) => (s.STATE !== 'dev' && s.SYNC === 'network' ? 'snap' : 'full');

/**
 * SYNC=network: the history is built on the network (through network-1), and syncNode() makes the node under test
 * download the chain from its peers; the session calls it in place of the usual sync wait. A fleet's replicas sync
 * one after another, so that each one's bytes and CPU are its own sync's; the record is replica-1's, with every
 * replica's in `replicas`. A peer a node dropped while it synced is dialled again before the window (a shortfall goes
 * into `short`, the run's warnings).
 */
function syncHooks(s, stack, { peers, driver, net, members, syncCpu, short, log, signal }) {
  const nodeCpu = syncCpu || (stack.cpu && stack.cpu.read && !stack.cpu.sampled ? stack.cpu : null);
  const syncOne = (member, timeoutS) =>
    syncFromNetwork({
      nodeRpcUrl: member.rpcUrl,
      networkRpcUrl: peers[0].rpcUrl,
      member: driven(member),
      driver,
      readCounters: counterReader(member.metricsUrl, net.counters, new Set()),
      cpu: member.cpu || nodeCpu, // a replica's own group; the lone node's CPU source
      timeoutS,
      syncMode: nodeSyncMode(s),
      stateCheck: s.STATE === 'dev' ? null : (block) => compareState(member.rpcUrl, peers[0].rpcUrl, block, signal),
      stateItems: stack.state ? stack.state.manifest.accounts + stack.state.manifest.slots : null,
      signal,
      log: members.length > 1 ? (m) => log(`${member.name}: ${m}`) : log,
    });
  return {
    syncNode: async ({ timeoutS }) => {
      const records = [];
      for (const m of members) records.push({ replica: m.name, ...(await syncOne(m, timeoutS)) });
      short.push(...(await awaitPeers(s, peers, { net, members, log, signal })));
      const first = { ...records[0] };
      delete first.replica;
      return members.length > 1 ? { ...first, replicas: records } : first;
    },
  };
}

/**
 * Waits until every measured node has the network's head as it is now (the history, sent through network-1, is then
 * in every measured node before the harvest reads it). A block reaches them within a block time; 60 s is a failure.
 */
async function awaitHead(members, producer, { signal, timeoutS = 60 }) {
  const target = Number(await rpcCall(producer.rpcUrl, 'eth_blockNumber', []));
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const heads = await Promise.all(
      members.map((m) => rpcCall(m.rpcUrl, 'eth_blockNumber', [], { timeoutMs: 2000 }).then(Number, () => -1)),
    );
    const behind = members.filter((m, i) => heads[i] < target);
    if (!behind.length) return;
    if (Date.now() > deadline) {
      const at = behind.map((m) => `${m.name} at block ${heads[members.indexOf(m)]}`).join(', ');
      throw new Error(`the history is in ${producer.name}'s block ${target}, but after ${timeoutS} s ${at}`);
    }
    await sleep(250, signal);
  }
}

/**
 * Once the network nodes run and are peered: drives their blocks, watches the node, feeds transactions. Sets
 * stack.network (what the run records, the window hook), stack.devKey (the node has no unlocked account: history is
 * signed with the dev key). `parts` gets the driver, watch and feed, for the runtime's teardown to stop.
 * @param {import('../contracts').Scenario} s
 * @param {object} stack
 * @param {{net: import('../contracts').NetworkPeer, peers: Peer[], members: Member[], jwtFile: string,
 *   group: object|null, parts: {driver: any, feed: any, watch: any, heads?: any, chainLoad?: any, fault?: any},
 *   record: object,
 *   log: (m: string) => void,
 *   syncCpu?: {read: () => Promise<{total_s: number}>}, signal?: AbortSignal}} o record: what the runtime adds to
 *   run.json's network (cpus, pids or containers); syncCpu: the node's CPU for SYNC=network where stack.cpu is sampled
 */
async function runNetwork(s, stack, { net, peers, members, jwtFile, group, parts, record, syncCpu, log, signal }) {
  parts.driver = await driveBlocks(s, peers, { jwtFile, members, log });
  parts.heads = startHeadWatch({ driver: parts.driver, members, importLog: net.importLog || null });
  const short = await awaitPeers(s, peers, { net, members, log, signal });
  const watch = startNetworkWatch({
    heads: parts.heads,
    rpcUrl: members[0].rpcUrl,
    metricsUrl: members[0].metricsUrl,
    counters: net.counters,
    peers,
    driver: parts.driver,
    group,
    replicas: members.length > 1 ? members.map((m) => ({ name: m.name, rpcUrl: m.rpcUrl })) : [],
    log,
  });
  parts.watch = watch;
  const problems = watch.problems;
  watch.problems = () => [...short, ...problems()]; // a member short of peers is said in the run's warnings
  watch.profileFrames = net.profileFrames || null; // NODE_PROFILE=cpu: the share of the node's CPU in networking
  const victim = members[members.length - 1]; // FAULT=pause-node: the node under test, or a fleet's last replica
  const enode = enodeOf(net, victim);
  watch.fault = pauseFault(s, { driver: parts.driver, heads: parts.heads, peers, victim, enode, log, signal });
  parts.fault = watch.fault;
  await startTraffic(s, stack, { net, peers, watch, parts, cpus: record.cpus, log, signal });
  stack.devKey = funderKey(s, net);
  stack.network = {
    nodes: peers,
    watch,
    heads: parts.heads, // whether the measured nodes keep up (head-watch.js)
    // CHAIN_LOAD: fn() on a quiet chain (the feed paused), for the idle baseline without the chain's traffic
    ...(parts.chainLoad ? { quietChain: quietChain(s, parts.chainLoad, parts.driver, log) } : {}),
    // FAULT=pause-node: run.json's fault, once the measured windows are over (the pause itself with FAULT_LOAD=off)
    ...(watch.fault ? { afterWindows: (sig) => watch.fault.afterWindows(sig) } : {}),
    // The history enters where blocks are built: sent to a measured node, it reached network-1 only by gossip, and
    // under load a transaction announced that way was once never fetched.
    historyUrl: peers[0].rpcUrl,
    awaitHead: (o) => awaitHead(members, peers[0], o),
    ...(s.SYNC === 'network'
      ? syncHooks(s, stack, { peers, driver: parts.driver, net, members, syncCpu, short, log, signal })
      : {}),
    record: () => ({
      nodes: s.NETWORK_NODES,
      protocol: net.protocol,
      tps: s.NETWORK_TPS,
      ...(parts.chainLoad ? { chain_load: parts.chainLoad.record() } : {}),
      blocks: blocksText(s, peers[0].name),
      block_delivery: s.BLOCK_DELIVERY,
      ...record,
      ...(members.length > 1 ? { watched: members[0].name } : {}),
    }),
  };
}

/** Stops what runNetwork started, before the nodes go (their exits are then not losses). */
async function stopNetworkParts(parts) {
  if (parts.fault) parts.fault.stop();
  if (parts.feed) await parts.feed.stop();
  if (parts.chainLoad) await parts.chainLoad.stop();
  if (parts.driver) await parts.driver.stop();
  if (parts.watch) parts.watch.stop();
  if (parts.heads) parts.heads.stop();
}

module.exports = { nodeSyncMode, waitForRpc, peerMesh, awaitPeers, runNetwork, stopNetworkParts, driven };
