'use strict';
// npm run bench:chain's arithmetic, pure: the figures it reads from a measured
// window (a run's run.json, or one side of an A/B pair in ab.json: both have
// node and figures), their medians over repetitions, B/A over pairs of runs
// with a 95% interval from the pairs (never from seconds inside a window),
// the order of the runs, and the tables it prints.

const { median } = require('../../src/stats');
const { pairedRatio } = require('../../src/ab/stats');
const { fmt } = require('./run-sh');

const keepUpOf = (w) => (w && w.node && w.node.network && w.node.network.keep_up) || {};
const chainOf = (w) => (w && w.node && w.node.network && w.node.network.chain) || {};
const fig = (w, key) => (w && w.figures ? w.figures[key] : undefined);
const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/** A figure of the window's run.json figures, under the same key there as here. */
const ownFigure = (key, label, digits) => ({ [key]: { label, digits, get: (w) => fig(w, key) } });

/** Each figure the bench reads from a window: key -> {label, digits, get(window)}. */
const FIGURES = {
  ...ownFigure('cpu_ms_per_request', 'CPU ms/request (gross)', 4),
  ...ownFigure('cpu_ms_per_request_net', 'CPU ms/request, net of idle', 4),
  ...ownFigure('cpu_ms_per_request_net_of_chain', 'CPU ms/request, net of the chain (idle under its traffic)', 4),
  ...ownFigure('rps', 'requests/s', 1),
  p99_ms: { label: 'latency p99 ms', digits: 2, get: (w) => (fig(w, 'latency_ms') || {}).p99 },
  ...ownFigure('disk_read_bytes_per_block', 'disk bytes read/block', 0),
  ...ownFigure('disk_write_bytes_per_block', 'disk bytes written/block', 0),
  ...ownFigure('disk_write_bytes_dirtied_per_block', 'bytes dirtied for writing/block', 0),
  ...ownFigure('disk_write_bytes_dirtied_per_request', 'bytes dirtied for writing/request', 1),
  ...ownFigure('disk_read_bytes_per_request', 'disk bytes read/request', 1),
  ...ownFigure('disk_write_bytes_per_request', 'disk bytes written/request', 1),
  import_p50_ms: { label: 'import p50 ms (driver)', digits: 1, get: (w) => (keepUpOf(w).import_ms || {}).p50_ms },
  import_p99_ms: { label: 'import p99 ms (driver)', digits: 1, get: (w) => (keepUpOf(w).import_ms || {}).p99_ms },
  client_import_p50_ms: {
    label: "import p50 ms (client's log)",
    digits: 1,
    get: (w) => ((keepUpOf(w).import_ms || {}).client || {}).p50_ms,
  },
  client_import_p99_ms: {
    label: "import p99 ms (client's log)",
    digits: 1,
    get: (w) => ((keepUpOf(w).import_ms || {}).client || {}).p99_ms,
  },
  head_lag_s_p99: { label: 'head lag p99 s', digits: 2, get: (w) => ((keepUpOf(w).head_lag || {}).seconds || {}).p99 },
  head_lag_s_worst: {
    label: 'head lag worst s',
    digits: 2,
    get: (w) => ((keepUpOf(w).head_lag || {}).worst || {}).seconds,
  },
  head_lag_blocks_worst: {
    label: 'head lag worst blocks',
    digits: 0,
    get: (w) => ((keepUpOf(w).head_lag || {}).worst || {}).blocks,
  },
  share_behind: { label: 'share of looks behind', digits: 4, get: (w) => (keepUpOf(w).head_lag || {}).share_behind },
  stale_answer_share: { label: 'stale answer share', digits: 4, get: (w) => (keepUpOf(w).stale_answers || {}).share },
  blocks: { label: 'blocks in the window', digits: 0, get: (w) => chainOf(w).blocks },
  gas_per_block: { label: 'gas per block (mean)', digits: 0, get: (w) => (chainOf(w).gas_used || {}).mean },
};

/** A window's figures, {key: number|null} for every key of FIGURES. */
function windowFigures(w) {
  const out = {};
  for (const [key, f] of Object.entries(FIGURES)) out[key] = num(f.get(w));
  return out;
}

/**
 * FAULT=pause-node's catch-up of a run, and with FAULT_LOAD=on its window's stale answers (the pause's among them;
 * with off the pause came after the window, whose stale answers are not the pause's); null without a catch-up record.
 */
function catchUpFigures(run) {
  const c = run && run.fault && run.fault.catch_up;
  if (!c) return null;
  const stale = (run.fault.load === 'on' && keepUpOf(run).stale_answers) || {};
  return {
    caught_up: c.caught_up === true,
    gap_blocks: num(c.gap_blocks),
    seconds: num(c.seconds),
    blocks: num(c.blocks),
    blocks_per_s: num(c.blocks_per_s),
    stale_answers: num(stale.count),
    stale_answer_share: num(stale.share),
  };
}

/** The median of a key over figure records (null ones, failed runs, left out) and how many had it. */
function medianOf(records, key) {
  const xs = records
    .filter(Boolean)
    .map((r) => r[key])
    .filter((x) => num(x) !== null);
  return { median: xs.length ? median(xs) : null, n: xs.length };
}

/**
 * B/A of a key over pairs [{a, b}] of figure records (either null for a failed run): the geometric mean of the pair
 * ratios and its 95% interval (Student's t on their logs, as ./run.sh ab does); a pair with a value missing or not
 * positive on either side is left out and counted.
 */
function ratioOf(pairs, key) {
  const values = pairs.map((p) => ({ a: p.a ? p.a[key] : null, b: p.b ? p.b[key] : null }));
  return pairedRatio(values.map(({ a, b }) => ({ a: num(a), b: num(b) })));
}

/** The runs in order: each repetition runs every arm once, in the arms' order (A, B, A, B, ...). */
function schedule(arms, reps) {
  const out = [];
  for (let rep = 1; rep <= reps; rep++) for (const arm of arms) out.push({ arm, rep });
  return out;
}

/** The together part's rates: 1 request/s for "0%" (the chain's work alone), R/2 and R. */
function togetherRates(r) {
  const R = Math.max(1, Math.round(r));
  return { 0: 1, 50: Math.max(1, Math.round(R / 2)), 100: R };
}

/** "1.0234 [0.9811, 1.0671] same (3 pairs)", or what is missing. */
function fmtRatio(r) {
  const out = r && r.left_out ? `, ${r.left_out} left out` : '';
  if (!r || r.ratio === null) return `n/a (${r ? r.n : 0} pairs${out})`;
  const ci = r.ci95 ? `[${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}] ${r.verdict}` : 'no interval';
  return `${r.ratio.toFixed(4)} ${ci} (${r.n} pairs${out})`;
}

/** A markdown table: header cells, then rows of cells. */
function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * The medians of each figure per arm ({name, records}: a record per run, null for a failed one), with B/A over the
 * pairs [{a, b}] in a last column when pairs are given; a median over fewer runs than the arm's good ones says so.
 */
function armsTable(arms, keys, pairs = null) {
  const header = [
    'figure',
    ...arms.map((a) => `${a.name} (median of ${a.records.filter(Boolean).length})`),
    ...(pairs ? ['B/A, 95% interval from the pairs'] : []),
  ];
  const rows = keys.map((key) => {
    const d = FIGURES[key].digits;
    const cells = arms.map((a) => {
      const m = medianOf(a.records, key);
      const good = a.records.filter(Boolean).length;
      return m.n === good ? fmt(m.median, d) : `${fmt(m.median, d)} (${m.n} of ${good})`;
    });
    return [FIGURES[key].label, ...cells, ...(pairs ? [fmtRatio(ratioOf(pairs, key))] : [])];
  });
  return table(header, rows);
}

/**
 * The key=value figures of arms (prefix_key_arm, arm: its kv or its name), and of B/A over pairs (prefix_key_ratio,
 * _ci_low, _ci_high).
 */
function armsKv(prefix, arms, keys, pairs = null) {
  const out = {};
  for (const key of keys) {
    const d = FIGURES[key].digits;
    for (const a of arms) out[`${prefix}_${key}_${a.kv || a.name}`] = fmt(medianOf(a.records, key).median, d);
    if (!pairs) continue;
    const r = ratioOf(pairs, key);
    out[`${prefix}_${key}_ratio`] = fmt(r.ratio, 4);
    out[`${prefix}_${key}_ci_low`] = r.ci95 ? r.ci95[0].toFixed(4) : 'n/a';
    out[`${prefix}_${key}_ci_high`] = r.ci95 ? r.ci95[1].toFixed(4) : 'n/a';
  }
  return out;
}

/** One run's line: its label, then each figure of keys with its label. */
const runLine = (label, f, keys) =>
  `${label}: ${keys.map((k) => `${FIGURES[k].label} ${fmt(f[k], FIGURES[k].digits)}`).join(', ')}`;

module.exports = {
  FIGURES,
  armsTable,
  armsKv,
  runLine,
  windowFigures,
  catchUpFigures,
  medianOf,
  ratioOf,
  schedule,
  togetherRates,
  fmt,
  fmtRatio,
  table,
};
