'use strict';
// Statistics over repeated measurements: median, 95% confidence interval of
// the mean (Student's t), coefficient of variation, and Welch's t-test for
// "is this difference larger than the noise". Pure functions.

// Two-sided 95% critical values of Student's t for 1..30 degrees of freedom.
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** Two-sided 95% critical value of t for df degrees of freedom (df may be fractional, Welch). */
function t95(df) {
  if (!(df >= 1)) return Infinity;
  if (df > 30) return df > 120 ? 1.96 : 2.042 - ((df - 30) / 90) * (2.042 - 1.98);
  const lo = Math.floor(df);
  const hi = Math.min(30, lo + 1);
  return T95[lo - 1] + (df - lo) * (T95[hi - 1] - T95[lo - 1]);
}

const finite = (xs) => xs.filter((x) => typeof x === 'number' && Number.isFinite(x));

function mean(xs) {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Sample standard deviation (n - 1). */
function sd(xs) {
  if (xs.length < 2) return null;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * Summary of repeated values: n, median, mean, 95% CI of the mean, CV.
 * With one value the interval and CV are null: one run says nothing about its noise.
 */
function summarize(values) {
  const xs = finite(values);
  if (!xs.length) return { n: 0, median: null, mean: null, ci95: null, cv: null };
  const m = mean(xs);
  const s = sd(xs);
  const half = s === null ? null : (t95(xs.length - 1) * s) / Math.sqrt(xs.length);
  return {
    n: xs.length,
    median: median(xs),
    mean: m,
    ci95: half === null ? null : [m - half, m + half],
    cv: s === null || m === 0 ? null : s / Math.abs(m),
  };
}

/**
 * Welch's t-test of two samples. significant: the means differ by more than
 * their noise at 95%. Null when a sample has fewer than two values.
 */
function welch(a, b) {
  const xa = finite(a);
  const xb = finite(b);
  if (xa.length < 2 || xb.length < 2) return null;
  const va = sd(xa) ** 2 / xa.length;
  const vb = sd(xb) ** 2 / xb.length;
  const diff = mean(xb) - mean(xa);
  if (va + vb === 0) return { t: diff === 0 ? 0 : Infinity, df: xa.length + xb.length - 2, significant: diff !== 0 };
  const t = diff / Math.sqrt(va + vb);
  const df = (va + vb) ** 2 / (va ** 2 / (xa.length - 1) + vb ** 2 / (xb.length - 1));
  return { t, df, significant: Math.abs(t) > t95(df) };
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted, p) {
  if (!sorted.length) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

function latencySummary(lat) {
  const s = Float64Array.from(lat).sort();
  const r = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
  return {
    p50: r(percentile(s, 50)),
    p95: r(percentile(s, 95)),
    p99: r(percentile(s, 99)),
    max: r(s.length ? s[s.length - 1] : null),
  };
}

module.exports = { summarize, welch, median, mean, sd, t95, percentile, latencySummary };
