'use strict';
// INDEX.md at the root of the reports: every run and plan with its scenario,
// date, client version, headline figures and a link. Rebuilt from the report
// folders themselves after every run and plan, so it never drifts from them.

const fs = require('node:fs');
const path = require('node:path');
const { scrub } = require('../util/scrub');

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

const subdirs = (dir) =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
    : [];
const fix = (v, d) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(d));

/** Rows for every run.json at <root>/<scenario>/<run-id>/ and plan.json at <root>/plans/<plan>/<id>/. */
function collect(root) {
  const runs = [];
  for (const scenario of subdirs(root)) {
    if (scenario === 'plans' || scenario === 'compare') continue;
    for (const id of subdirs(path.join(root, scenario))) {
      const run = readJson(path.join(root, scenario, id, 'run.json'));
      if (run) runs.push({ rel: `${scenario}/${id}`, run });
    }
  }
  const plans = [];
  for (const name of subdirs(path.join(root, 'plans'))) {
    for (const id of subdirs(path.join(root, 'plans', name))) {
      const plan = readJson(path.join(root, 'plans', name, id, 'plan.json'));
      if (plan) plans.push({ rel: `plans/${name}/${id}`, plan });
    }
  }
  return { runs, plans };
}

function renderIndex(root) {
  const { runs, plans } = collect(root);
  const lines = ['# chainperf reports', '', '<!-- Rebuilt by chainperf after every run and plan; do not edit. -->', ''];
  lines.push('## Runs', '');
  if (!runs.length) lines.push('None yet.');
  else {
    lines.push(
      '| date (UTC) | scenario | status | client | runtime | CPU ms/request | net | requests/s | p99 ms | report |',
      '|---|---|---|---|---|---:|---:|---:|---:|---|',
    );
    for (const { rel, run } of runs.sort((a, b) => (b.run.started_at || '').localeCompare(a.run.started_at || ''))) {
      const f = run.figures || {};
      const p = run.provenance || {};
      const verdict = run.verdict ? (run.verdict.pass ? ', pass' : ', FAIL') : '';
      lines.push(
        `| ${(run.started_at || '').slice(0, 16).replace('T', ' ')} | ${run.scenario_name} | ${run.status}${verdict} | ${p.client ? `${p.client.name} ${p.client.version || ''}` : ''} | ${p.runtime || ''} | ${fix(f.cpu_ms_per_request, 3)} | ${fix(f.cpu_ms_per_request_net, 3)} | ${fix(f.rps, 0)} | ${fix(f.latency_ms && f.latency_ms.p99, 1)} | [summary](${rel}/summary.md) |`,
      );
    }
  }
  lines.push('', '## Plans', '');
  if (!plans.length) lines.push('None yet.');
  else {
    lines.push('| started (UTC) | plan | swept | points | status | report |', '|---|---|---|---:|---|---|');
    for (const { rel, plan } of plans.sort((a, b) =>
      (b.plan.started_at || '').localeCompare(a.plan.started_at || ''),
    )) {
      lines.push(
        `| ${(plan.started_at || '').slice(0, 16).replace('T', ' ')} | ${plan.plan} | ${plan.sweep.join(', ')} | ${plan.points.length} | ${plan.status} | [plan](${rel}/plan.md) |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function writeIndex(root) {
  if (!fs.existsSync(root)) return;
  fs.writeFileSync(path.join(root, 'INDEX.md'), scrub(renderIndex(root)));
}

module.exports = { writeIndex, renderIndex };
