'use strict';
// summary.md: one section after another, each built from run.json alone, so
// that ./run.sh render rebuilds it from a report folder.

const { profileSection } = require('./profile');
const { ms, num } = require('./format');
const { measuredLines, methodsProfileLines, repetitionLines, saturationLines } = require('./summary-measured');

/** Where the node ran, for the header: pinned to CORES here, on another swarm node (SWARM_NODE), or attached. */
function nodeWhere(run, runtime, s) {
  if (runtime === 'attach') return 'an attached node, generator';
  const placed = run.stack && run.stack.swarm && run.stack.swarm.node_placement;
  if (placed) return `node on swarm node ${placed.node} with a quota of ${placed.cpu_quota} CPU(s), generator`;
  return `node pinned to ${s.CORES} core(s)`;
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
  const where = nodeWhere(run, p.runtime, s);
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
  lines.push(
    `| CPU time per request (net of idle${run.idle_chain ? ', on a quiet chain' : ''}) | ${ms(f.cpu_ms_per_request_net)} |`,
  );
  if (f.cpu_ms_per_request_net_of_chain !== undefined)
    lines.push(`| CPU time per request (net of chain work) | ${ms(f.cpu_ms_per_request_net_of_chain)} |`);
  if (f.head_lag_s_max !== undefined && f.head_lag_s_max !== null)
    lines.push(
      `| Head lag, worst / share of looks behind | ${num(f.head_lag_s_max, 2)} s / ${num(f.head_lag_share_behind * 100, 1)} % |`,
    );
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
    ...(run.node && run.node.network && run.node.network.keep_up
      ? ['![Head lag against the network](charts/head-lag.svg)', '']
      : []),
    '![Latency](charts/latency.svg)',
    '',
  ];
  if (run.node && run.node.memory_peak_bytes) lines.push('![Memory](charts/memory.svg)', '');
  if (run.node && run.node.per_core) lines.push('![Per-core load](charts/per-core.svg)', '');
  if (run.node && run.node.fleet) lines.push('![Requests each replica served](charts/replicas.svg)', '');
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

module.exports = {
  statusLines,
  headerLines,
  figuresLines,
  verdictLines,
  warningLines,
  methodLines,
  errorLines,
  chartLines,
  summary,
};
