'use strict';
// A capacity run's summary.md and charts/cost.svg, from its capacity.json:
// the answer (instance, replicas, monthly cost, the runner-up and whether it
// is a tie), the table per instance, the verification, how each figure was
// computed, and links to every run.

const fs = require('node:fs');
const path = require('node:path');
const { costChart } = require('./chart');
const { scrub } = require('../util/scrub');
const { KEYS } = require('../scenario/keys');
const { num } = require('../report/format');

const EMULATION_NOTE =
  "Each instance is emulated on the one machine chainperf ran on: a CPU quota (the node pinned to as many of its cores as the instance has vCPUs), the instance's memory limit and its disk limits. It is not the instance's processor or disk: every figure is that machine's under those limits, and an instance with a different processor (Graviton, another generation) or a real network disk would measure otherwise.";

const money = (v) => (v === null || v === undefined ? 'n/a' : v === Infinity ? '∞' : Number(v).toFixed(2));
const int = (v) => (v === null || v === undefined ? 'n/a' : Math.round(v).toLocaleString('en-US'));

/** The searches' bounds, each with its scenario key where one sets it. */
function boundsText(bounds) {
  if (!bounds) return 'the bounds the saturation search judges by (no search has finished yet)';
  return Object.entries(bounds)
    .map(([name, v]) => {
      const key = KEYS[name.toUpperCase()] ? name.toUpperCase() : name;
      const what = name === 'min_achieved_ratio' ? ' (the share of the offered rate answered)' : '';
      return `\`${key}\` ${name.startsWith('min_') ? '≥' : '≤'} ${v}${what}`;
    })
    .join(', ');
}

/** The saturated rate with its interval, or why there is none; extrapolated figures marked. */
function rateCell(r) {
  if (!r.saturated_rps) return 'n/a';
  const x = r.saturated_rps;
  const mark = r.extrapolated ? ' (extrapolated)' : '';
  const lower = x.limit_reached ? '' : '≥ ';
  const interval = x.ci95 ? ` [${int(x.ci95[0])}, ${int(x.ci95[1])}]` : ` (no interval: ${x.n} search)`;
  return `${lower}${int(x.mean)}${interval}${mark}`;
}

function statusCell(r) {
  if (r.status === 'needs-machine') return `needs a machine with ${r.machine_cores_needed} cores`;
  return r.note ? `${r.status}: ${r.note}` : r.status;
}

function instanceTable(state) {
  const lines = [
    '| instance | vCPUs | memory MB | price/h | searches ok | saturated requests/s [95% interval] | p50 ms | p99 ms | CPU ms/request | usable requests/s | replicas | replicas/month | balancer/month | total/month | per million requests | status |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of state.instances) {
    const ext = r.extrapolated ? ' (extrapolated)' : '';
    const measuredAt = r.extrapolated ? ` (at ${r.extrapolated.measured_cores} core)` : '';
    lines.push(
      `| ${r.instance} | ${r.cores} | ${r.memory_mb ?? 'n/a'} | ${r.hourly_price} | ${r.searches ? r.searches.ok : 0} | ${rateCell(r)} | ${num(r.p50_ms, 2)}${measuredAt} | ${num(r.p99_ms, 1)}${measuredAt} | ${num(r.cpu_ms_per_request, 3)}${measuredAt} | ${r.usable_rps === null ? 'n/a' : `${int(r.usable_rps)}${ext}`} | ${r.replicas === null ? 'n/a' : `${r.replicas}${ext}`} | ${money(r.replicas_monthly_cost)} | ${money(r.balancer_monthly_cost)} | ${money(r.monthly_cost)}${r.monthly_cost === null ? '' : ext} | ${num(r.cost_per_million, 4)} | ${statusCell(r)} |`,
    );
  }
  const ext = state.instances.filter((r) => r.extrapolated);
  if (ext.length) lines.push('', 'Extrapolated (CAPACITY_EXTRAPOLATE=linear), from the measured points:', '');
  for (const r of ext) {
    const m = r.extrapolated.measured_rps;
    lines.push(
      `- ${r.instance}: its ${r.cores} vCPUs extrapolated linearly from ${r.extrapolated.measured_cores} measured (x${num(r.extrapolated.factor, 2)}): the searches on ${r.extrapolated.measured_cores} core(s) held ${m.values.map(int).join(', ')} requests/s (mean ${int(m.mean)}${m.ci95 ? `, 95% interval ${int(m.ci95[0])} to ${int(m.ci95[1])}` : ''}). Its latency and CPU per request are those measured on ${r.extrapolated.measured_cores} core(s), at the measured rate.`,
    );
  }
  return lines;
}

/** The answer: the choice, its runner-up and margin, the tie call, and the verification in one line. */
function answerLines(state) {
  const c = state.choice;
  const { redundancy } = state.settings;
  if (!c) return ['No instance could be chosen: none has a measured rate (see the table).'];
  const row = state.instances.find((r) => r.instance === c.instance);
  const ext = row.extrapolated ? ' (extrapolated)' : '';
  const lines = [
    `**${c.instance} x ${c.replicas}**${ext} (${row.replicas_needed} for the target${redundancy === 'N+1' ? ' + 1 for N+1' : ''}): **${money(c.monthly_cost)} a month** (${money(row.replicas_monthly_cost)} for the replicas, ${row.balancer_monthly_cost === null ? 'the balancer not measured' : `${money(row.balancer_monthly_cost)} for the balancer`}), ${num(row.cost_per_million, 4)} per million requests.`,
    '',
  ];
  if (c.runner_up) {
    const overlap =
      c.rates_overlap === null
        ? `no interval (${state.settings.repeats === 1 ? '1 search' : 'too few searches'})`
        : c.rates_overlap
          ? 'overlap'
          : 'do not overlap';
    const call =
      c.call === 'tie'
        ? "**a tie**: within their saturated rates' intervals either fleet could be the cheaper; the choice is the cheaper at the mean rates"
        : c.call === 'no tie'
          ? '**no tie**: the cheaper at every rate their intervals allow'
          : `**${c.call}**: no tie or no-tie can be called; CAPACITY_REPEATS=3 or more gives intervals`;
    lines.push(
      `Runner-up: ${c.runner_up.instance} x ${c.runner_up.replicas}, ${money(c.runner_up.monthly_cost)} a month: ${money(c.margin)} more (${num(c.margin_pct, 1)}%). Their saturated rates' 95% intervals: ${overlap}. The call: ${call}.`,
      '',
    );
  } else lines.push(`Runner-up: none (${c.call}).`, '');
  const v = state.verification;
  if (!v) lines.push('Verification: not run yet.');
  else
    lines.push(
      `Verification (${v.mode === 'fleet' ? 'the whole fleet' : `${v.replicas_run} of its ${v.replicas} replicas at their share of the target`}, ${v.rate_rps} requests/s): ${v.pass ? '**holds**' : `**FAILS**: ${v.failed.join('; ')}`}.`,
    );
  return lines;
}

function verificationLines(state) {
  const v = state.verification;
  if (!v) return [];
  const f = v.figures || {};
  const target = state.settings.target_rps;
  const how =
    v.mode === 'fleet'
      ? `the whole fleet: ${v.replicas} replica(s) of ${v.instance} behind HAProxy, sharing ${v.cores} core(s) (\`REPLICAS=${v.replicas}\`, \`CORES=${v.cores}\`, each replica with the instance's memory and disk limits), at the target, ${v.rate_rps} requests/s`
      : `the largest share of the fleet the machine chainperf ran on can run: ${v.replicas_run} of ${v.replicas} replica(s) of ${v.instance} behind HAProxy on ${v.cores} core(s), at their share of the target: ${v.rate_rps} of ${target} requests/s (the whole fleet needs a machine with ${v.machine_cores_needed} cores: its replicas' and one for the load generator)`;
  return [
    '',
    '## Verification',
    '',
    `What ran: ${how}. [Its report](${v.dir}/summary.md).`,
    '',
    '| answered/s | p50 ms | p99 ms | error rate | CPU ms/request (the replicas) | balancer CPU ms/request | status |',
    '|---:|---:|---:|---:|---:|---:|---|',
    `| ${num(f.rps, 0)} | ${num(f.p50_ms, 2)} | ${num(f.p99_ms, 1)} | ${num(f.error_rate, 4)} | ${num(f.cpu_ms_per_request, 3)} | ${num(v.balancer_cpu_ms_per_request, 3)} | ${v.status} |`,
    '',
    v.pass
      ? `Every bound held: ${boundsText(state.bounds)}, and the scenario's own validate bounds.`
      : `Failed: ${v.failed.join('; ')}.`,
  ];
}

function methodLines(state) {
  const { headroom_pct: h, redundancy, hours_per_month: hours } = state.settings;
  const lb = state.balancer || {};
  return [
    '',
    '## How the figures are computed',
    '',
    `- Saturated rate: the highest rate that held the bounds in a saturation search (\`./run.sh saturate\`), one replica with the instance's limits; the mean over the instance's searches, each a run of its own on a fresh node, with the 95% interval of the mean (Student's t) over them. One search has no interval.`,
    `- Usable rate per replica: saturated x (1 - ${h}%). Replicas: the target over it, rounded up${redundancy === 'N+1' ? ', plus one (N+1: the target still served with one replica lost)' : ''}.`,
    `- Monthly cost: replicas x price per hour x ${hours} hours, plus the balancer's share: HAProxy's CPU per request (${lb.cpu_ms_per_request === null || lb.cpu_ms_per_request === undefined ? 'not measured' : `${num(lb.cpu_ms_per_request, 4)} ms, measured in the ${lb.source === 'verification' ? `verification run at ${state.verification.rate_rps} requests/s, where its health checks weigh more the lower the rate` : "searches' highest holding steps"}`}) x the target rate = the cores it keeps busy, priced at the instance's price per core-hour (price per hour / its vCPUs).`,
    '- Per million requests: the monthly cost over the requests of a month at the target rate.',
    "- The call against the runner-up: a tie when the two monthly costs are equal, or when the costs their saturated rates' 95% intervals allow overlap (replicas at each end of each interval); no tie otherwise; with one search per instance, no interval and no call.",
    "- An instance with more vCPUs than the machine gives a node (its cores less the load generator's) needs a larger machine and is left out of the choice; with `CAPACITY_EXTRAPOLATE=linear` it is searched on the cores there are and its rate scaled by its vCPUs over them, every such figure marked extrapolated.",
  ];
}

function searchLines(state) {
  const lines = ['', '## Searches', ''];
  for (const p of state.searches) {
    const runs = p.runs.map((r) => (r.dir ? `[${r.status}](${r.dir}/summary.md)` : `${r.status}: ${r.error}`));
    lines.push(`- ${p.instance}: ${runs.length ? runs.join(', ') : 'none yet'}`);
  }
  return lines;
}

/** Writes summary.md and charts/cost.svg of a capacity folder from its state. */
function renderCapacityReport(dir, state) {
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'charts', 'cost.svg'), scrub(costChart(state)));
  const st = state.settings;
  const lines = [
    `# chainperf capacity: ${state.name} — ${state.status}`,
    '',
    `${st.target_rps} requests/s of \`${st.workload}\` (scenario \`${path.basename(state.file)}\`, ${st.runtime} runtime), under ${boundsText(state.bounds)}; ${st.headroom_pct}% headroom below each instance's saturated rate; redundancy ${st.redundancy}; ${st.repeats} saturation search(es) per instance. Started ${state.started_at}${state.ended_at ? `, ended ${state.ended_at}` : ''}. Prices in the profiles' currency (the shipped ones: US dollars), a month of ${st.hours_per_month} hours.`,
    '',
    `> **Emulated.** ${state.emulation_note}`,
    '',
    '## The answer',
    '',
    ...answerLines(state),
    '',
    '## Instances',
    '',
    ...instanceTable(state),
    ...verificationLines(state),
    ...methodLines(state),
    ...searchLines(state),
    '',
    '## Chart',
    '',
    '![monthly cost against the target rate](charts/cost.svg)',
  ];
  if (state.warnings.length) lines.push('', '## Warnings', '', ...state.warnings.map((w) => `- ${w}`));
  fs.writeFileSync(path.join(dir, 'summary.md'), scrub(`${lines.join('\n')}\n`));
}

module.exports = { renderCapacityReport, EMULATION_NOTE, boundsText };
