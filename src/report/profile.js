'use strict';
// The report's parts about what the node spent its CPU on: the NODE_PROFILE
// section of summary.md (profiler, flame graph, top functions) and the
// per-core load (a line and a chart).

const { lineChart } = require('./charts');

const pct = (x) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const cell = (s) => String(s).replace(/\|/g, '\\|');
/** A function's name for a table: long C++ template names are cut (run.json keeps them whole). */
const fnName = (s) => (s.length > 100 ? `${s.slice(0, 99)}…` : s);

/** One line for "How it was measured": each core's CPU over the window and the imbalance. */
function perCoreLine(pc, node = {}) {
  if (!pc) return null;
  // The cgroup source adds usage_user and usage_sys, which the kernel keeps by the scheduler tick: say so when they
  // differ.
  const gap =
    node.cpu_source && node.cpu_source.kind === 'cgroup' && pc.usage_s > 0 && node.cpu_total_s !== null
      ? (node.cpu_total_s - pc.usage_s) / pc.usage_s
      : 0;
  const tick =
    Math.abs(gap) > 0.02
      ? ` The cgroup's exact total (cpuacct.usage) is ${pc.usage_s.toFixed(3)} s; its user and system counters, kept by the scheduler tick, add up to ${node.cpu_total_s.toFixed(3)} s (${gap > 0 ? '+' : ''}${(gap * 100).toFixed(1)}%).`
      : '';
  const cores = pc.cores
    .filter((c) => c.node_core)
    .map((c) => `cpu${c.cpu} ${c.cpu_s.toFixed(3)} s (${pct(c.utilization)} busy)`);
  const imb = pc.imbalance === null ? 'n/a' : `${pc.imbalance.toFixed(2)}x`;
  return `- Per-core load (${pc.source}, read at the window's edges): ${cores.join(', ')}; ${pc.total_s.toFixed(3)} s in all. Busiest core against the mean of the node's cores: ${imb} (1.00x is even${pc.cores.filter((c) => c.node_core).length > 1 ? `, ${pc.cores.filter((c) => c.node_core).length}.00x all on one core` : ''}).${tick}`;
}

/** The per-core chart from series.per_core (CPU seconds per core per second). */
function perCoreChart(run, series) {
  const pc = run.node && run.node.per_core;
  const points = series.per_core || [];
  if (!pc || !points.length || !run.window) return {};
  const t0 = run.window.start_ms;
  const lines = pc.cores
    .filter((c) => c.node_core)
    .map((c) => ({
      name: `cpu${c.cpu}`,
      points: points
        .filter((p) => p.span_s > 0)
        .map((p) => [(p.t_ms - t0) / 1000 + p.span_s / 2, (100 * (p.cpu_s[c.cpu] || 0)) / p.span_s]),
    }));
  return {
    'per-core.svg': lineChart({
      title: 'Node CPU on each of its cores',
      xLabel: 'seconds into the measured window',
      yLabel: '% of the core',
      series: lines,
      xRange: [0, (run.window.end_ms - run.window.start_ms) / 1000],
      note: `cgroup cpuacct.usage_percpu, every second; busiest core / mean over the window: ${pc.imbalance === null ? 'n/a' : pc.imbalance.toFixed(2)}`,
    }),
  };
}

function topTable(rows, lines) {
  lines.push('| function | self | total |', '|---|---:|---:|');
  for (const r of rows)
    lines.push(`| \`${cell(fnName(r.function))}\` | ${pct(r.self_share)} | ${pct(r.total_share)} |`);
}

/** The summary.md section of NODE_PROFILE=cpu. */
function profileSection(run) {
  const p = run.profile;
  if (!p) return [];
  const lines = ['', '## Node CPU profile (NODE_PROFILE=cpu)', ''];
  lines.push(
    `**Profiling was on** during every measured window: the figures above include the profiler's own cost. Profiler: ${p.describe || p.profiler}; flame graphs by ${p.renderer || 'inferno'}.`,
    '',
  );
  if (p.error) lines.push(`The profiles could not be summarized: ${p.error}`, '');
  for (const w of p.windows || []) {
    lines.push(
      w.error
        ? `- Window ${w.name}: no profile (${w.error}).`
        : `- Window ${w.name}: ${w.samples} samples over ${w.seconds === null ? '?' : Number(w.seconds).toFixed(1)} s; native profile \`${w.native}\`, folded stacks \`${w.folded}\`, flame graph \`${w.flamegraph}\`.`,
    );
  }
  if (p.top) {
    const over =
      (p.windows || []).filter((w) => w.folded).length > 1 && p.folded === 'profile/all.folded'
        ? 'all measured windows together'
        : 'the measured window';
    lines.push(
      '',
      `Top functions over ${over} (${p.top.samples} samples): *self* is the share of samples where the function itself was running, *total* where it was anywhere on the stack.`,
      '',
    );
    lines.push('By self:', '');
    topTable(p.top.by_self, lines);
    lines.push('', 'By total:', '');
    topTable(p.top.by_total, lines);
  }
  if (p.flamegraph)
    lines.push(
      '',
      `![Flame graph of the node's CPU](${p.flamegraph})`,
      '',
      `(Open \`${p.flamegraph}\` in a browser to zoom and search.)`,
    );
  return lines;
}

module.exports = { perCoreLine, perCoreChart, profileSection };
