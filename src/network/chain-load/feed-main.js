// @ts-check
'use strict';
// The chain traffic feed's own process (started by feed.js), so that its CPU
// is its own: in its cgroup, or pinned with taskset to the network's cores.
// It talks to its parent over the IPC channel only:
//   in:  {type: 'start', config}, then {type: 'pause'} and {type: 'resume'} (the sends stop and go on), {type: 'stop'}
//   out: {type: 'log', message}, {type: 'ready', setup}, {type: 'stats', stats, blocks} every second (blocks: the
//        ones seen since the last message), {type: 'stopped', stats, blocks}, {type: 'error', message}
// It exits when its parent goes (the channel closes), whatever the parent's end was.

const { ethers } = require('ethers');
const { rpcCall } = require('../../util/rpc');
const { seededRandom } = require('../../util/random');
const { KIND_GAS, spaceDraws } = require('./kinds');
const { senderKeys, fundSenders, deployContracts, addressOf, SENDERS } = require('./setup');
const { gasModel, txRate } = require('./rate');
const { startSending } = require('./sender');
const { startWatcher } = require('./watcher');

const STATS_EVERY_MS = 1000;
/** A message to the parent; resolves once it is written (or at once when the parent is gone). */
const send = (m) =>
  new Promise((resolve) => {
    if (!process.connected || !process.send) return resolve(false);
    process.send(m, undefined, {}, () => resolve(true));
  });
const log = (message) => send({ type: 'log', message });

/** Funds the senders, deploys the contracts, and reads where every sender's nonce stands. */
async function setup(config, signal) {
  const { urls, funderKey, seed, profile } = config;
  const timeoutS = Math.max(60, 6 * profile.block_time_s);
  const keys = senderKeys(seed, config.senders || SENDERS);
  const t0 = Date.now();
  const { value } = await fundSenders({ url: urls[0], funderKey, keys, rpc: rpcCall, signal, timeoutS });
  const { token, writer, baseFee } = await deployContracts({
    url: urls[0],
    key: keys[0],
    rpc: rpcCall,
    signal,
    timeoutS,
  });
  const nonces = await Promise.all(
    keys.map((k, w) =>
      rpcCall(urls[w % urls.length], 'eth_getTransactionCount', [addressOf(k), 'pending']).then(Number),
    ),
  );
  const seconds = (Date.now() - t0) / 1000;
  const ether = Number(ethers.formatEther(value)); // a quarter of the funder's; a dev account's is astronomical
  log(
    `${keys.length} senders funded with ${ether >= 1e6 ? ether.toExponential(2) : ether.toFixed(2)} ether each, token ${token} and SlotWriter ${writer} deployed in ${seconds.toFixed(1)} s`,
  );
  return { keys, nonces, token, writer, baseFee, setup_s: seconds };
}

/** The block watcher over the building node: each block's record kept for the next message, its receipts taught. */
function watchBlocks({ profile, urls, model, pending, sender, blocks, totals }) {
  return startWatcher({
    url: urls[0],
    pending,
    rpc: rpcCall,
    pollMs: Math.min(1000, Math.max(200, (profile.block_time_s * 1000) / 4)),
    onBlock: (record, ours) => {
      blocks.push(record);
      for (const [kind, { used, predicted }] of Object.entries(ours)) {
        model.learn(kind, used, predicted);
        totals.included[kind] = (totals.included[kind] || 0) + used.length;
        totals.included_gas[kind] = (totals.included_gas[kind] || 0) + used.reduce((a, g) => a + g, 0);
      }
      totals.included_total += record.ours;
      totals.reverted_total += record.reverted;
    },
    onBaseFee: (fee) => {
      totals.base_fee_wei = fee.toString();
      sender.setBaseFee(fee);
    },
    log,
  });
}

/** The feed's figures now (feed.js documents them as stats()). */
function feedStats({ profile, sender, watcher, model, totals, ready, startedAt }) {
  const s = sender.stats();
  const seconds = (Date.now() - startedAt) / 1000;
  const cpu = process.cpuUsage();
  return {
    profile: profile.name,
    slot_s: profile.slot_s,
    block_time_s: profile.block_time_s,
    target_gas_per_block: profile.target_gas_per_block,
    target_gas_per_s: profile.target_gas_per_s,
    started_at_ms: startedAt,
    at_ms: Date.now(),
    ...s,
    achieved_tx_per_s: seconds > 0 ? s.sent_total / seconds : 0,
    aimed_tx_per_s: txRate(profile.target_gas_per_s, model.perTx()),
    gas_per_tx: model.perTx(),
    gas_by_kind: model.byKind(),
    gas_drift: model.drift(),
    ...totals,
    included: { ...totals.included },
    included_gas: { ...totals.included_gas },
    watch: watcher.counts(),
    cpu_s: (cpu.user + cpu.system) / 1e6,
    senders: ready.keys.length,
    setup_s: ready.setup_s,
  };
}

/** Starts the sends and the block watcher; the figures go to the parent every second; returns {stop}. */
function run(config, ready) {
  const { profile, urls, state, seed } = config;
  const model = gasModel(profile.mix, Object.fromEntries(Object.keys(KIND_GAS).map((k) => [k, KIND_GAS[k].prior])));
  const pending = new Map();
  const r = seededRandom(Number(seed) || 1);
  const salt = BigInt(Date.now()) << 64n; // new values and new code each run, on a chain that had earlier runs
  const ctx = { token: ready.token, writer: ready.writer, draws: spaceDraws(state, r), salt };
  const { keys, nonces } = ready;
  const baseFee = ready.baseFee;
  const sender = startSending({ urls, keys, nonces, profile, ctx, model, pending, rpc: rpcCall, log, baseFee });
  const blocks = [];
  const totals = { included_total: 0, included: {}, included_gas: {}, reverted_total: 0, base_fee_wei: '0' };
  const watcher = watchBlocks({ profile, urls, model, pending, sender, blocks, totals });
  const startedAt = Date.now();
  const stats = () => feedStats({ profile, sender, watcher, model, totals, ready, startedAt });
  const report = () => send({ type: 'stats', stats: stats(), blocks: blocks.splice(0) });
  const timer = setInterval(report, STATS_EVERY_MS);
  return {
    report,
    /** No send falls due while paused: the chain quiet for an idle baseline. */
    pause: () => {
      sender.paused = true;
    },
    resume: () => {
      sender.paused = false;
    },
    async stop() {
      clearInterval(timer);
      await sender.stop();
      await watcher.stop();
      await send({ type: 'stopped', stats: stats(), blocks: blocks.splice(0) });
    },
  };
}

/** The process: start on the parent's word, stop on its word or when it goes. */
function main() {
  const abort = new AbortController();
  let running = null;
  let stopping = false;
  const exit = (code) => {
    if (process.connected) process.disconnect();
    process.exit(code);
  };
  process.on('disconnect', () => process.exit(0)); // the parent went: nothing to feed for
  process.on('message', async (/** @type {any} */ m) => {
    try {
      if (m.type === 'start') {
        const ready = await setup(m.config, abort.signal);
        if (stopping) return exit(0);
        running = run(m.config, ready);
        await running.report(); // stats() has figures as soon as the start resolves
        send({
          type: 'ready',
          setup: { token: ready.token, writer: ready.writer, senders: ready.keys.length, setup_s: ready.setup_s },
        });
      } else if ((m.type === 'pause' || m.type === 'resume') && running) {
        running[m.type]();
        await send({ type: m.type === 'pause' ? 'paused' : 'resumed' });
      } else if (m.type === 'stop') {
        stopping = true;
        abort.abort(new Error('stopped'));
        if (running) await running.stop();
        exit(0);
      }
    } catch (err) {
      if (stopping) return exit(0);
      await send({ type: 'error', message: err.message });
      exit(1);
    }
  });
}

if (require.main === module) main();

module.exports = { setup, run };
