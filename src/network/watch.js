// @ts-check
'use strict';
// What the node under test sees of its network, read from the node itself:
// its peer count (net_peerCount) every PEER_EVERY_MS and at each window's
// edges, and its own counters at the edges (bytes in and out over
// peer-to-peer, transactions delivered by peers). Network nodes that exit are
// noted with the instant, whichever phase of the run they exit in.

const { rpcCall } = require('../util/rpc');
const { median } = require('../stats');
const { sleep } = require('../util/time');
const { blockFigures } = require('../measure/keep-up');
const { feedWindowHook } = require('./chain-load/network');

const PEER_EVERY_MS = 2000;
const RETRY_MS = 500;

/** The sum of the named counters in a Prometheus text page (a missing one counts 0, and is named in `missing`). */
function sumCounters(text, names, missing) {
  let sum = 0;
  for (const name of names) {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text);
    if (m) sum += Number(m[1]);
    else missing.add(name);
  }
  return sum;
}

/** Reads the node's network counters from its metrics page (null without one); names it lacks go into `missing`. */
function counterReader(metricsUrl, counters, missing) {
  return async () => {
    if (!metricsUrl) return null;
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) })).text();
    return {
      at_ms: Date.now(),
      p2p_in: sumCounters(text, [counters.p2pIn], missing),
      p2p_out: sumCounters(text, [counters.p2pOut], missing),
      gossip_in: sumCounters(text, counters.gossipIn, missing),
      gossip_known: sumCounters(text, counters.gossipKnown, missing),
    };
  };
}

/**
 * Reads the counters at an edge, once more after RETRY_MS when the first read fails (a node busy serving the window can
 * be slow to give its page); {counters} or {unread: why} when neither read did.
 */
async function readEdgeCounters(readCounters) {
  try {
    return { counters: await readCounters() };
  } catch (first) {
    await sleep(RETRY_MS);
    try {
      return { counters: await readCounters() };
    } catch (err) {
      return { counters: null, unread: `${first.message}, then ${err.message}` };
    }
  }
}

/**
 * The window's record from the counters at its edges (a, b; null when unread, `unread` saying why for each edge) and
 * the peer counts inside it.
 */
function windowRecord({ a, b, peerCounts, counters, missing, unread = {} }) {
  const names = [counters.p2pIn, counters.p2pOut, ...counters.gossipIn, ...counters.gossipKnown];
  return {
    peers: {
      min: peerCounts.length ? Math.min(...peerCounts) : null,
      median: peerCounts.length ? median(peerCounts) : null,
      max: peerCounts.length ? Math.max(...peerCounts) : null,
      samples: peerCounts.length,
      source: `net_peerCount of the node, at the window's edges and every ${PEER_EVERY_MS / 1000} s`,
    },
    ...(a && b
      ? {
          p2p_in_bytes: b.p2p_in - a.p2p_in,
          p2p_out_bytes: b.p2p_out - a.p2p_out,
          gossip_transactions_in: b.gossip_in - a.gossip_in,
          gossip_transactions_known: b.gossip_known - a.gossip_known,
          counters_source: `the node's metrics (${names.join(', ')}), read at ${new Date(a.at_ms).toISOString()} and ${new Date(b.at_ms).toISOString()}`,
        }
      : {}),
    ...(missing.size ? { counters_missing: [...missing] } : {}),
    ...(Object.keys(unread).length ? { counters_unread: unread } : {}),
  };
}

/**
 * @param {{rpcUrl: string, metricsUrl: string|null,
 *   counters: {p2pIn: string, p2pOut: string, gossipIn: string[], gossipKnown: string[]},
 *   peers: import('./members').Peer[],
 *   driver: {stats: {blocks: number, transactions: number, failures: Object<string, number>, last_error: string|null}},
 *   group?: {cpu: () => {total_s?: number}, memoryBytes: () => number|null}|null,
 *   replicas?: {name: string, rpcUrl: string}[], log: (m: string) => void, heads?: any}} o group: the network nodes'
 *   cgroup, for what the network itself costs; replicas: with REPLICAS, every replica, whose peer counts are read too;
 *   heads: the head watch (head-watch.js), for whether the node keeps up
 */
function startNetworkWatch(o) {
  const { rpcUrl, metricsUrl, counters, peers, driver, log } = o;
  const peerLooks = peerSampler(rpcUrl, replicaPeerWatch(o.replicas || []));
  const missing = new Set();
  let stopped = false;
  const lost = networkLosses(peers, () => stopped, log);
  const readCounters = counterReader(metricsUrl, counters, missing);
  // Counters unread at an edge (twice) leave the window's counter figures out, and the record says why.
  const readEdge = () => Promise.all([readEdgeCounters(readCounters), peerLooks.readEdge()]);
  const watch = {
    /** @type {null|{stats: {sent: number, failed: number}}} */
    feed: null,
    /** @type {RegExp|null} the client's networking frames, for NODE_PROFILE=cpu */
    profileFrames: null,
    /** @type {any} FAULT=pause-node's plan (pause-fault.js), or null */
    fault: null,
    /** @type {any} CHAIN_LOAD's feed (chain-load/feed.js), or null */
    chainLoad: null,
    /** @type {string[]} the windows' CHAIN_LOAD warnings: a feed more than 5% off its profile */
    loadWarnings: [],
    /** A measured window's hook: started at its start edge, stopped at its end edge. */
    windowHook: () => networkWindow({ ...o, watch, lost, missing, peerLooks, readEdge }),
    /** What went wrong in the network over the run, for the run's warnings. */
    problems: () => [...problems(lost, driver, watch.feed), ...new Set(watch.loadWarnings)],
    stop() {
      stopped = true;
      peerLooks.stop();
    },
  };
  return watch;
}

/** The node's peer count (and each replica's) every PEER_EVERY_MS and at each edge. */
function peerSampler(rpcUrl, byReplica) {
  /** @type {{at_ms: number, peers: number}[]} */
  const samples = [];
  const readPeers = async () => {
    const at = Date.now();
    const n = Number(await rpcCall(rpcUrl, 'net_peerCount', [], { timeoutMs: 2000 }));
    samples.push({ at_ms: at, peers: n });
  };
  const timer = setInterval(() => {
    readPeers().catch(() => {});
    byReplica.read();
  }, PEER_EVERY_MS);
  return {
    readEdge: () => Promise.all([readPeers().catch(() => null), byReplica.read()]),
    counts: (fromMs, toMs) => samples.filter((x) => x.at_ms >= fromMs && x.at_ms <= toMs).map((x) => x.peers),
    byReplica: (fromMs, toMs) => byReplica.record(fromMs, toMs),
    stop: () => clearInterval(timer),
  };
}

/** One window of the network watch: its start edge now, its record at stop(). */
function networkWindow({ driver, heads = null, group = null, counters, watch, lost, missing, peerLooks, readEdge }) {
  if (watch.fault) watch.fault.windowStarted(); // FAULT=pause-node with the workload on: the first window's
  const loadEnd = watch.chainLoad ? feedWindowHook(watch.chainLoad) : null; // CHAIN_LOAD's feed over the window
  const start = { at_ms: Date.now(), blocks: driver.stats.blocks, included: driver.stats.transactions };
  const sentAtStart = watch.feed ? watch.feed.stats.sent : 0;
  const groupCpu = group ? group.cpu().total_s : null;
  const first = readEdge();
  return {
    cancel() {
      if (watch.fault) watch.fault.windowCancelled();
    },
    async stop() {
      const [[a], [b]] = [await first, await readEdge()];
      const end = Date.now();
      const peerCounts = peerLooks.counts(start.at_ms, end);
      const unread = {};
      if (a.unread) unread.start = a.unread;
      if (b.unread) unread.end = b.unread;
      return {
        ...windowRecord({ a: a.counters, b: b.counters, peerCounts, counters, missing, unread }),
        ...peerLooks.byReplica(start.at_ms, end),
        blocks: driver.stats.blocks - start.blocks,
        transactions_included: driver.stats.transactions - start.included,
        transactions_sent: watch.feed ? watch.feed.stats.sent - sentAtStart : 0,
        nodes_lost: lost.filter((x) => x.at_ms <= end),
        ...keepUpRecord(heads, driver, start.at_ms, end),
        ...(loadEnd ? { chain_load: feedRecord(loadEnd(), watch) } : {}),
        // what the network nodes themselves used meanwhile (their cgroup), none of it the node's
        ...(group
          ? {
              network_nodes_cpu_s: Number((group.cpu().total_s - groupCpu).toFixed(3)),
              network_nodes_memory_bytes: group.memoryBytes(),
            }
          : {}),
      };
    },
  };
}

/**
 * Whether the node kept up over the window: head lag, import times (keep_up), the blocks the network made (chain); the
 * lag's per-second series rides along, not in run.json (series.json's head_lag).
 */
function keepUpRecord(heads, driver, fromMs, toMs) {
  if (!heads) return {};
  const keepUp = heads.windowRecord(fromMs, toMs);
  Object.defineProperty(keepUp, 'series', { value: heads.series(fromMs, toMs), enumerable: false });
  return { keep_up: keepUp, chain: blockFigures(driver.stats.timeline, fromMs, toMs) };
}

/** A window's record of the CHAIN_LOAD feed; a feed more than 5% off its profile is a warning of the run's too. */
function feedRecord(record, watch) {
  if (record && record.warning) watch.loadWarnings.push(record.warning);
  return record;
}

/** Network nodes that exit before the network is stopped: which, when, how (a process's pid or a container's name). */
function networkLosses(peers, isStopped, log) {
  const lost = [];
  for (const p of peers)
    p.onExit((code, signal) => {
      if (isStopped()) return;
      const where = p.pid ? { pid: p.pid } : { container: p.container };
      lost.push({ node: p.name, ...where, at_ms: Date.now(), code, signal });
      log(
        `network: ${p.name} (${p.pid ? `pid ${p.pid}` : `container ${p.container}`}) exited (${signal || `status ${code}`})`,
      );
    });
  return lost;
}

/**
 * REPLICAS: each replica's own peer counts (each holds its own peers), read with the watched node's; record() gives a
 * window's `peers_by_replica` (nothing without replicas).
 */
function replicaPeerWatch(replicas) {
  const byReplica = replicas.map((r) => ({ name: r.name, rpcUrl: r.rpcUrl, samples: [] }));
  const read = () =>
    Promise.all(
      byReplica.map(async (r) => {
        const at = Date.now();
        const n = await rpcCall(r.rpcUrl, 'net_peerCount', [], { timeoutMs: 2000 }).catch(() => null);
        if (n !== null) r.samples.push({ at_ms: at, peers: Number(n) }); // a replica that died has no count
      }),
    );
  const one = (r, fromMs, toMs) => {
    const counts = r.samples.filter((x) => x.at_ms >= fromMs && x.at_ms <= toMs).map((x) => x.peers);
    return {
      replica: r.name,
      min: counts.length ? Math.min(...counts) : null,
      median: counts.length ? median(counts) : null,
      max: counts.length ? Math.max(...counts) : null,
      samples: counts.length,
    };
  };
  const record = (fromMs, toMs) =>
    byReplica.length ? { peers_by_replica: byReplica.map((r) => one(r, fromMs, toMs)) } : {};
  return { read, record };
}

/** Network nodes lost, blocks a node did not take, transactions refused: the run's warnings. */
function problems(lost, driver, feed) {
  const out = lost.map(
    (x) => `network node ${x.node} exited at ${new Date(x.at_ms).toISOString()} (${x.signal || `status ${x.code}`})`,
  );
  const failed = Object.entries(driver.stats.failures);
  if (failed.length)
    out.push(
      `the engine-API driver could not hand blocks to ${failed.map(([n, k]) => `${n} (${k} times)`).join(', ')}; last error: ${driver.stats.last_error}`,
    );
  if (feed && feed.stats.failed)
    out.push(`${feed.stats.failed} of the network's transactions were refused by the node they were sent to`);
  return out;
}

module.exports = { startNetworkWatch, sumCounters, windowRecord, counterReader, readEdgeCounters };
