'use strict';
// AB_WINDOW=auto: the length of an A/B session's windows chosen from the
// variance its first pairs observed. A pair's log ratio varies for two
// reasons: noise inside each window (the machine's, the node's own), which a
// longer window averages down, and what differs between windows and processes
// (a restart, the machine's state for a minute), which it does not. Each
// window is split into two halves at the node's CPU reading nearest its
// middle; the difference of the halves' CPU per request measures the first
// part. With the fixed cost of a pair (idle baselines, restarts, warm-ups,
// lead-ins) measured in the same pairs, the time to reach the target is
// predicted for a few lengths, and the fastest is chosen (longer windows only:
// shorter ones would pay off only where the spread is between windows, which
// the choice may not look at, below).
//
// Stein's procedure stays exact: when the first length is the fastest, the
// session goes on with it (the number of pairs still comes from the first
// stage's spread alone); otherwise the pairs so far become a pilot, kept in
// ab.json but in no interval, and the procedure starts again, first stage and
// all, at the chosen length.

const { t95, sd } = require('../stats');
const { balancedUnits } = require('./stats');

/** Lengths tried, as multiples of the first stage's (at least MIN_WINDOW_S, at most MAX_WINDOW_S). */
const MULTIPLES = [1, 2, 3, 4, 6];
const MIN_WINDOW_S = 5;
const MAX_WINDOW_S = 300;

/**
 * A window's CPU per request in its two halves, split at the CPU reading nearest its middle: {first, second} in ms,
 * or null without readings enough (a node whose CPU is read at the window's edges only).
 */
function windowHalves(w) {
  const ticks = (w.cpu_ticks || []).filter(
    (t) => t.t_ms >= w.window.start_ms - 1000 && t.t_ms <= w.window.end_ms + 1000,
  );
  if (ticks.length < 3 || !w.samples || !w.samples.okBetween) return null;
  const a = ticks[0];
  const b = ticks[ticks.length - 1];
  const middle = (a.t_ms + b.t_ms) / 2;
  const m = ticks.slice(1, -1).reduce((x, t) => (Math.abs(t.t_ms - middle) < Math.abs(x.t_ms - middle) ? t : x));
  const ok1 = w.samples.okBetween(a.t_ms, m.t_ms);
  const ok2 = w.samples.okBetween(m.t_ms, b.t_ms);
  if (!(ok1 > 0 && ok2 > 0)) return null;
  const round = (x) => Number(x.toFixed(6));
  return {
    first: round(((m.total_s - a.total_s) * 1000) / ok1),
    second: round(((b.total_s - m.total_s) * 1000) / ok2),
  };
}

/**
 * The variance of one window's log CPU per request from the noise inside it: a quarter of the variance of the log
 * ratios of its halves (each half has twice the window's variance, their difference four times it). Their mean is
 * left out: a drift that every window shares (the second half a little dearer) moves no window against another. Null
 * with fewer than two windows split.
 */
function withinWindowVariance(pairs) {
  if (pairs.length && pairs.every((p) => p.interleaved)) return interleavedWithinVariance(pairs);
  const d = pairs
    .flatMap((p) => [p.a.halves, p.b.halves])
    .filter((h) => h && h.first > 0 && h.second > 0)
    .map((h) => Math.log(h.first / h.second));
  return d.length >= 2 ? sd(d) ** 2 / 4 : null;
}

/**
 * The same for interleaved pairs (AB_SLICE_S), whose two windows share one span: what moves both halves of a window
 * alike (the machine's speed over the span) cancels in the pair's B/A, so only the halves' B/A count. For each pair d
 * is the log B/A of its first halves less that of its second halves; the pair's log B/A has a quarter of d's variance
 * from inside its windows, returned per window (an eighth) as chooseWindowLength takes it. Its mean square, not its
 * spread about the mean: a real difference of the sides is the same in both halves and leaves d about 0, and two pairs
 * then give two degrees of freedom.
 */
function interleavedWithinVariance(pairs) {
  const ok = (h) => h && h.first > 0 && h.second > 0;
  const d = pairs
    .filter((p) => ok(p.a.halves) && ok(p.b.halves))
    .map((p) => Math.log(p.b.halves.first / p.a.halves.first) - Math.log(p.b.halves.second / p.a.halves.second));
  return d.length >= 2 ? d.reduce((t, x) => t + x * x, 0) / d.length / 8 : null;
}

/** Units (pairs, or blocks of `per` pairs) that Stein's rule is predicted to ask for with unit variance v. */
function unitsFor(v, n0, targetPct) {
  const h = Math.log(1 + targetPct / 100);
  return Math.max(n0, Math.ceil((t95(n0 - 1) ** 2 * v) / h ** 2));
}

/**
 * The choice after the first pairs, from the noise inside their windows alone. The spread between pairs is left out
 * on purpose: Stein's interval holds 95% only over all first-stage spreads, and a choice that kept the length when that
 * spread happened to be small kept the sessions whose interval is too narrow (93% in simulation). The halves' noise is
 * independent of that spread, so a choice made from it leaves the interval exact; what differs between windows, which
 * no length averages down, is then left out of the prediction (as if none), for every length alike.
 * @param {object} o
 * @param {number} o.units the first stage's units (pairs, or blocks of pairs)
 * @param {number} [o.done] the units measured so far at this length (default: the first stage's)
 * @param {number|null} o.within withinWindowVariance of its pairs
 * @param {number} o.lengthS the first stage's window length
 * @param {number} o.pairS the first stage's seconds per pair, everything counted
 * @param {number} o.per pairs per unit (AB_RESTART_PAIRS, or 1)
 * @param {number} o.targetPct AB_TARGET_PCT
 * @param {number} [o.budgetS] the seconds AB_MAX_S leaves
 * @param {number} [o.pairsLeft] the pairs AB_MAX_PAIRS leaves
 * @returns {{length_s:number, stay:boolean, within_var:number, candidates:object[]}|null} a candidate that cannot fit
 *   a first stage in what is left has fits: false
 */
function chooseWindowLength({
  units: n0,
  done = n0,
  within,
  lengthS,
  pairS,
  per,
  targetPct,
  budgetS = Infinity,
  pairsLeft = Infinity,
}) {
  if (n0 < 2 || within === null) return null;
  const withinUnit = (2 * within) / per; // two windows a pair, per pairs a unit
  const fixedS = Math.max(0, pairS - 2 * lengthS);
  const lengths = [...new Set(MULTIPLES.map((m) => Math.round(lengthS * m)))].filter(
    (l) => l === lengthS || (l >= MIN_WINDOW_S && l <= MAX_WINDOW_S),
  );
  const candidates = lengths.map((l) => {
    const units = balancedUnits(unitsFor((withinUnit * lengthS) / l, n0, targetPct), per); // as the stage rounds
    // at another length, the pairs so far count for nothing: all its units are still to measure
    const seconds = l === lengthS ? (units - done) * per * pairS : units * per * (fixedS + 2 * l);
    // another length must fit a whole first stage in what AB_MAX_S and AB_MAX_PAIRS leave, or it would end without one
    const fits = l === lengthS || (n0 * per * (fixedS + 2 * l) <= budgetS && n0 * per <= pairsLeft);
    const c = {
      length_s: l,
      pair_s: Math.round(fixedS + 2 * l),
      units_needed: units,
      seconds_left: Math.round(seconds),
    };
    return fits ? c : { ...c, fits };
  });
  const stay = candidates.find((c) => c.length_s === lengthS);
  const best = candidates
    .filter((c) => c.fits !== false)
    .reduce((x, c) => (c.seconds_left < x.seconds_left ? c : x), stay); // ties: stay
  return { length_s: best.length_s, stay: best === stay, within_var: Number(withinUnit.toPrecision(4)), candidates };
}

module.exports = { windowHalves, withinWindowVariance, chooseWindowLength };
