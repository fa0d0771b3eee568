'use strict';
// The sections of summary.md that say how each figure was measured: the
// window, the node's CPU and its cross-checks, its resources, the generator,
// the stack, repetitions, a saturation search and PROFILE=methods.

const { perCoreLine } = require('./profile');
const { networkLines, fleetLines } = require('./network');
const { workloadLines } = require('./workloads');
const { generatorLines } = require('./summary-generator');
const { chainOf, mib, ms, num } = require('./format');

/** SWARM_NODE with MEMORY_MB: swap not limited where the node ran, and what it swapped. */
function swapLine(n) {
  const away = n.limits.swarm && n.limits.swarm.swap_not_limited_on;
  if (!away) return '';
  const rows = ((n.fleet && n.fleet.replicas) || []).filter((r) => r.swap_peak_bytes !== undefined);
  const used = rows.length
    ? rows.map((r) => `${r.name} ${mib(r.swap_peak_bytes)}`).join(', ')
    : n.swap_peak_bytes === undefined
      ? 'not measured'
      : mib(n.swap_peak_bytes);
  return `; swap not limited on ${away.join(', ')} (no engine reached there sets it); peak swap use (cAdvisor): ${used}`;
}

function windowLines(run) {
  if (!run.window) return [];
  const g = run.window_generator;
  const load = !g
    ? ''
    : g.mode === 'kept'
      ? ' Its load came from the generator that ran the warm-up, idle since, resumed 1 s before the window (REPEAT_GENERATOR=kept).'
      : ` Its load came from a generator pass of its own (${g.reason}).`;
  return [
    `- Measured window: ${num((run.window.end_ms - run.window.start_ms) / 1000, 3)} s, from ${new Date(run.window.start_ms).toISOString()} to ${new Date(run.window.end_ms).toISOString()}. A request counts when it completes inside it.${load}${run.window.partial ? ' Cut short by the failure: the figures cover the window up to the last instant measured before it.' : ''}`,
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
      `- Node limits: ${n.limits.memory_bytes ? `memory ${num(n.limits.memory_bytes / 2 ** 20, 0)} MiB (page cache included)` : 'no memory limit'}${n.limits.device ? `, disk throttled on ${n.limits.device}` : ''}${swapLine(n)} (${s.INSTANCE ? `INSTANCE=${s.INSTANCE}; ` : ''}see run.json node.limits).`,
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
      `- The node's own request counter (Prometheus, 1 s scrapes, so approximate at the edges) rose by ${n.rpc_requests} over the window${scrapeSpan(run, n)}${unscraped(n)}.`,
    );
  return lines;
}

/** REPLICAS: the replicas Prometheus has no scrape of inside the window (their requests are not in the sum). */
const unscraped = (n) =>
  n.rpc_requests_unscraped
    ? `, summed over the replicas scraped inside it: what ${n.rpc_requests_unscraped.join(', ')} served is left out (no scrape inside the window)`
    : '';

/** Where the two scrapes the request counter's rise is between fall against the window's edges. */
function scrapeSpan(run, n) {
  if (!n.rpc_requests_span_ms || !run.window) return '';
  const off = (ms, edge) => `${num(Math.abs(ms - edge) / 1000, 1)} s ${ms <= edge ? 'before' : 'after'}`;
  const [a, b] = n.rpc_requests_span_ms;
  return ` (between its scrapes ${off(a, run.window.start_ms)} the window opened and ${off(b, run.window.end_ms)} it closed)`;
}

function stackLines(run) {
  if (!run.stack || !run.stack.compose) return [];
  const c = run.stack.compose;
  const imgs = Object.entries(run.stack.images || {}).map(([svc, i]) =>
    i.ref ? `${svc} ${i.ref} (${i.origin})` : `${svc} skipped: ${i.skipped}`,
  );
  const sw = run.stack.swarm;
  const where = sw
    ? `swarm stack ${sw.stack} on swarm node ${sw.node} (${sw.nodes} in the swarm), rendered from compose project`
    : 'compose project';
  const placed = sw && sw.node_placement;
  return [
    `- Stack: ${where} ${c.project} (${c.command} ${c.version}, Docker engine ${c.engine}); images: ${imgs.join('; ')}.`,
    ...(placed
      ? [
          `- The node ran on swarm node ${placed.node} (SWARM_NODE, ${placed.address})${
            placed.replicas
              ? `, ${Object.entries(placed.replicas)
                  .map(([svc, host]) => `${svc} on ${host}`)
                  .join(', ')}`
              : ''
          }, apart from the generator, with CORES as a quota of ${placed.cpu_quota} CPU${placed.cpu_quota === 1 ? '' : 's'}${placed.replicas ? ' each' : ''}; ${placed.source}.`,
        ]
      : []),
    ...(sw && sw.balancer_placement
      ? [
          `- HAProxy ran on swarm node ${sw.balancer_placement.node} (SWARM_BALANCER_NODE, ${sw.balancer_placement.address}) with a quota of ${sw.balancer_placement.cpu_quota} CPU${sw.balancer_placement.cpu_quota === 1 ? '' : 's'}; ${sw.balancer_placement.source}.`,
        ]
      : []),
  ];
}

function measuredLines(run) {
  return [
    '## How it was measured',
    '',
    ...windowLines(run),
    ...nodeLines(run),
    ...networkLines(run),
    ...fleetLines(run),
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

/** How a run's windows (repetitions, saturation steps) got their load: run.json's {mode, reason}. */
function loadLine(g, each) {
  return g.mode === 'kept'
    ? `Load: one generator kept across the ${each}s (REPEAT_GENERATOR=kept), idle between them; each ${each}'s load began 1 s before it.`
    : `Load: a generator pass per ${each} (${g.reason}).`;
}

function repetitionLines(run) {
  if (!run.repetitions) return [];
  const lines = [
    '',
    `## Repetitions (${run.repetitions.length}, on the warm stack)`,
    '',
    ...repetitionSummaryLines(run),
  ];
  if (run.repetitions_generator) lines.push('', loadLine(run.repetitions_generator, 'window'));
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

function saturationLines(run) {
  if (!run.saturation) return [];
  const sat = run.saturation;
  const b = sat.bounds;
  const lines = ['', '## Saturation', ''];
  lines.push(
    sat.max_sustainable_rps === null
      ? `No rate held the bounds, not even the lowest tried (${sat.steps.length ? Math.min(...sat.steps.map((x) => x.target_rps)) : '?'}/s).`
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
  if (sat.generator) lines.push(loadLine(sat.generator, 'step'), '');
  // REPLICAS: how evenly each step spread over the fleet, and what the balancer cost
  const fleet = sat.steps.some((x) => x.fleet);
  lines.push(
    `| step | offered/s | answered/s | p99 ms | error rate | CPU ms/request | generator busy |${fleet ? ' replica shares max/min | balancer CPU ms/request |' : ''} holds |`,
    `|---:|---:|---:|---:|---:|---:|---:|${fleet ? '---:|---:|' : ''}---|`,
  );
  sat.steps.forEach((x, i) =>
    lines.push(
      `| ${i + 1} | ${x.target_rps} | ${num(x.achieved_rps, 0)} | ${num(x.p99_ms, 1)} | ${num(x.error_rate, 4)} | ${num(x.cpu_ms_per_request, 3)} | ${x.generator_cpu_utilization === null ? 'n/a' : `${(x.generator_cpu_utilization * 100).toFixed(0)}%`} |${fleet ? ` ${x.fleet ? num(x.fleet.share_max_over_min, 2) : 'n/a'} | ${x.fleet ? num(x.fleet.balancer_cpu_ms_per_request, 3) : 'n/a'} |` : ''} ${x.holds ? 'yes' : `no: ${x.reasons.join('; ')}`} |`,
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

module.exports = {
  windowLines,
  nodeCpuLine,
  crossCheckLines,
  nodeResourceLines,
  nodeLines,
  generatorLines,
  stackLines,
  measuredLines,
  repetitionSummaryLines,
  repetitionLines,
  saturationLines,
  methodsProfileLines,
};
