'use strict';
// How much of the pairs' spread the machine's own speed explains. The load
// generator runs the same code for both sides, so its CPU per request, B/A,
// moves between a pair's two windows when the machine's speed does (other
// tenants, frequency, caches); a difference between the sides that lasts all
// session adds to its mean, not to its spread. When the node's ratios follow
// the generator's from pair to pair, the spread that widens the interval is
// largely the machine's. Descriptive only: no interval or verdict uses it
// (correcting the pairs by the generator's ratio would let a difference of the
// sides that reaches the generator, a slower node or another mix, into the
// node's figure).

const { mean, sd, t95 } = require('../stats');

const ratioOf = (p, get) => {
  const [a, b] = [get(p.a), get(p.b)];
  return Number.isFinite(a) && Number.isFinite(b) && a > 0 && b > 0 ? Math.log(b / a) : null;
};
const nodeCpu = (w) => w.figures && w.figures.cpu_ms_per_request;
const generatorCpu = (w) => w.generator && w.generator.cpu_us_per_request;

/**
 * Over pairs with both figures on both sides: the sd of the node's log B/A and of the generator's, their correlation,
 * and the node's sd once the part the generator's predicts (least squares) is taken out; significant: the correlation
 * differs from 0 at 95% (t with n - 2 degrees of freedom). Null with fewer than 3 such pairs or no spread.
 * @param {object[]} pairs ab.json's pairs ({a, b} windows)
 * @param {(window: object) => number} gauge a window's gauge of the machine's speed: the generator's CPU per request
 *   by default (npm run bench:ab's probe gives another; the figures keep the generator's names)
 */
function machineSpeed(pairs, gauge = generatorCpu) {
  const x = [];
  const y = [];
  for (const p of pairs) {
    const [gen, node] = [ratioOf(p, gauge), ratioOf(p, nodeCpu)];
    if (gen === null || node === null) continue;
    x.push(gen);
    y.push(node);
  }
  const n = x.length;
  const [sx, sy] = [sd(x), sd(y)];
  if (n < 3 || !(sx > 0) || !(sy > 0)) return null;
  const [mx, my] = [mean(x), mean(y)];
  const cov = x.reduce((acc, xi, i) => acc + (xi - mx) * (y[i] - my), 0) / (n - 1);
  const r = cov / (sx * sy);
  const rest = y.map((yi, i) => yi - (cov / sx ** 2) * x[i]); // less the least-squares line's part
  const pct = (v) => Number((v * 100).toFixed(2));
  return {
    pairs: n,
    pair_sd_pct: pct(sy),
    generator_sd_pct: pct(sx),
    correlation: Number(r.toFixed(3)),
    pair_sd_without_generator_pct: pct(sd(rest)),
    significant: significantCorrelation(r, n),
  };
}

/** A correlation r over n pairs differs from 0 at 95% (t, n - 2 degrees of freedom); never with 3 pairs or fewer. */
function significantCorrelation(r, n) {
  if (n <= 3) return false;
  if (Math.abs(r) >= 1) return true;
  return Math.abs(r) * Math.sqrt((n - 2) / (1 - r * r)) > t95(n - 2);
}

/** The sentence a summary and a wide interval's warning give, or null when the machine's speed explains little. */
function machineSpeedNote(m) {
  if (!m || !m.significant || m.correlation <= 0) return null;
  return `the pairs' B/A of node CPU per request followed the generator's own (correlation ${m.correlation.toFixed(2)} over ${m.pairs} pairs; the generator's B/A spread ${m.generator_sd_pct}%): the machine's speed changed between the two windows of a pair, and accounts for ${m.correlation ** 2 >= 0.5 ? 'most' : 'part'} of the pairs' spread of ${m.pair_sd_pct}% (${m.pair_sd_without_generator_pct}% without it); a quieter machine narrows the interval`;
}

module.exports = { machineSpeed, machineSpeedNote };
