#!/usr/bin/env node
'use strict';
// chainperf's Grafana dashboards, built as code with Grafana's own typed
// builders (@grafana/grafana-foundation-sdk): one panel for each figure a
// report gives, as a live view of the compose runtime's Prometheus. `npm run
// dashboards` writes them into grafana/dashboards/, which Grafana provisions
// (grafana/provisioning/); a unit test fails when the committed JSON is not
// what this file builds, and the compose integration test runs every panel's
// query against a real run's Prometheus.
//
// Series carry the run's id (run_id, a label Prometheus adds to every target
// of a run): the `run` variable lists the runs the datasource holds, and
// every query selects the one chosen.

const fs = require('node:fs');
const path = require('node:path');
const {
  DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
} = require('@grafana/grafana-foundation-sdk/dashboard');
const timeseries = require('@grafana/grafana-foundation-sdk/timeseries');
const { DataqueryBuilder } = require('@grafana/grafana-foundation-sdk/prometheus');
const { RULES } = require('../src/runtime/prometheus-rules');

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
/** The node container of the chosen run, as cAdvisor labels it. */
const NODE = 'container_label_io_chainperf_role="node", run_id="$run"';
const RUN = 'run_id="$run"';
const RATE = '$__rate_interval';

/**
 * The panels, in reading order: [title, unit, description, [[expr, legend], ...]].
 * Each is a figure of the report, seen live; the report's own figures come from counter values read at the measured
 * window's edges, never from these rates.
 */
const PANELS = [
  [
    'CPU time per request (live)',
    'ms',
    "The node's CPU per request it served, as rates over a few seconds (cAdvisor's CPU counter over the node's request counter). The report's figure is the same ratio from counter values at the measured window's edges.",
    [
      [
        `1000 * sum by (run_id) (rate(container_cpu_usage_seconds_total{${NODE}}[${RATE}])) / avg_over_time(${RULES.requests}{${RUN}}[${RATE}])`,
        'CPU ms per request',
      ],
    ],
  ],
  [
    'Node CPU',
    'short',
    'CPU seconds per second of the node container (cores busy), from cAdvisor, in all and split in user and system time.',
    [
      [`sum(rate(container_cpu_usage_seconds_total{${NODE}}[${RATE}]))`, 'total'],
      [`sum(rate(container_cpu_user_seconds_total{${NODE}}[${RATE}]))`, 'user'],
      [`sum(rate(container_cpu_system_seconds_total{${NODE}}[${RATE}]))`, 'system'],
    ],
  ],
  [
    'Node CPU per core',
    'short',
    "The node container's CPU on each core it ran on (cAdvisor's per-CPU counter): an uneven split means one busy thread, whatever CORES gives it.",
    [[`sum by (cpu) (rate(container_cpu_usage_seconds_total{${NODE}}[${RATE}]))`, '{{cpu}}']],
  ],
  [
    'Throughput',
    'reqps',
    "JSON-RPC requests per second the node served, from its own request counter (the client module's metrics.requests). Empty for a client that exports none.",
    [[`${RULES.requests}{${RUN}}`, 'requests/s']],
  ],
  [
    'Latency percentiles (node side)',
    's',
    "Time the node spent serving a request, by quantile, from its own summary (the client module's metrics.latency: geth's rpc_duration_all). The report's percentiles are the generator's, exact over every request.",
    [[`${RULES.latency}{${RUN}}`, 'p{{quantile}}']],
  ],
  [
    'Errors',
    'reqps',
    "Failed requests per second from the node's own failure counter (the client module's metrics.failures). Empty for a client whose failure counter chainperf does not know.",
    [[`${RULES.failures}{${RUN}}`, 'failed/s']],
  ],
  [
    'Memory',
    'bytes',
    'Memory of the node container, from cAdvisor: the working set (what the report calls memory) and all usage, page cache included.',
    [
      [`sum(container_memory_working_set_bytes{${NODE}})`, 'working set'],
      [`sum(container_memory_usage_bytes{${NODE}})`, 'usage'],
    ],
  ],
  [
    'Disk I/O',
    'Bps',
    'Bytes the node container read from and wrote to block devices, from cAdvisor (cgroup blkio).',
    [
      [
        `sum by (operation) (rate(container_blkio_device_usage_total{${NODE}, operation=~"Read|Write"}[${RATE}]))`,
        '{{operation}}',
      ],
    ],
  ],
  [
    'Network',
    'Bps',
    'Bytes the node container received and sent, from cAdvisor.',
    [
      [`sum(rate(container_network_receive_bytes_total{${NODE}}[${RATE}]))`, 'received'],
      [`sum(rate(container_network_transmit_bytes_total{${NODE}}[${RATE}]))`, 'sent'],
    ],
  ],
];

/** One time-series panel at its place in a grid of two columns. */
function panel([title, unit, description, targets], i) {
  const p = new timeseries.PanelBuilder()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(DATASOURCE)
    .gridPos({ x: (i % 2) * 12, y: Math.floor(i / 2) * 8, w: 12, h: 8 });
  for (const [expr, legend] of targets) p.withTarget(new DataqueryBuilder().expr(expr).legendFormat(legend));
  return p;
}

/** The node dashboard. */
function nodeDashboard() {
  const d = new DashboardBuilder('chainperf: node under load')
    .uid('chainperf-node')
    .tags(['chainperf'])
    .editable()
    .refresh('5s')
    .time({ from: 'now-15m', to: 'now' })
    .withVariable(new DatasourceVariableBuilder('datasource').label('Prometheus').type('prometheus'))
    .withVariable(
      new QueryVariableBuilder('run')
        .label('run')
        .description('The run whose series are shown: its run id, as in its report folder.')
        .datasource(DATASOURCE)
        .query('label_values(up, run_id)'),
    );
  PANELS.forEach((p, i) => d.withPanel(panel(p, i)));
  return d.build();
}

const DASHBOARDS = { 'chainperf-node.json': nodeDashboard };

/** Each dashboard file's name and text. */
function build() {
  return Object.entries(DASHBOARDS).map(([file, make]) => [file, `${JSON.stringify(make(), null, 2)}\n`]);
}

if (require.main === module) {
  for (const [file, text] of build()) fs.writeFileSync(path.join(__dirname, 'dashboards', file), text);
}

module.exports = { build, PANELS };
