'use strict';
// The charts of one run's report (charts/*.svg), drawn from run.json and
// series.json alone: CPU time per request, throughput, latency, memory, disk
// and network, per-core load. Every chart's x axis is seconds into the
// measured window.

const { lineChart } = require('./charts');
const { perCoreChart } = require('./profile');

const X_LABEL = 'seconds into the measured window';

/** The window's time axis: its range, a time's x, and a second's point in the middle of its part inside the window. */
function axis(run) {
  const t0 = run.window ? run.window.start_ms : 0;
  const t1 = run.window ? run.window.end_ms : 0;
  const x = (t) => (t - t0) / 1000;
  return { xRange: [0, (t1 - t0) / 1000], x, mid: (p) => x((Math.max(t0, p.t_ms) + Math.min(t1, p.t_ms + 1000)) / 2) };
}

/** A flat dashed line across the window at value. */
const level = (name, value, w) => ({
  name,
  points: [
    [0, value],
    [w, value],
  ],
  dashed: true,
});

function cpuChart(run, series, { x, xRange }, source) {
  const f = run.figures || {};
  const points = (series.cpu_per_request || []).map((p) => [x(p.t_ms + 500), p.cpu_ms_per_request]);
  const lines = [{ name: 'per second', points }];
  if (f.cpu_ms_per_request !== null && f.cpu_ms_per_request !== undefined && run.window) {
    const w = (run.window.end_ms - run.window.start_ms) / 1000;
    lines.push(level('window (gross)', f.cpu_ms_per_request, w));
    if (f.cpu_ms_per_request_net !== null) lines.push(level('window (net of idle)', f.cpu_ms_per_request_net, w));
  }
  return lineChart({
    title: 'Node CPU time per request',
    xLabel: X_LABEL,
    yLabel: 'CPU ms per request',
    series: lines,
    xRange,
    note:
      source === 'cadvisor'
        ? 'node CPU from cAdvisor; points between consecutive cAdvisor samples'
        : `node CPU from ${source} counters; per-second points need a source readable at any instant`,
  });
}

function throughputChart(series, { mid, xRange }) {
  const req = (series.requests || []).filter((p) => p.span_ms > 0);
  const rate = (key) => req.map((p) => [mid(p), (p[key] * 1000) / p.span_ms]);
  return lineChart({
    title: 'Throughput',
    xLabel: X_LABEL,
    yLabel: 'requests per second',
    series: [
      { name: 'ok', points: rate('ok') },
      { name: 'failed', points: rate('failed') },
    ],
    xRange,
    note: 'requests completed per second of the window (edge seconds scaled by the part measured)',
  });
}

function latencyChart(series, { mid, xRange }) {
  const req = series.requests || [];
  return lineChart({
    title: 'Latency percentiles',
    xLabel: X_LABEL,
    yLabel: 'ms',
    series: ['p50', 'p95', 'p99'].map((p) => ({
      name: p,
      points: req.filter((r) => r.latency_ms[p] !== null).map((r) => [mid(r), r.latency_ms[p]]),
    })),
    xRange,
    note: 'successful requests, by the second they completed in',
  });
}

function memoryChart(series, { x, xRange }, source) {
  const cadvisor = source === 'cadvisor';
  return lineChart({
    title: 'Node memory',
    xLabel: X_LABEL,
    yLabel: 'MiB',
    series: [
      {
        name: cadvisor ? 'working set' : 'cgroup usage',
        points: series.memory.map((p) => [x(p.t_ms), p.bytes / 2 ** 20]),
      },
    ],
    xRange,
    note: cadvisor
      ? 'cAdvisor container_memory_working_set_bytes, at its sample instants'
      : "the node cgroup's memory usage, every second",
  });
}

function ioChart(io, { x, xRange }) {
  // Rates between consecutive cAdvisor samples of each counter.
  const rates = (xs) =>
    xs.slice(1).map((b, i) => [x(b.t_ms), (b.v - xs[i].v) / 2 ** 20 / Math.max(0.001, (b.t_ms - xs[i].t_ms) / 1000)]);
  return lineChart({
    title: 'Node disk and network',
    xLabel: X_LABEL,
    yLabel: 'MiB per second',
    series: [
      ['disk read', io.disk_read],
      ['disk written', io.disk_write],
      ['network received', io.network_rx],
      ['network sent', io.network_tx],
    ].map(([name, xs]) => ({ name, points: rates(xs) })),
    xRange,
    note: 'cAdvisor counters of the node container (blkio, network), between consecutive samples',
  });
}

/** NETWORK_NODES: how far behind the network's head the node was, second by second (the most behind in each). */
function headLagChart(series, { x, xRange }) {
  const pts = series.head_lag || [];
  return lineChart({
    title: "Head lag against the network's head",
    xLabel: X_LABEL,
    yLabel: 'behind the network',
    series: [
      { name: 'seconds', points: pts.map((p) => [x(p.t_ms + 500), p.seconds]) },
      { name: 'blocks', points: pts.map((p) => [x(p.t_ms + 500), p.blocks]) },
    ],
    xRange,
    note: "the most behind of each second's looks at the node's head (4 a second); read beside the throughput chart",
  });
}

/** REPLICAS: each replica's requests per second side by side (HAProxy's access log). */
function replicasChart(run, series, { mid, xRange }) {
  const names = run.node.fleet.replicas.map((r) => r.name);
  const pts = (series.replicas || []).filter((p) => p.span_ms > 0);
  return lineChart({
    title: 'Requests each replica served',
    xLabel: X_LABEL,
    yLabel: 'requests per second',
    series: names.map((n) => ({ name: n, points: pts.map((p) => [mid(p), (p.ok[n] * 1000) / p.span_ms]) })),
    xRange,
    note: "2xx responses per second in HAProxy's access log, by the replica that served them",
  });
}

function charts(run, series) {
  const ax = axis(run);
  const source = run.node && run.node.cpu_source ? run.node.cpu_source.kind : 'n/a';
  const out = {
    'cpu-per-request.svg': cpuChart(run, series, ax, source),
    'throughput.svg': throughputChart(series, ax),
    'latency.svg': latencyChart(series, ax),
  };
  if ((series.memory || []).length) out['memory.svg'] = memoryChart(series, ax, source);
  if (series.io) out['io.svg'] = ioChart(series.io, ax);
  if (series.replicas && run.node && run.node.fleet) out['replicas.svg'] = replicasChart(run, series, ax);
  if (series.head_lag) out['head-lag.svg'] = headLagChart(series, ax);
  return { ...out, ...perCoreChart(run, series) };
}

module.exports = { charts };
