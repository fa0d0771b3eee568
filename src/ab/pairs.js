'use strict';
// The pairs of an A/B session turned into its figures: for each compared
// figure, the ratio B/A with its 95% interval over the pairs (Student's t on
// the logs of the pairs' ratios), and the regression gate.

const { pairedRatio, regressed, intervalUnits } = require('./stats');
const { mean } = require('../stats');
const { AB_FIGURES } = require('./figures');

/** One figure of each pair, {a, b, block}: what ab/stats.js takes its units from. */
const figurePairs = (pairs, key) => pairs.map((p) => ({ a: p.a.compared[key], b: p.b.compared[key], block: p.block }));

/**
 * The figures over the pairs so far: ratio, interval, verdict for each. stage1: Stein's first stage in units (pairs,
 * or blocks of pairs between restarts: stats.js stage1Units).
 */
function summarizePairs(pairs, stage1) {
  const out = {};
  for (const key of Object.keys(AB_FIGURES)) {
    // CPU per request chose the number of pairs: its interval is the two-stage one. The others' are over all pairs.
    const r = pairedRatio(intervalUnits(figurePairs(pairs, key)), key === 'cpu_ms_per_request' ? { stage1 } : {});
    const f = AB_FIGURES[key];
    out[key] = {
      ...r,
      ...(f.undecided ? { verdict: null, undecided: f.undecided } : {}),
      a_mean: meanOf(pairs.map((p) => p.a.compared[key])),
      b_mean: meanOf(pairs.map((p) => p.b.compared[key])),
    };
  }
  return out;
}

function meanOf(xs) {
  const v = xs.filter((x) => x !== null);
  return v.length ? mean(v) : null;
}

const fmtRatio = (r) =>
  r.ratio === null
    ? 'n/a'
    : `${r.ratio.toFixed(4)}${r.ci95 ? ` [${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}] (±${r.halfwidth_pct.toFixed(1)}%)` : ''}`;

/** CPU per request over the units of the interval: each pair, or each block of pairs between restarts. */
const cpuPairs = (pairs) => intervalUnits(figurePairs(pairs, 'cpu_ms_per_request'));

/**
 * The regression gate: figures where B is worse than A by more than MAX_REGRESSION_PCT with the whole interval beyond.
 */
function regressionGate(figures, maxPct) {
  if (maxPct === null || maxPct === undefined) return null;
  const failed = Object.entries(figures)
    .filter(([key, r]) => !AB_FIGURES[key].undecided && regressed(r, maxPct, AB_FIGURES[key].higherIsWorse))
    .map(
      ([key, r]) =>
        `${key}: B/A ${r.ratio.toFixed(4)}, 95% [${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}] beyond ${maxPct}% worse`,
    );
  return { max_regression_pct: maxPct, pass: failed.length === 0, failed };
}

/**
 * The warning for windows whose net CPU per request is not positive (the node used no more CPU than at its idle
 * baseline's rate: starved, or busy with work of its own while idle), which no interval of the net figure counts; null
 * when there are none.
 */
function netNotPositiveWarning(pairs) {
  const where = pairs.flatMap((p) =>
    ['a', 'b']
      .filter((k) => {
        const c = p[k].compared || {};
        return c.cpu_ms_per_request > 0 && c.cpu_ms_per_request_net !== null && c.cpu_ms_per_request_net <= 0;
      })
      .map((k) => `pair ${p.pair} ${k.toUpperCase()}: ${p[k].compared.cpu_ms_per_request_net} ms`),
  );
  if (!where.length) return null;
  return `the net CPU per request is not positive in ${where.length} window(s) (${where.join('; ')}): the node used no more CPU in them than at the rate of its idle baseline, so something else than the load moved its CPU (a node starved of its cores, or busy with work of its own while idle); their pairs are in no interval of the net figure: read the gross figure`;
}

module.exports = { summarizePairs, meanOf, fmtRatio, cpuPairs, regressionGate, netNotPositiveWarning };
