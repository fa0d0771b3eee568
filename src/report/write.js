'use strict';
// Writes a run's report folder: run.json (schema/run.schema.json),
// series.json (per-second data behind the charts), summary.md and charts/.
// renderReport() rebuilds summary.md and the charts from run.json and
// series.json alone, so a report folder can be re-rendered later.

const fs = require('node:fs');
const path = require('node:path');
const { lineChart, barChart } = require('./charts');
const { scrub, scrubDeep } = require('../util/scrub');
const { perCoreLine, perCoreChart, profileSection } = require('./profile');
const { workloadLines } = require('./workloads');
const chains = require('../chains');
const generators = require('../workload/generators');

/** The run's chain module, for its report hooks (none for a chain this version does not know). */
const chainOf = (run) => chains[((run.provenance || {}).scenario || {}).CHAIN] || {};

const ms = (v, digits = 3) => (v === null || v === undefined ? 'n/a' : `${Number(v).toFixed(digits)} ms`);
const num = (v, digits = 1) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(digits));

/** Every file of a report passes the scrubber: no secret of the run is written out. */
function writeJson(file, data) {
  fs.writeFileSync(file, `${JSON.stringify(scrubDeep(data), null, 2)}\n`);
}

function writeText(file, text) {
  fs.writeFileSync(file, scrub(text));
}

function charts(run, series) {
  const t0 = run.window ? run.window.start_ms : 0;
  const t1 = run.window ? run.window.end_ms : 0;
  const xRange = [0, (t1 - t0) / 1000];
  const x = (t) => (t - t0) / 1000;
  // a second's point sits in the middle of the part of it inside the window
  const mid = (p) => x((Math.max(t0, p.t_ms) + Math.min(t1, p.t_ms + 1000)) / 2);
  const req = series.requests || [];
  const cpu = series.cpu_per_request || [];
  const f = run.figures || {};
  const cpuSeries = [{ name: 'per second', points: cpu.map((p) => [x(p.t_ms + 500), p.cpu_ms_per_request]) }];
  if (f.cpu_ms_per_request !== null && f.cpu_ms_per_request !== undefined && run.window) {
    const w = (run.window.end_ms - run.window.start_ms) / 1000;
    cpuSeries.push({
      name: 'window (gross)',
      points: [
        [0, f.cpu_ms_per_request],
        [w, f.cpu_ms_per_request],
      ],
      dashed: true,
    });
    if (f.cpu_ms_per_request_net !== null)
      cpuSeries.push({
        name: 'window (net of idle)',
        points: [
          [0, f.cpu_ms_per_request_net],
          [w, f.cpu_ms_per_request_net],
        ],
        dashed: true,
      });
  }
  const source = run.node && run.node.cpu_source ? run.node.cpu_source.kind : 'n/a';
  const out = {
    'cpu-per-request.svg': lineChart({
      title: 'Node CPU time per request',
      xLabel: 'seconds into the measured window',
      yLabel: 'CPU ms per request',
      series: cpuSeries,
      xRange,
      note:
        source === 'cadvisor'
          ? 'node CPU from cAdvisor; points between consecutive cAdvisor samples'
          : `node CPU from ${source} counters; per-second points need a source readable at any instant`,
    }),
    'throughput.svg': lineChart({
      title: 'Throughput',
      xLabel: 'seconds into the measured window',
      yLabel: 'requests per second',
      series: [
        { name: 'ok', points: req.filter((p) => p.span_ms > 0).map((p) => [mid(p), (p.ok * 1000) / p.span_ms]) },
        {
          name: 'failed',
          points: req.filter((p) => p.span_ms > 0).map((p) => [mid(p), (p.failed * 1000) / p.span_ms]),
        },
      ],
      xRange,
      note: 'requests completed per second of the window (edge seconds scaled by the part measured)',
    }),
    'latency.svg': lineChart({
      title: 'Latency percentiles',
      xLabel: 'seconds into the measured window',
      yLabel: 'ms',
      series: ['p50', 'p95', 'p99'].map((p) => ({
        name: p,
        points: req.filter((r) => r.latency_ms[p] !== null).map((r) => [mid(r), r.latency_ms[p]]),
      })),
      xRange,
      note: 'successful requests, by the second they completed in',
    }),
  };
  const mem = series.memory || [];
  if (mem.length) {
    out['memory.svg'] = lineChart({
      title: 'Node memory',
      xLabel: 'seconds into the measured window',
      yLabel: 'MiB',
      series: [
        {
          name: source === 'cadvisor' ? 'working set' : 'cgroup usage',
          points: mem.map((p) => [x(p.t_ms), p.bytes / 2 ** 20]),
        },
      ],
      xRange,
      note:
        source === 'cadvisor'
          ? 'cAdvisor container_memory_working_set_bytes, at its sample instants'
          : "the node cgroup's memory usage, every second",
    });
  }
  const io = series.io;
  if (io) {
    // Rates between consecutive cAdvisor samples of each counter.
    const rates = (xs) =>
      xs.slice(1).map((b, i) => [x(b.t_ms), (b.v - xs[i].v) / 2 ** 20 / Math.max(0.001, (b.t_ms - xs[i].t_ms) / 1000)]);
    out['io.svg'] = lineChart({
      title: 'Node disk and network',
      xLabel: 'seconds into the measured window',
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
  return { ...out, ...perCoreChart(run, series) };
}

/** The title, and why a run that is not ok is not. */
function statusLines(run) {
  const title = { ok: 'ok', killed: 'KILLED' }[run.status] || 'FAILED';
  const lines = [`# chainperf: ${run.scenario_name} — ${title}`, ''];
  if (run.status === 'killed')
    lines.push(
      `**The run was killed:** ${run.error}`,
      '',
      'What it had measured by its last checkpoint is kept below.',
      '',
    );
  else if (run.status !== 'ok')
    lines.push(`**The run failed:** ${run.error}`, '', 'What was measured before the failure is kept below.', '');
  return lines;
}

function headerLines(run) {
  const p = run.provenance || {};
  const c = p.client || {};
  const m = p.machine || {};
  const s = p.scenario || {};
  const lines = [];
  lines.push(...statusLines(run));
  // a development node is a node, not a production one
  const notA = c.kind && c.kind.endsWith(' node') ? 'a production node' : 'a node';
  if (c.kind) lines.push(`**${c.name} is a ${c.kind}, not ${notA}: these figures are not ${notA}'s.**`, '');
  lines.push(`Run \`${run.run_id}\`, ${run.started_at} to ${run.ended_at || '?'}.`);
  const where = p.runtime === 'attach' ? 'an attached node, generator' : `node pinned to ${s.CORES} core(s)`;
  lines.push(
    `${c.name || '?'} ${c.version || ''}, ${p.runtime || '?'} runtime, ${where} on a ${m.cores}-core ${m.cpu_model}, workload ${s.WORKLOAD}, ${s.RATE ? `open loop at ${s.RATE} requests/s` : `closed loop of ${s.CONCURRENCY} users`}.`,
    '',
  );
  if (run.state)
    lines.push(
      `State: STATE=${run.state.profile} (${run.state.accounts} accounts, ${run.state.slots} storage slots, ${run.state.history ? `blocks 1..${run.state.history.last_block}, ` : ''}${num(run.state.size_bytes / 2 ** 20, 1)} MiB), parameters drawn ${run.state.distribution} across it${s.MEMORY_MB ? `; node memory limited to ${s.MEMORY_MB} MB` : ''}${s.COLD === 'yes' ? '; cold start before each window' : ''}.`,
      '',
    );
  return lines;
}

function figuresLines(run) {
  if (!run.figures) return [];
  const f = run.figures;
  const l = f.latency_ms || {};
  const lines = ['| figure | value |', '|---|---|'];
  lines.push(`| CPU time per request (gross) | ${ms(f.cpu_ms_per_request)} |`);
  lines.push(`| CPU time per request (net of idle) | ${ms(f.cpu_ms_per_request_net)} |`);
  lines.push(`| Throughput | ${num(f.rps)} requests/s |`);
  lines.push(
    `| Latency p50 / p95 / p99 / max | ${ms(l.p50, 2)} / ${ms(l.p95, 2)} / ${ms(l.p99, 2)} / ${ms(l.max, 2)} |`,
  );
  lines.push(`| Requests ok / failed | ${f.requests_ok} / ${f.requests_failed} |`);
  lines.push(`| Error rate | ${f.error_rate === null ? 'n/a' : `${(f.error_rate * 100).toFixed(3)} %`} |`, '');
  if (run.profile)
    lines.push(
      `Profiling was on (NODE_PROFILE=cpu, ${run.profile.profiler}): these figures include the profiler's cost; see [Node CPU profile](#node-cpu-profile-node_profilecpu).`,
      '',
    );
  return lines;
}

function verdictLines(run) {
  if (!run.verdict) return [];
  const lines = [
    `**Verdict: ${run.verdict.pass ? 'pass' : 'FAIL'}**`,
    '',
    '| bound | limit | measured | |',
    '|---|---:|---:|---|',
  ];
  for (const c of run.verdict.checks)
    lines.push(
      `| ${c.key} | ${c.limit} | ${c.value === null ? 'not measured' : c.value} | ${c.pass ? 'pass' : 'FAIL'} |`,
    );
  lines.push('');
  return lines;
}

function windowLines(run) {
  if (!run.window) return [];
  return [
    `- Measured window: ${num((run.window.end_ms - run.window.start_ms) / 1000, 3)} s, from ${new Date(run.window.start_ms).toISOString()} to ${new Date(run.window.end_ms).toISOString()}. A request counts when it completes inside it.${run.window.partial ? ' Cut short by the failure: the figures cover the window up to the last instant measured before it.' : ''}`,
  ];
}

/** How the node's CPU was read: between cAdvisor samples, at the window's edges, or without a window record. */
function nodeCpuLine(n) {
  const split = `(user ${n.cpu_user_s === null ? 'n/a' : num(n.cpu_user_s, 3)}, system ${n.cpu_system_s === null ? 'n/a' : num(n.cpu_system_s, 3)})`;
  const w = n.cpu_window;
  if (w && n.cpu_source.kind === 'cadvisor') {
    return `- Node CPU: ${n.cpu_source.describe}. The first and last samples inside the window were read ${num((w.end_ms - w.start_ms) / 1000, 3)} s apart (from ${new Date(w.start_ms).toISOString()} to ${new Date(w.end_ms).toISOString()}): ${num(n.cpu_total_s, 3)} s of CPU ${split}, over the ${w.requests_ok} requests that completed between those two instants. CPU per request = that CPU / those requests.`;
  }
  if (w) {
    return `- Node CPU: ${n.cpu_source.describe}, read at the window's edges, ${num((w.end_ms - w.start_ms) / 1000, 3)} s apart (from ${new Date(w.start_ms).toISOString()} to ${new Date(w.end_ms).toISOString()}): ${num(n.cpu_total_s, 3)} s ${split}, over the ${w.requests_ok} requests that completed between those two reads. CPU per request = that CPU / those requests.`;
  }
  return `- Node CPU: ${n.cpu_source.describe}, read at the window's edges: ${num(n.cpu_total_s, 3)} s ${split}. CPU per request = that / requests ok.`;
}

function crossCheckLines(n) {
  if (n.cpu_check && n.cpu_check.cpu_s_per_s !== undefined) {
    return [
      `- Cross-check: ${n.cpu_check.describe} at the window's edges: ${num(n.cpu_check.cpu_s_per_s, 4)} CPU s/s, against ${num(n.cpu_s_per_s, 4)} from cAdvisor (rates, because the two were read at different instants).`,
    ];
  }
  if (n.cpu_check)
    return [`- Cross-check: ${n.cpu_check.describe} over the same window: ${num(n.cpu_check.total_s, 3)} s.`];
  return [];
}

const mib = (x) => (x === null || x === undefined ? 'n/a' : `${num(x / 2 ** 20, 2)} MiB`);

/** Memory, disk, block I/O, limits and network of the node. */
function nodeResourceLines(run, n) {
  const s = (run.provenance || {}).scenario || {};
  const lines = [];
  if (n.memory_peak_bytes)
    lines.push(
      `- Node memory: peak ${num(n.memory_peak_bytes / 2 ** 20, 1)} MiB, mean ${num(n.memory_mean_bytes / 2 ** 20, 1)} MiB${n.cpu_source.kind === 'cadvisor' ? ' (cAdvisor working set)' : ''}.`,
    );
  if (n.disk_read_bytes !== undefined)
    lines.push(`- Node disk: ${mib(n.disk_read_bytes)} read, ${mib(n.disk_write_bytes)} written.`);
  if (n.io)
    lines.push(
      `- Node block I/O (${n.io.source}): ${mib(n.io.read_bytes)} read in ${n.io.read_ops ?? 'n/a'} operations, ${mib(n.io.write_bytes)} written, ${n.io.major_faults ?? 'n/a'} major page faults over ${n.io.requests_ok} requests: ${num(run.figures.disk_read_bytes_per_request, 1)} bytes read and ${num(run.figures.major_faults_per_request, 4)} major faults per request, ${num(run.figures.disk_read_iops, 1)} read IOPS.`,
    );
  if (n.limits)
    lines.push(
      `- Node limits: ${n.limits.memory_bytes ? `memory ${num(n.limits.memory_bytes / 2 ** 20, 0)} MiB (page cache included)` : 'no memory limit'}${n.limits.device ? `, disk throttled on ${n.limits.device}` : ''} (${s.INSTANCE ? `INSTANCE=${s.INSTANCE}; ` : ''}see run.json node.limits).`,
    );
  if (n.network_rx_bytes !== undefined)
    lines.push(`- Node network: ${mib(n.network_rx_bytes)} received, ${mib(n.network_tx_bytes)} sent.`);
  return lines;
}

function nodeLines(run) {
  if (!run.node || !run.node.cpu_source) return [];
  const n = run.node;
  const lines = [nodeCpuLine(n), ...crossCheckLines(n)];
  if (n.per_core) lines.push(perCoreLine(n.per_core, n));
  if (n.steal)
    lines.push(
      `- Steal time (/proc/stat, cpus ${n.steal.cpus}): the hypervisor ran something else on the node's cores for ${num(n.steal.share * 100, 2)}% of their time in the window (${num(n.steal.steal_s, 2)} s). It is not in the node's CPU time, but the node waited through it.`,
    );
  lines.push(...nodeResourceLines(run, n));
  if (n.rpc_requests !== undefined && n.rpc_requests !== null)
    lines.push(
      `- The node's own request counter (Prometheus, 1 s scrapes, so approximate at the edges) rose by ${n.rpc_requests} over the window.`,
    );
  return lines;
}

function generatorLines(run) {
  const lines = [];
  const s = (run.provenance || {}).scenario || {};
  if (run.idle)
    lines.push(
      `- Idle baseline: ${num(run.idle.cpu_s, 3)} s of CPU over ${num(run.idle.seconds, 1)} s quiet (${num((run.idle.cpu_s / run.idle.seconds) * 1000, 2)} ms/s); the net figure subtracts that rate over the window.`,
    );
  if (run.generator && run.generator.cpu_s !== null && run.generator.cpu_s !== undefined) {
    const chain = chainOf(run);
    const gen = chain.generatorLabel
      ? chain.generatorLabel(s)
      : (generators[s.GENERATOR] || generators.ethers).label(s);
    lines.push(
      `- Load generator (${gen}): ${num(run.generator.cpu_s, 3)} s of CPU on cpus ${run.generator.cpus || 'shared with the node'}, ${num(run.generator.cpu_us_per_request, 1)} us per request.`,
    );
  }
  if (run.sync) lines.push(`- Node synced with its head advancing after ${num(run.sync.seconds, 1)} s.`);
  return lines;
}

function stackLines(run) {
  if (!run.stack || !run.stack.compose) return [];
  const c = run.stack.compose;
  const imgs = Object.entries(run.stack.images || {}).map(([svc, i]) =>
    i.ref ? `${svc} ${i.ref} (${i.origin})` : `${svc} skipped: ${i.skipped}`,
  );
  return [
    `- Stack: compose project ${c.project} (${c.command} ${c.version}, Docker engine ${c.engine}); images: ${imgs.join('; ')}.`,
  ];
}

function measuredLines(run) {
  return [
    '## How it was measured',
    '',
    ...windowLines(run),
    ...nodeLines(run),
    ...generatorLines(run),
    ...(chainOf(run).reportLines ? chainOf(run).reportLines(run) : []),
    ...workloadLines(run),
    ...stackLines(run),
  ];
}

function repetitionSummaryLines(run) {
  if (!run.summary) return ['The repetitions measured before the run failed:'];
  const lines = ["The figures above are the median repetition's. Over all of them:", ''];
  lines.push('| figure | median | mean | 95% interval of the mean | CV |', '|---|---:|---:|---|---:|');
  for (const [key, x] of Object.entries(run.summary)) {
    const d = key === 'rps' || key === 'generator_us_per_request' ? 1 : key === 'error_rate' ? 6 : 3;
    lines.push(
      `| ${key} | ${num(x.median, d)} | ${num(x.mean, d)} | ${x.ci95 ? `${num(x.ci95[0], d)} .. ${num(x.ci95[1], d)}` : 'n/a'} | ${x.cv === null ? 'n/a' : `${(x.cv * 100).toFixed(2)}%`} |`,
    );
  }
  if (run.summary.generator_us_per_request)
    lines.push(
      '',
      "generator_us_per_request is the load generator's own CPU per request on its cores: the same requests in every repetition, so its CV is the noise of the machine itself over windows this long.",
    );
  return lines;
}

function repetitionLines(run) {
  if (!run.repetitions) return [];
  const lines = [
    '',
    `## Repetitions (${run.repetitions.length}, on the warm stack)`,
    '',
    ...repetitionSummaryLines(run),
  ];
  lines.push(
    '',
    '| repetition | CPU ms/request | net | requests/s | p99 ms | idle CPU ms/s | generator us/request | outlier |',
    '|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  run.repetitions.forEach((r, i) => {
    const out = (run.outliers || []).some((o) => o.repetition === i + 1);
    lines.push(
      `| ${i + 1} | ${num(r.figures.cpu_ms_per_request, 3)} | ${num(r.figures.cpu_ms_per_request_net, 3)} | ${num(r.figures.rps)} | ${num(r.figures.latency_ms.p99, 2)} | ${r.idle ? num((r.idle.cpu_s / r.idle.seconds) * 1000, 2) : 'n/a'} | ${num(r.generator && r.generator.cpu_us_per_request, 1)} | ${out ? 'yes' : ''} |`,
    );
  });
  return lines;
}

function warningLines(run) {
  if (!run.warnings || !run.warnings.length) return [];
  return ['', '## Warnings', '', ...run.warnings.map((w) => `- ${w}`)];
}

function methodLines(run) {
  const f = run.figures || {};
  if (!f.methods || !Object.keys(f.methods).length) return [];
  const lines = [
    '',
    '## Per method',
    '',
    '| method | ok | failed | requests/s | p50 ms | p95 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [name, mm] of Object.entries(f.methods)) {
    const l = mm.latency_ms;
    lines.push(
      `| ${name} | ${mm.requests_ok} | ${mm.requests_failed} | ${num(mm.rps)} | ${num(l.p50, 2)} | ${num(l.p95, 2)} | ${num(l.p99, 2)} | ${num(l.max, 2)} |`,
    );
  }
  return lines;
}

function saturationLines(run) {
  if (!run.saturation) return [];
  const sat = run.saturation;
  const b = sat.bounds;
  const lines = ['', '## Saturation', ''];
  lines.push(
    sat.max_sustainable_rps === null
      ? `No rate held the bounds, not even the first (${sat.steps[0] ? sat.steps[0].target_rps : '?'}/s).`
      : `Highest sustainable rate: **${num(sat.max_sustainable_rps, 0)} requests/s** (offered ${sat.max_sustainable_target_rps}/s) at ${ms(sat.cpu_ms_per_request_at_max)} CPU per request${sat.reached_limit ? `; ${sat.first_failing_rps}/s did not hold` : '; the search stopped before finding the limit'}.`,
  );
  if (sat.cost_per_million_at_max !== null && sat.cost_per_million_at_max !== undefined)
    lines.push(
      `At that rate a million requests cost ${num(sat.cost_per_million_at_max, 4)} (HOURLY_PRICE=${run.provenance.scenario.HOURLY_PRICE}).`,
    );
  lines.push(
    '',
    `Bounds: p99 <= ${b.max_p99_ms} ms, error rate <= ${b.max_error_rate}, at least ${b.min_achieved_ratio * 100}% of the offered rate answered.`,
    '',
  );
  lines.push(
    '| step | offered/s | answered/s | p99 ms | error rate | CPU ms/request | generator busy | holds |',
    '|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  sat.steps.forEach((x, i) =>
    lines.push(
      `| ${i + 1} | ${x.target_rps} | ${num(x.achieved_rps, 0)} | ${num(x.p99_ms, 1)} | ${num(x.error_rate, 4)} | ${num(x.cpu_ms_per_request, 3)} | ${x.generator_cpu_utilization === null ? 'n/a' : `${(x.generator_cpu_utilization * 100).toFixed(0)}%`} | ${x.holds ? 'yes' : `no: ${x.reasons.join('; ')}`} |`,
    ),
  );
  lines.push(
    '',
    '![p99 against rate](charts/saturation-latency.svg)',
    '',
    '![CPU per request against rate](charts/saturation-cpu.svg)',
  );
  return lines;
}

function methodsProfileLines(run) {
  if (!run.methods_profile) return [];
  const lines = [
    '',
    '## CPU per method (PROFILE=methods)',
    '',
    'Each method alone in its own window, back to back on the warm node.',
    '',
  ];
  lines.push(
    '| method | CPU ms/request | net | requests/s | p50 ms | p99 ms | failed |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const [name, x] of Object.entries(run.methods_profile)) {
    lines.push(
      `| ${name} | ${num(x.cpu_ms_per_request, 3)} | ${num(x.cpu_ms_per_request_net, 3)} | ${num(x.rps)} | ${num(x.latency_ms.p50, 2)} | ${num(x.latency_ms.p99, 2)} | ${x.requests_failed} |`,
    );
  }
  lines.push('', '![CPU per method](charts/methods.svg)');
  return lines;
}

function errorLines(run) {
  if (!run.errors || !Object.keys(run.errors).length) return [];
  const lines = ['', '## Errors seen', '', '| error | count |', '|---|---:|'];
  for (const [msg, n] of Object.entries(run.errors)) lines.push(`| ${msg.replace(/\|/g, '\\|')} | ${n} |`);
  return lines;
}

function chartLines(run) {
  const lines = [
    '',
    '## Charts',
    '',
    '![CPU time per request](charts/cpu-per-request.svg)',
    '',
    '![Throughput](charts/throughput.svg)',
    '',
    '![Latency](charts/latency.svg)',
    '',
  ];
  if (run.node && run.node.memory_peak_bytes) lines.push('![Memory](charts/memory.svg)', '');
  if (run.node && run.node.per_core) lines.push('![Per-core load](charts/per-core.svg)', '');
  if (run.node && run.node.network_rx_bytes !== undefined) lines.push('![Disk and network](charts/io.svg)', '');
  return lines;
}

/** summary.md: one section after another, each built from run.json alone. */
function summary(run) {
  return [
    ...headerLines(run),
    ...figuresLines(run),
    ...verdictLines(run),
    ...measuredLines(run),
    ...repetitionLines(run),
    ...warningLines(run),
    ...methodLines(run),
    ...saturationLines(run),
    ...methodsProfileLines(run),
    ...profileSection(run),
    ...errorLines(run),
    ...chartLines(run),
  ].join('\n');
}

/** Writes summary.md and charts/ from run.json and series.json in dir. */
function renderReport(dir) {
  const run = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
  const seriesFile = path.join(dir, 'series.json');
  const series = fs.existsSync(seriesFile) ? JSON.parse(fs.readFileSync(seriesFile, 'utf8')) : {};
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  for (const [name, svg] of Object.entries(charts(run, series))) writeText(path.join(dir, 'charts', name), svg);
  if (run.saturation) {
    const steps = [...run.saturation.steps].sort((a, b) => a.target_rps - b.target_rps);
    writeText(
      path.join(dir, 'charts', 'saturation-latency.svg'),
      lineChart({
        title: 'p99 latency against offered rate',
        xLabel: 'requests/s offered',
        yLabel: 'p99 ms',
        series: [
          { name: 'p99', points: steps.map((x) => [x.target_rps, x.p99_ms]), markers: true },
          { name: 'bound', points: steps.map((x) => [x.target_rps, run.saturation.bounds.max_p99_ms]), dashed: true },
        ],
        note: 'one window per step, open loop',
      }),
    );
    writeText(
      path.join(dir, 'charts', 'saturation-cpu.svg'),
      lineChart({
        title: 'Node CPU time per request against rate',
        xLabel: 'requests/s answered',
        yLabel: 'CPU ms per request',
        series: [
          {
            name: 'CPU ms/request',
            points: [...steps]
              .sort((a, b) => a.achieved_rps - b.achieved_rps)
              .map((x) => [x.achieved_rps, x.cpu_ms_per_request]),
            markers: true,
          },
        ],
        note: "node CPU from counters at each step's edges",
      }),
    );
  }
  if (run.methods_profile) {
    const bars = Object.entries(run.methods_profile)
      .map(([label, x]) => ({ label, value: x.cpu_ms_per_request }))
      .sort((a, b) => b.value - a.value);
    writeText(
      path.join(dir, 'charts', 'methods.svg'),
      barChart({
        title: 'Node CPU time per request, each method alone',
        xLabel: 'CPU ms per request (gross)',
        bars,
        note: 'one window per method on the warm node',
      }),
    );
  }
  writeText(path.join(dir, 'summary.md'), summary(run));
}

function writeReport(dir, run, series) {
  fs.mkdirSync(dir, { recursive: true });
  writeJson(path.join(dir, 'run.json'), run);
  writeJson(path.join(dir, 'series.json'), series || {});
  renderReport(dir);
}

module.exports = { writeReport, renderReport, summary };
