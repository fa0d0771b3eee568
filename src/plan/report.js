'use strict';
// The plan report: plan.md with a table of every point, and charts of CPU
// time per request, throughput and p99 against the swept parameter, each
// point the mean of its repetitions with a 95% confidence interval.

const fs = require('node:fs');
const path = require('node:path');
const { summarize } = require('../stats');
const { lineChart } = require('../report/charts');
const { scrub, scrubDeep } = require('../util/scrub');

const FIGURES = [
  { key: 'cpu_ms_per_request', label: 'CPU ms per request (gross)', get: (f) => f.cpu_ms_per_request, digits: 3 },
  { key: 'cpu_ms_per_request_net', label: 'CPU ms per request (net)', get: (f) => f.cpu_ms_per_request_net, digits: 3 },
  { key: 'rps', label: 'requests per second', get: (f) => f.rps, digits: 0 },
  { key: 'p99_ms', label: 'p99 latency, ms', get: (f) => f.latency_ms.p99, digits: 1 },
  // Shown when some run has them: a sweep of instances (INSTANCE) with SATURATE=yes and HOURLY_PRICE.
  {
    key: 'saturation_rps',
    label: 'saturation, requests/s',
    get: (f, run) => (run.saturation ? run.saturation.max_sustainable_rps : null),
    digits: 0,
    optional: true,
  },
  {
    key: 'cost_per_million',
    label: 'cost per million requests (at saturation when searched)',
    get: (f, run) => (run.saturation ? run.saturation.cost_per_million_at_max : f.cost_per_million_requests),
    digits: 4,
    optional: true,
  },
  {
    key: 'disk_read_bytes_per_request',
    label: 'disk bytes read per request',
    get: (f) => f.disk_read_bytes_per_request,
    digits: 0,
    optional: true,
  },
];
const isSet = (v) => v !== null && v !== undefined;

function readRun(dir, rel) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, rel, 'run.json'), 'utf8'));
  } catch {
    return null;
  }
}

/** Per point: the figures of each ok run and their summary. Also stored in plan.json as `results`. */
function pointResults(dir, state) {
  return state.points.map((p) => {
    const runs = p.runs
      .filter((r) => r.status === 'ok' && r.dir)
      .map((r) => readRun(dir, r.dir))
      .filter((r) => r && r.figures);
    const summary = {};
    const values = {};
    for (const f of FIGURES) {
      values[f.key] = runs.map((r) => f.get(r.figures, r));
      if (f.optional) values[f.key] = values[f.key].filter(isSet);
      summary[f.key] = summarize(values[f.key]);
    }
    return {
      name: p.name,
      values: p.values,
      runs_ok: runs.length,
      runs_failed: p.runs.length - runs.length,
      figures: values,
      summary,
    };
  });
}

const fmt = (v, d) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(d));
const fmtSummary = (s, d) =>
  s.n === 0 ? 'n/a' : s.ci95 ? `${fmt(s.mean, d)} [${fmt(s.ci95[0], d)}, ${fmt(s.ci95[1], d)}]` : fmt(s.mean, d);

/** The x axis of the plan's charts: the swept value when one numeric key is swept (log scale over a wide range). */
function planAxis(state, results) {
  const single = state.sweep.length === 1 && results.every((r) => Number.isFinite(Number(r.values[state.sweep[0]])));
  const xOf = (r, i) => (single ? Number(r.values[state.sweep[0]]) : i + 1);
  const xs = results.map(xOf);
  const logX = single && xs.every((x) => x > 0) && Math.max(...xs) / Math.min(...xs) >= 16;
  return { xOf, logX, xLabel: single ? `${state.sweep[0]}${logX ? ' (log scale)' : ''}` : 'point (see the table)' };
}

/** One chart per figure shown (charts/<figure>.svg): the mean of each point with its interval; returns the files. */
function writePlanCharts(dir, state, results, shown) {
  const { xOf, logX, xLabel } = planAxis(state, results);
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  const charts = [];
  for (const f of shown.filter((x) => x.key !== 'cpu_ms_per_request_net')) {
    const points = results
      .map((r, i) => [xOf(r, i), r.summary[f.key].mean, ...(r.summary[f.key].ci95 || [])])
      .filter(([, y]) => y !== null);
    const chart = lineChart({
      title: `${f.label} against ${state.sweep.join(' x ')}`,
      xLabel,
      yLabel: f.label,
      logX,
      series: [{ name: `mean of ${state.repetitions} run(s)`, points, markers: true }],
      note:
        state.repetitions > 1
          ? 'bars: 95% confidence interval of the mean (Student t)'
          : 'one run per point: no interval',
    });
    fs.writeFileSync(path.join(dir, 'charts', `${f.key}.svg`), scrub(chart));
    charts.push(`${f.key}.svg`);
  }
  return charts;
}

/** plan.md's head and its table: each point's runs and the mean of each figure with its interval. */
function planTable(state, results, shown) {
  const lines = [`# chainperf plan: ${state.plan} — ${state.status}`, ''];
  lines.push(
    `Base scenario \`${path.basename(state.base)}\`, sweeping ${state.sweep.join(', ')}, ${state.repetitions} repetition(s) per point; started ${state.started_at}${state.ended_at ? `, ended ${state.ended_at}` : ''}.`,
  );
  const fixed = Object.entries(state.fixed).map(([k, v]) => `${k}=${v}`);
  if (fixed.length) lines.push(`Fixed for every point: ${fixed.join(', ')}.`);
  lines.push(
    '',
    "Each cell: mean over the point's successful runs, with its 95% confidence interval in brackets when there are two or more.",
    '',
  );
  lines.push(`| ${state.sweep.join(' | ')} | runs ok | failed | ${shown.map((f) => f.label).join(' | ')} |`);
  lines.push(`|${state.sweep.map(() => '---').join('|')}|---:|---:|${shown.map(() => '---:').join('|')}|`);
  for (const r of results) {
    lines.push(
      `| ${state.sweep.map((k) => r.values[k]).join(' | ')} | ${r.runs_ok} | ${r.runs_failed} | ${shown.map((f) => fmtSummary(r.summary[f.key], f.digits)).join(' | ')} |`,
    );
  }
  return lines;
}

/** plan.md's failed runs, the link to every run's report, and the charts. */
function planRunLines(state, charts) {
  const lines = [];
  const failures = state.points.flatMap((p) =>
    p.runs
      .filter((r) => r.status !== 'ok')
      .map((r) => `${p.name}: ${r.error}${r.dir ? ` ([report](${r.dir}/summary.md))` : ''}`),
  );
  if (failures.length) lines.push('', '## Failed runs', '', ...failures.map((f) => `- ${f}`));
  lines.push('', '## Runs', '');
  for (const p of state.points)
    for (const r of p.runs) if (r.dir) lines.push(`- ${p.name}: [${r.status}](${r.dir}/summary.md)`);
  lines.push('', '## Charts', '', ...charts.map((c) => `![${c}](charts/${c})\n`));
  return lines;
}

/** Writes results.json, the charts and plan.md of a plan folder from its plan.json and its runs' reports. */
function renderPlanReport(dir) {
  const state = JSON.parse(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'));
  const results = pointResults(dir, state);
  fs.writeFileSync(path.join(dir, 'results.json'), `${JSON.stringify(scrubDeep(results), null, 2)}\n`);
  const shown = FIGURES.filter((f) => !f.optional || results.some((r) => r.figures[f.key].length > 0));
  const charts = writePlanCharts(dir, state, results, shown);
  const lines = [...planTable(state, results, shown), ...planRunLines(state, charts)];
  fs.writeFileSync(path.join(dir, 'plan.md'), scrub(`${lines.join('\n')}\n`));
  return results;
}

module.exports = { renderPlanReport, pointResults, FIGURES };
