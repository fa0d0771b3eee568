'use strict';
// The statistics of an A/B session: pairs of windows (one of A, one of B,
// measured back to back) give one ratio B/A each. The interval of the ratio
// comes from the spread of those pair ratios (Student's t on their logs),
// never from requests or seconds inside a window: what varies on a shared
// machine is one window against the next, and pairing cancels what both
// windows of a pair share.
//
// How many pairs to measure is chosen the way Stein's two-stage procedure
// does: the spread of the first n0 pairs alone says how many pairs the target
// width needs, and the interval of CPU time per request is built with that
// first-stage spread (t with n0 - 1 degrees of freedom over all n pairs).
// Because the number of pairs then depends only on a spread that is
// independent of the mean, the 95% interval holds the true ratio 95% of the
// time. Stopping as soon as the ordinary interval looks narrow enough does
// not: in simulation it held the truth only 91-93% of the time, because it
// stops when the spread happens to be small.
//
// With AB_RESTART_PAIRS (ab/restarts.js) the unit is a block of pairs between
// two restarts of both nodes, not a pair: the pairs of one block share their
// two node processes, and the processes vary too.

const { t95, mean, sd } = require('../stats');

/** Pairs whose values are both positive and finite give a log ratio; others are left out (and counted). */
function logRatios(pairs) {
  return pairs
    .filter(({ a, b }) => Number.isFinite(a) && Number.isFinite(b) && a > 0 && b > 0)
    .map(({ a, b }) => Math.log(b / a));
}

/**
 * The ratio B/A over pairs, its 95% interval and a verdict.
 * @param {{a:number|null, b:number|null}[]} pairs
 * @returns {{n:number, ratio:number|null, ci95:[number,number]|null, halfwidth_pct:number|null,
 * verdict:'lower'|'higher'|'same'|null, left_out:number}}
 *   verdict: B lower than A (the whole interval below 1), higher (above 1), or the same within the interval;
 *   null with fewer than two usable pairs.
 */
function pairedRatio(pairs, { stage1 = null } = {}) {
  const logs = logRatios(pairs);
  const n = logs.length;
  const out = { n, ratio: null, ci95: null, halfwidth_pct: null, verdict: null, left_out: pairs.length - n };
  if (!n) return out;
  const m = mean(logs);
  out.ratio = Math.exp(m);
  if (n < 2) return out;
  // Two-stage: the spread and degrees of freedom of the first stage1 usable pairs; else of all of them.
  const first = stage1 && n >= stage1 ? logs.slice(0, stage1) : logs;
  const h = (t95(first.length - 1) * sd(first)) / Math.sqrt(n);
  out.ci95 = [Math.exp(m - h), Math.exp(m + h)];
  out.halfwidth_pct = (Math.exp(h) - 1) * 100;
  out.verdict = out.ci95[1] < 1 ? 'lower' : out.ci95[0] > 1 ? 'higher' : 'same';
  if (first !== logs) out.stage1_pairs = first.length;
  return out;
}

/**
 * Stein's first stage: from the first n0 pairs, the number of pairs in all
 * whose interval (t with n0 - 1 degrees of freedom, that stage's spread) is
 * within ±targetPct. At least n0.
 */
function pairsNeeded(pairs, n0, targetPct) {
  const logs = logRatios(pairs).slice(0, n0);
  if (logs.length < n0) return null;
  const h = Math.log(1 + targetPct / 100);
  return Math.max(n0, Math.ceil(((t95(n0 - 1) * sd(logs)) / h) ** 2));
}

/**
 * The regression gate: B worse than A by more than maxPct with the whole
 * interval beyond it. `higherIsWorse` false for throughput.
 */
function regressed(r, maxPct, higherIsWorse = true) {
  if (!r.ci95) return false;
  return higherIsWorse ? r.ci95[0] > 1 + maxPct / 100 : r.ci95[1] < 1 - maxPct / 100;
}

/**
 * What an interval is taken over: each pair {a, b}; with restarts (pairs that carry a block), each block of pairs, as
 * {a: 1, b: exp(mean log ratio of its pairs)}. Pairs without two positive values are left out of their block; a block
 * with none is {a: null, b: null}, which pairedRatio counts as left out.
 */
function intervalUnits(pairs) {
  if (!pairs.some((p) => p.block !== null && p.block !== undefined)) return pairs;
  const blocks = new Map();
  for (const p of pairs) {
    if (!blocks.has(p.block)) blocks.set(p.block, []);
    if (Number.isFinite(p.a) && Number.isFinite(p.b) && p.a > 0 && p.b > 0)
      blocks.get(p.block).push(Math.log(p.b / p.a));
  }
  return [...blocks.values()].map((logs) => (logs.length ? { a: 1, b: Math.exp(mean(logs)) } : { a: null, b: null }));
}

/** The first stage of Stein's rule in units: AB_MIN_PAIRS pairs, or with restarts the blocks that hold them (>= 2). */
function stage1Units(settings) {
  const per = settings.restart_pairs || 1;
  return per === 1 ? settings.min_pairs : Math.max(2, Math.ceil(settings.min_pairs / per));
}

/**
 * ABBA in whole blocks: the units Stein's rule asked for, or one more where they hold an odd number of pairs, so that
 * as many pairs run AB as BA and an effect of a window's place in its pair cancels in the mean.
 */
const balancedUnits = (units, per) => ((units * per) % 2 ? units + 1 : units);

module.exports = { pairedRatio, pairsNeeded, regressed, logRatios, intervalUnits, stage1Units, balancedUnits };
