// @ts-check
'use strict';
// How the chain traffic feed holds its profile's rate, and the verdict on a
// window of it. The profile gives gas per second; the feed sends
//   tx/s = gas per second / the mix's expected gas per transaction,
// spread evenly over time (a credit of sends accrues every few milliseconds).
// The expected gas per transaction is learned from the blocks: each kind's
// gas as its receipts say (a moving average, corrected for its drift: see
// gasModel), weighed by the mix's shares (which the sends keep exactly).
// That is an estimate of a quantity, not a loop around the blocks' gas: a
// block that held less (a late block, a slow send) does not make the next
// sends faster, so the feed cannot overshoot and swing.

const { median, percentile } = require('../../stats');

/** How much the average of a kind's gas moves toward one receipt's (about the last 20 receipts count). */
const RECEIPT_WEIGHT = 0.05;
/**
 * How far a kind's drift moves toward what one block's receipts of it say (with DRIFT_RECEIPTS of them or more; less
 * with fewer): a block's change is carried on into the next by this share, a steady trend's in full after a few.
 */
const DRIFT_WEIGHT = 0.3;
const DRIFT_RECEIPTS = 20;
/** The drift corrects by at most this much either way: a lag of a block or two, not a jump. */
const MAX_DRIFT = 0.05;
/** Sends due longer ago than this are given up and counted as behind, not sent in a burst later. */
const MAX_LAG_S = 1;
const EPSILON = 1e-9;
/** The tolerance of feedVerdict: achieved within 5% of the profile's. */
const TOLERANCE = 0.05;

/**
 * Each kind's expected gas: the average of its receipts (from its prior until the first ones), times its drift. The
 * average lags a kind whose gas changes as the chain fills (a storage_write costs less once its slots hold values),
 * by a block at least: each transaction remembers the average it was sent under (predicted()), and a block's receipts'
 * gas over that is the drift, averaged over blocks and bounded. The drift never feeds on itself (it compares receipts
 * with the plain average, not with the expectation it corrects), so it cannot swing; damped and bounded, it carries a
 * steady trend on by a block without extrapolating a sudden change (the first minute of a chain, when a skewed draw's
 * hot slots fill) into an overshoot.
 * @param {Record<string, number>} mix shares by kind
 * @param {Record<string, number>} priors gas by kind before any receipt
 */
function gasModel(mix, priors) {
  const kinds = Object.keys(mix);
  const gas = Object.fromEntries(kinds.map((k) => [k, priors[k]]));
  const drift = Object.fromEntries(kinds.map((k) => [k, 1]));
  const seen = Object.fromEntries(kinds.map((k) => [k, 0]));
  const expected = (k) => gas[k] * drift[k];
  return {
    /**
     * A block's receipts of one kind: their gas, and for each the average it was sent under (null: sent before any
     * receipt of its kind).
     * @param {string} kind
     * @param {number[]} used
     * @param {(number|null)[]} [predicted]
     */
    learn(kind, used, predicted = []) {
      if (!(kind in gas) || !used.length) return;
      const ratios = used.map((g, i) => (predicted[i] ? g / predicted[i] : null)).filter((x) => x !== null);
      if (ratios.length) {
        const r = ratios.reduce((s, x) => s + x, 0) / ratios.length;
        const w = DRIFT_WEIGHT * Math.min(1, ratios.length / DRIFT_RECEIPTS);
        drift[kind] = Math.min(1 + MAX_DRIFT, Math.max(1 - MAX_DRIFT, drift[kind] + w * (r - drift[kind])));
      }
      const mean = used.reduce((s, g) => s + g, 0) / used.length;
      // the first receipts replace the prior; later ones move the average as one receipt at a time would
      const w = seen[kind] ? 1 - (1 - RECEIPT_WEIGHT) ** used.length : 1;
      gas[kind] += w * (mean - gas[kind]);
      seen[kind] += used.length;
    },
    /** The average a transaction of kind is sent under, for its receipt to compare with; null before any receipt. */
    predicted: (kind) => (seen[kind] ? gas[kind] : null),
    /** The mix's expected gas per transaction. */
    perTx: () => kinds.reduce((s, k) => s + mix[k] * expected(k), 0),
    byKind: () => Object.fromEntries(kinds.map((k) => [k, expected(k)])),
    drift: () => ({ ...drift }),
  };
}

/** Transactions per second that carry gasPerS at perTx gas each. */
const txRate = (gasPerS, perTx) => (perTx > 0 ? gasPerS / perTx : 0);

/**
 * Sends spread evenly over time: take(now, rate, room) accrues rate * elapsed of credit and returns how many sends may
 * start now (at most room, the free places in flight). Credit older than MAX_LAG_S (sends that could not start: no
 * room, or the process itself late) is dropped and counted in behind. due: every send that fell due.
 */
function pacer({ maxLagS = MAX_LAG_S } = {}) {
  let credit = 0;
  let last = /** @type {number|null} */ (null);
  const counts = { due: 0, behind: 0 };
  return {
    take(nowMs, rate, room) {
      if (last !== null && nowMs > last) {
        const add = (rate * (nowMs - last)) / 1000;
        credit += add;
        counts.due += add;
      }
      last = nowMs;
      const n = Math.max(0, Math.min(Math.floor(credit + EPSILON), room)); // 0.2 * 5 is 0.99999...
      credit -= n;
      const keep = Math.max(1, rate * maxLagS);
      if (credit > keep) {
        const lost = Math.floor(credit - keep + EPSILON);
        counts.behind += lost;
        credit -= lost;
      }
      return n;
    },
    counts: () => ({ due: Math.floor(counts.due), behind: counts.behind }),
  };
}

/**
 * A window of the feed between two of its stats() (taken at the window's edges): the blocks seen after the first and
 * up to the second, the sends and the sends due in between, their seconds, and the feed's CPU over them.
 * @param {any} before stats() at the window's start
 * @param {any} after stats() at its end
 */
function feedWindow(before, after) {
  const lastBefore = before.blocks_seen.length ? before.blocks_seen.at(-1).number : -1;
  const sub = (k) => (after[k] || 0) - (before[k] || 0);
  return {
    profile: after.profile,
    target_gas_per_block: after.target_gas_per_block,
    seconds: (after.at_ms - before.at_ms) / 1000,
    sent: sub('sent_total'),
    due: sub('due'),
    sends_behind: sub('sends_behind'),
    failed: sub('failed_total'),
    last_error: after.last_error || null,
    cpu_s: sub('cpu_s'),
    blocks: after.blocks_seen.filter((b) => b.number > lastBefore),
  };
}

const pct = (x, of) => (of ? (x / of - 1) * 100 : 0);
const fmtPct = (p) => `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
const mgas = (g) => `${(g / 1e6).toFixed(2)}M`;

/** The blocks' gas: mean, median and the 10th and 90th percentiles; null without blocks. */
function blockGas(blocks) {
  if (!blocks.length) return null;
  const g = blocks.map((b) => b.gas_used).sort((a, b) => a - b);
  return {
    blocks: g.length,
    mean: g.reduce((s, x) => s + x, 0) / g.length,
    median: median(g),
    p10: percentile(g, 10),
    p90: percentile(g, 90),
  };
}

/**
 * Whether a window of the feed (feedWindow) held its profile: the blocks' mean gas within 5% of the profile's gas per
 * block, and the sends within 5% of the sends that fell due. Returns {ok, gas, tx_per_s, aimed_tx_per_s, warning}:
 * warning is a sentence with the figures when not ok, null when ok.
 * @param {ReturnType<typeof feedWindow>} w
 */
function feedVerdict(w) {
  const gas = blockGas(w.blocks);
  const txPerS = w.seconds > 0 ? w.sent / w.seconds : 0;
  const aimed = w.seconds > 0 ? w.due / w.seconds : 0;
  const gasOff = gas ? pct(gas.mean, w.target_gas_per_block) : -100;
  const txOff = pct(txPerS, aimed);
  const ok = Boolean(gas) && Math.abs(gasOff) <= TOLERANCE * 100 && Math.abs(txOff) <= TOLERANCE * 100;
  const cores = w.seconds > 0 ? w.cpu_s / w.seconds : 0;
  const verdict = { ok, gas, tx_per_s: txPerS, aimed_tx_per_s: aimed, cpu_cores: cores, warning: null };
  if (ok) return verdict;
  const held = gas
    ? `its ${gas.blocks} blocks held ${mgas(gas.mean)} gas on average (median ${mgas(gas.median)}, 10th to 90th percentile ${mgas(gas.p10)} to ${mgas(gas.p90)}) against the profile's ${mgas(w.target_gas_per_block)} (${fmtPct(gasOff)})`
    : `no block was seen in it (the profile's ${mgas(w.target_gas_per_block)} gas per block)`;
  const behind = w.sends_behind ? `; ${w.sends_behind} sends were not made in time` : '';
  const failed = w.failed ? `; ${w.failed} were refused${w.last_error ? ` (the last: ${w.last_error})` : ''}` : '';
  const below = (gas ? gas.mean < w.target_gas_per_block : true) || txOff < 0;
  verdict.warning =
    `${below ? 'the chain load fell behind' : 'the chain load ran above its profile'} (CHAIN_LOAD=${w.profile}) over ${w.seconds.toFixed(0)} s: ${held}, ` +
    `and the feed sent ${txPerS.toFixed(1)} transactions a second against the ${aimed.toFixed(1)} it aimed at (${fmtPct(txOff)})${behind}${failed}; the feed used ${cores.toFixed(2)} cores`;
  return verdict;
}

module.exports = {
  gasModel,
  txRate,
  pacer,
  feedWindow,
  feedVerdict,
  blockGas,
  RECEIPT_WEIGHT,
  DRIFT_WEIGHT,
  MAX_LAG_S,
  TOLERANCE,
};
