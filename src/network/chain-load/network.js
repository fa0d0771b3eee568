// @ts-check
'use strict';
// CHAIN_LOAD on a network chainperf starts: what the network's nodes need for
// the profile (chainLoadOf: the genesis's gas limit, the builder's target, room
// in the pools), the feed started through the network nodes on the network's
// cores, and each measured window's record of it: what it sent and what the
// blocks held against the profile, its own CPU, and a warning with the figures
// when it fell behind (feedVerdict).

const { readChainLoad, chainNeeds } = require('./profiles');
const { startChainLoad } = require('./feed');
const { feedWindow, feedVerdict } = require('./rate');

/**
 * The scenario's chain traffic, or null for none (no CHAIN_LOAD, or quiet: NETWORK_TPS transfers): {profile, needs}.
 * The scenario was checked when it was resolved; a problem here is a bug, thrown.
 * @param {import('../../contracts').Scenario} s
 */
function chainLoadOf(s) {
  if (!s.CHAIN_LOAD || s.CHAIN_LOAD === 'quiet') return null;
  const { profile, errors } = readChainLoad(s.CHAIN_LOAD, { slotS: s.DEV_BLOCK_TIME_S });
  if (!profile) throw new Error(errors.join('; '));
  return { profile, needs: chainNeeds(profile) };
}

/**
 * Starts the feed through the network nodes (never the node under test), pinned to the network's cores, its CPU its
 * own (its /proc entry: the network's cgroup would count it as the network nodes'). state: the STATE profile's
 * restored copy (its manifest's accounts and slots, drawn with STATE_DISTRIBUTION), or null on a dev genesis.
 * @param {import('../../contracts').Scenario} s
 */
async function startNetworkFeed(s, { load, peers, funderKey, state, cpus, log, signal }) {
  const m = state && state.manifest;
  return startChainLoad({
    profile: load.profile,
    urls: peers.map((p) => p.rpcUrl),
    funderKey,
    seed: s.SEED,
    state: m ? { accounts: m.accounts, slots: m.slots, distribution: s.STATE_DISTRIBUTION } : null,
    cpus,
    group: null,
    log,
    signal,
  });
}

/**
 * A window of the feed: started at the window's start edge (the feed's newest figures, at most a second old), its
 * record at the end edge: what it sent and aimed at, what the blocks held against the profile's gas per block, its
 * CPU, and a warning with the figures when it was more than 5% off (feedVerdict).
 */
function feedWindowHook(feed) {
  const before = feed.stats();
  return () => {
    const after = feed.stats();
    if (!before || !after) return null;
    const w = feedWindow(before, after);
    const v = feedVerdict(w);
    const round = (x, d = 2) => (x === null || x === undefined ? null : Number(x.toFixed(d)));
    return {
      profile: w.profile,
      target_gas_per_block: w.target_gas_per_block,
      block_time_s: after.block_time_s,
      target_gas_per_s: after.target_gas_per_s,
      seconds: round(w.seconds, 3),
      sent: w.sent,
      failed: w.failed,
      sends_behind: w.sends_behind,
      tx_per_s: round(v.tx_per_s),
      aimed_tx_per_s: round(v.aimed_tx_per_s),
      gas_per_block: v.gas
        ? { blocks: v.gas.blocks, mean: Math.round(v.gas.mean), median: v.gas.median, p10: v.gas.p10, p90: v.gas.p90 }
        : null,
      feed_cpu_s: round(w.cpu_s, 3),
      feed_cores: round(v.cpu_cores, 3),
      within_5pct: v.ok,
      ...(v.warning ? { warning: v.warning } : {}),
      source:
        "the feed's own figures (its process, reported every second), the nearest report to each edge of the window; the blocks' gas as the feed saw them on the building node",
    };
  };
}

module.exports = { chainLoadOf, startNetworkFeed, feedWindowHook };
