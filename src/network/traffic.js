// @ts-check
'use strict';
// The network's transactions, entering through the network nodes and never
// through the node under test, which receives them by gossip: NETWORK_TPS
// plain transfers (tx-feed.js), and a CHAIN_LOAD profile's production-shaped
// traffic (chain-load/: its own process on the network's cores). Both are
// funded by the network genesis's funded account.

const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { fundSenders, startTxFeed } = require('./tx-feed');
const { signerWallets } = require('../state/profiles');
const { chainLoadOf, startNetworkFeed } = require('./chain-load/network');

/**
 * The key whose account funds the network's senders (and signs a run's history): the developer account of the
 * network's dev genesis; a STATE profile's genesis funds its signers instead (the last one here).
 */
const funderKey = (s, net) => (s.STATE === 'dev' ? net.devKey : signerWallets().at(-1).privateKey);

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
 * Starts what the scenario sends through the network: NETWORK_TPS transfers (watch.feed, parts.feed) and the
 * CHAIN_LOAD feed (watch.chainLoad, parts.chainLoad: with record(), run.json's network.chain_load), on the network's
 * cores (cpus).
 * @param {import('../contracts').Scenario} s
 */
async function startTraffic(s, stack, { net, peers, watch, parts, cpus, log, signal }) {
  if (s.NETWORK_TPS > 0)
    watch.feed = parts.feed = await feedTransactions(s, peers, { devKey: funderKey(s, net), log, signal });
  const load = chainLoadOf(s);
  if (!load) return;
  const feed = await startNetworkFeed(s, {
    load,
    peers,
    funderKey: funderKey(s, net),
    state: stack.state || null,
    cpus,
    log,
    signal,
  });
  watch.chainLoad = parts.chainLoad = {
    ...feed,
    /** run.json's network.chain_load: the profile at the network's block time, what the network allows, the feed. */
    record: () => ({ ...load.profile, network_needs: load.needs, feed: { pid: feed.pid, setup: feed.setup || null } }),
  };
}

/** Blocks to wait for after a pause or a resume: the sends under way land in the next one or two. */
const SETTLE_BLOCKS = 2;

/** Waits until the driver has made `n` more blocks (or n + 1 block times passed). */
async function blocksLater(driver, n, slotS, signal) {
  const from = driver.stats.blocks;
  const deadline = Date.now() + (n + 1) * slotS * 1000;
  while (driver.stats.blocks < from + n && Date.now() < deadline) await sleep(100, signal);
}

/**
 * CHAIN_LOAD: fn() run on a quiet chain: the feed paused (empty blocks still come), the blocks holding what it had
 * sent let by first; then the feed resumed and its traffic back in the blocks before this resolves. For the idle
 * baseline that the chain's traffic is not in (the other one, under it, follows).
 */
function quietChain(s, feed, driver, log) {
  return async (fn, signal) => {
    if (!(await feed.pause())) log('chain load: its process is gone (its window records say so): the chain is quiet');
    else log(`chain load: paused for a quiet chain; waiting ${SETTLE_BLOCKS} blocks for what it sent to land`);
    await blocksLater(driver, SETTLE_BLOCKS, s.DEV_BLOCK_TIME_S, signal);
    try {
      return await fn();
    } finally {
      await feed.resume();
      log(`chain load: resumed; waiting ${SETTLE_BLOCKS} blocks for its traffic to be back in the blocks`);
      await blocksLater(driver, SETTLE_BLOCKS, s.DEV_BLOCK_TIME_S, signal);
    }
  };
}

module.exports = { startTraffic, funderKey, quietChain };
