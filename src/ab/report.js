'use strict';
// The folder of an A/B session: ab.json (documented by schema/ab.schema.json),
// summary.md, and a chart of the ratio B/A of CPU time per request as pairs
// accumulate, with its interval narrowing.

const fs = require('node:fs');
const path = require('node:path');
const { lineChart } = require('../report/charts');
const { AB_FIGURES } = require('./figures');
const { writeScrubbed } = require('../util/scrub');
const { profileDiffSection } = require('../report/profile-diff');
const chains = require('../chains');
const { startupSOf } = require('../workload/artillery');
const { SLICE_GAP_MS } = require('./interleave');

const fmt = (v, d) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(d));
const VERDICT = { lower: 'B lower', higher: 'B higher', same: 'same within the interval' };

function figuresTable(ab) {
  const lines = [
    '| figure | A (mean of windows) | B (mean of windows) | B/A | 95% interval | verdict | pairs |',
    '|---|---:|---:|---:|---|---|---:|',
  ];
  for (const [key, f] of Object.entries(AB_FIGURES)) {
    const r = ab.figures[key];
    const ci = r.ci95 ? `${fmt(r.ci95[0], 4)} to ${fmt(r.ci95[1], 4)} (±${fmt(r.halfwidth_pct, 1)}%)` : 'n/a';
    lines.push(
      `| ${f.label} | ${fmt(r.a_mean, f.digits)} | ${fmt(r.b_mean, f.digits)} | ${fmt(r.ratio, 4)} | ${ci} | ${r.verdict ? VERDICT[r.verdict] : r.undecided ? 'not decided (one process per side)' : 'n/a (fewer than two pairs)'} | ${r.n} |`,
    );
  }
  return lines;
}

function pairsTable(ab) {
  const lines = [
    '| pair | order | A CPU ms/req | B CPU ms/req | B/A | A req/s | B req/s | A gen us/req | B gen us/req | idle partner CPU s/s (A, B) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const p of ab.pairs) {
    const [a, b] = [p.a, p.b];
    const ratio =
      a.compared.cpu_ms_per_request && b.compared.cpu_ms_per_request
        ? b.compared.cpu_ms_per_request / a.compared.cpu_ms_per_request
        : null;
    lines.push(
      `| ${p.pair}${p.block === undefined ? '' : ` (block ${p.block + 1})`} | ${p.order} | ${fmt(a.compared.cpu_ms_per_request, 4)} | ${fmt(b.compared.cpu_ms_per_request, 4)} | ${fmt(ratio, 4)} | ${fmt(a.compared.rps, 0)} | ${fmt(b.compared.rps, 0)} | ${fmt(a.generator.cpu_us_per_request, 1)} | ${fmt(b.generator.cpu_us_per_request, 1)} | ${fmt(a.partner_cpu_s_per_s, 4)}, ${fmt(b.partner_cpu_s_per_s, 4)} |`,
    );
  }
  return lines;
}

function sideLine(key, side) {
  const c = side.client || {};
  const sc = side.provenance.scenario;
  const chain = chains[sc.CHAIN];
  // A chain with its own generator (Substrate: @polkadot/api) names it; GENERATOR and TRANSPORT are Ethereum's.
  const generator =
    chain && chain.generatorLabel
      ? `generator: ${chain.generatorLabel(sc)}`
      : `GENERATOR=${sc.GENERATOR}, TRANSPORT=${sc.TRANSPORT}`;
  const state = sc.STATE && sc.STATE !== 'dev' ? `, STATE=${sc.STATE} (${sc.STATE_DISTRIBUTION})` : '';
  const memory = sc.MEMORY_MB ? `, MEMORY_MB=${sc.MEMORY_MB}` : '';
  return `- **${key}**: \`${side.scenario_file}\`: ${c.name || sc.CLIENT} ${c.version || ''} (${sc.RUNTIME}), WORKLOAD=${sc.WORKLOAD}, DB_CACHE_MB=${sc.DB_CACHE_MB}, CORES=${sc.CORES}${state}${memory}, ${generator}`;
}

function renderSummary(ab) {
  const cpu = ab.figures.cpu_ms_per_request;
  const head = cpu.verdict
    ? `B/A of CPU time per request: **${fmt(cpu.ratio, 4)}**, 95% interval ${fmt(cpu.ci95[0], 4)} to ${fmt(cpu.ci95[1], 4)}: **${VERDICT[cpu.verdict]}**`
    : 'No verdict: fewer than two pairs were measured.';
  const lines = [
    `# chainperf A/B ${ab.run_id}`,
    '',
    `Status: **${ab.status}**${ab.error ? ` (${ab.error})` : ''}. ${ab.pairs.length} pair(s); ${ab.stop_reason || ''}`,
    '',
    head,
    '',
  ];
  if (ab.regression)
    lines.push(
      `Regression gate (MAX_REGRESSION_PCT=${ab.regression.max_regression_pct}): ${ab.regression.pass ? 'pass' : `**FAIL**: ${ab.regression.failed.join('; ')}`}`,
      '',
    );
  lines.push(sideLine('A', ab.a), sideLine('B', ab.b), '');
  if (ab.warnings.length || ab.a.warnings.length || ab.b.warnings.length) {
    lines.push(
      '## Warnings',
      '',
      ...ab.warnings.map((w) => `- ${w}`),
      ...ab.a.warnings.map((w) => `- A: ${w}`),
      ...ab.b.warnings.map((w) => `- B: ${w}`),
      '',
    );
  }
  lines.push('## Figures', '', ...figuresTable(ab), '');
  lines.push(
    'Memory peak compares the two node processes of this session: each side is one process throughout, and two identical processes can settle at heaps of different sizes, which the pairs do not resample (an A/A session calls memory different more often than 5% of the time: README, A/B). The other figures are per window.',
    '',
  );
  lines.push('![B/A of CPU time per request as pairs accumulate](charts/ratio.svg)', '');
  lines.push('## Pairs', '', ...pairsTable(ab), '');
  if (ab.profile_diff) lines.push(...profileDiffSection(ab.profile_diff), '');
  lines.push('## How this was measured', '');
  lines.push(
    `Both nodes ran at once on this machine, each as its scenario says; the load alternated between them in ${ab.settings.order} order (A then B, then B then A, ...), so that a slow drift of the machine falls on both sides alike. Each window was measured as a run's window is: its own idle baseline (IDLE_S), then the workload (DURATION_S), node CPU read at the window's edges. The node not under load stayed up and idle; what it spent meanwhile is in the last column of the pairs table (it is not counted in the other's figure, but it shares the cores). Each pair gives one ratio B/A; the interval is ${ab.settings.interval} over the pairs, never over requests or seconds inside a window. A verdict is "B lower" or "B higher" only when the whole interval lies on one side of 1. The generator's own CPU per request (gen us/req) follows the machine's speed during each window: it runs the same code for both sides (and, when both sides have the same workload, sends them the same requests).`,
  );
  if (ab.settings.generator)
    lines.push(
      '',
      ab.settings.generator === 'kept'
        ? "Each side's load generator started once, with its warm-up, and ran every window of that side, idle in between; each window began with about a second of load before it opened, the same instants, seeds and counts as a window with a generator of its own."
        : `Each window had a load generator of its own, started about ${startupSOf(ab.a.provenance.scenario)} s before it (${ab.settings.generator_reason}).`,
    );
  const slices = slicesNote(ab);
  if (slices) lines.push('', slices);
  if (ab.machine_speed) lines.push('', machineSpeedLine(ab.machine_speed));
  lines.push('', restartsNote(ab.settings.restart_pairs));
  if (ab.burn_in) lines.push('', burnInNote(ab.burn_in));
  if (ab.window_choice) lines.push('', windowNote(ab));
  return `${lines.join('\n')}\n`;
}

/** AB_SLICE_S: how the pairs' two windows shared their span, or why they did not. */
function slicesNote(ab) {
  const set = ab.settings;
  const n = ab.pairs.filter((p) => p.interleaved).length;
  if (n)
    return `${n === ab.pairs.length ? 'Each pair was' : `${n} of ${ab.pairs.length} pairs were`} interleaved (AB_SLICE_S=${set.slice_s}): A's and B's windows ran over one span, taking turns in slices of about ${set.slice_s} s (a quarter more or less, seeded), the side first in the pair's order taking the first slice; each side's load stopped ${SLICE_GAP_MS} ms before each of its slices ended, its node's CPU was read at every edge of its slices, and its figures are its slices' sums (CPU over its slices, requests answered in them, its time the time inside them). The machine's speed, which moves over tens of seconds on a shared host, then falls on both sides alike. The idle partner column gives what each node spent between its own slices.`;
  if (set.interleave_reason)
    return `Pairs of whole windows, one side after the other (AB_SLICE_S: ${set.interleave_reason}).`;
  return null;
}

/** AB_WINDOW=auto: what the noise inside the first pairs' windows said of their length, and what the session did. */
function windowNote(ab) {
  const c = ab.window_choice;
  const predicted = c.candidates
    .map((x) => `${x.length_s} s: ${x.units_needed} unit(s), ${(x.seconds_left / 60).toFixed(1)} min`)
    .join('; ');
  const did = ab.pilot
    ? `The session chose ${c.length_s} s windows: the first ${ab.pilot.pairs.length} pairs, of ${ab.pilot.window_s} s windows, were a pilot (kept in ab.json, in no interval), and both stages started again at ${c.length_s} s.`
    : `The session kept its ${c.length_s} s windows.`;
  return `Window length (AB_WINDOW=auto): the difference between the two halves of each window of the first pairs measured the noise inside windows, which a longer window averages down (what differs between windows is left out of the prediction: the choice may not look at the pairs' spread, or the interval would no longer hold 95%). Predicted time left to reach ±${ab.settings.target_pct}% from that noise alone: ${predicted}. ${did}`;
}

/** ab.machine_speed: how much of the pairs' spread followed the generator's own B/A (ab/machine-speed.js). */
function machineSpeedLine(m) {
  return `The machine's speed: over ${m.pairs} pairs, the node's B/A of CPU per request spread ${m.pair_sd_pct}% (sd of the log ratios) and the generator's own B/A ${m.generator_sd_pct}%, with a correlation of ${m.correlation.toFixed(2)} (${m.significant ? '' : 'not '}different from 0 at 95%); without the part the generator's ratio predicts, the node's would spread ${m.pair_sd_without_generator_pct}%. Descriptive only: the interval above is over the pairs as measured.`;
}

/** AB_BURN_IN_PAIRS: the pairs before the stages, with their ratios, in no interval. */
function burnInNote(burnIn) {
  const ratios = burnIn.pairs.map((p) => fmt(p.b.figures.cpu_ms_per_request / p.a.figures.cpu_ms_per_request, 4));
  return `Burn-in (AB_BURN_IN_PAIRS): ${burnIn.pairs.length} pair(s) measured before the stages (B/A of CPU per request ${ratios.join(', ') || 'none'}), kept in ab.json and in no interval: a session's first pair ran odd in A/A sessions (docs/results.md).`;
}

/** What the interval sampled: the windows of two node processes, or (AB_RESTART_PAIRS) new processes block by block. */
function restartsNote(restartPairs) {
  return restartPairs
    ? `Both nodes were restarted ${restartPairs === 1 ? 'before every pair' : `before every block of ${restartPairs} pairs`} (AB_RESTART_PAIRS) and warmed up again: the pairs table gives the block of each pair (which pair of processes it measured), and each interval is over the blocks, so it covers how processes of one configuration differ.`
    : 'Both nodes ran as one process each for the whole session: the intervals cover how the windows of these two processes vary, not how two processes of one configuration may differ (by a few percent of CPU per request in A/A sessions, docs/results.md); AB_RESTART_PAIRS samples processes too.';
}

/** The running ratio and its interval after each pair, and each pair's own ratio. */
function ratioChart(ab) {
  const running = ab.progress.map((p) => (p.ci95 ? [p.pairs, p.ratio, p.ci95[0], p.ci95[1]] : [p.pairs, p.ratio]));
  const own = ab.pairs
    .map((p) => [p.pair, p.b.compared.cpu_ms_per_request / p.a.compared.cpu_ms_per_request])
    .filter(([, y]) => Number.isFinite(y));
  const ys = [...running.flatMap(([, y, lo, hi]) => [y, lo, hi]), ...own.map(([, y]) => y), 1].filter(Number.isFinite);
  const span = Math.max(0.02, ...ys.map((y) => Math.abs(y - 1)));
  const pad = Math.ceil(span * 1.1 * 100) / 100;
  return lineChart({
    title: 'B/A of CPU time per request as pairs accumulate',
    xLabel: 'pairs measured',
    yLabel: 'B/A',
    series: [
      { name: 'B/A, 95% CI', points: running, markers: true },
      { name: 'each pair', points: own, markers: true, dashed: true },
      {
        name: 'B = A',
        points: [
          [1, 1],
          [Math.max(2, ab.pairs.length), 1],
        ],
        dashed: true,
      },
    ],
    xRange: [1, Math.max(2, ab.pairs.length)],
    yRange: [Math.max(0, 1 - pad), 1 + pad],
    note: "interval: Student's t on the log of each pair's ratio",
  });
}

/** Writes ab.json, summary.md and charts/ratio.svg into dir. */
function writeAbReport(dir, ab) {
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  // Everything written passes the scrubber that knows this session's secrets (RPC_URL, METRICS_URL, ...).
  writeScrubbed(path.join(dir, 'ab.json'), ab, { json: true });
  writeScrubbed(path.join(dir, 'summary.md'), renderSummary(ab));
  writeScrubbed(path.join(dir, 'charts', 'ratio.svg'), ratioChart(ab));
}

module.exports = { writeAbReport, renderSummary };
