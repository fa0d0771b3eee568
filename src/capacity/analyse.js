'use strict';
// A capacity run's analysis: each instance's row from its searches' reports
// (run.json of every search that ended ok), the balancer's CPU per request,
// the choice and how it stands against its runner-up. The arithmetic itself
// is arithmetic.js's; this module reads the runs and hands their figures in.

const fs = require('node:fs');
const path = require('node:path');
const { instanceRow, choose, mean } = require('./arithmetic');
const { okRuns } = require('../plan/run');
const { ROOT } = require('../util/paths');

function readRun(dir, rel) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, rel, 'run.json'), 'utf8'));
  } catch {
    return null;
  }
}

/** What the ok searches of an instance measured, for instanceRow; a search in which no rate held counts 0. */
function measuredOf(runs) {
  const held = runs.filter((r) => r.saturation.max_sustainable_rps !== null);
  return {
    rates: runs.map((r) => r.saturation.max_sustainable_rps ?? 0),
    p50s: held.map((r) => r.figures.latency_ms.p50),
    p99s: held.map((r) => r.figures.latency_ms.p99),
    cpus: held.map((r) => r.figures.cpu_ms_per_request),
    limit_reached: runs.every((r) => r.saturation.reached_limit),
  };
}

/** HAProxy's CPU per request in the searches' highest holding steps (a scenario with BALANCER=haproxy has them). */
function searchBalancerCpu(runsByInstance) {
  const xs = Object.values(runsByInstance)
    .flat()
    .map((r) => {
      const best = r.saturation.steps.find((x) => x.holds && x.target_rps === r.saturation.max_sustainable_target_rps);
      return best && best.fleet ? best.fleet.balancer_cpu_ms_per_request : null;
    });
  return mean(xs);
}

/** A row with every field, for an instance that has no measured rate (yet, or ever). */
function blankRow(p, status, note) {
  return {
    instance: p.name,
    cores: p.cores,
    memory_mb: p.memory_mb,
    hourly_price: p.hourly_price,
    status,
    note,
    saturated_rps: null,
    p50_ms: null,
    p99_ms: null,
    cpu_ms_per_request: null,
    extrapolated: null,
    usable_rps: null,
    replicas_needed: null,
    replicas: null,
    replicas_monthly_cost: null,
    balancer_monthly_cost: null,
    monthly_cost: null,
    cost_per_million: null,
    cost_per_million_at_saturation: null,
    monthly_cost_range: null,
  };
}

/** One instance's row from its searches' reports. */
function rowFor(p, search, runs, o) {
  const rel = path.relative(ROOT, p.file);
  const base = { file: rel.startsWith('..') ? p.file : rel, machine_cores_needed: p.cores + 1, searches: null };
  if (p.run_cores === null)
    return {
      ...blankRow(
        p,
        'needs-machine',
        `needs a machine with ${p.cores + 1} cores (its ${p.cores} and one for the load generator); the machine chainperf ran on has ${o.cpuCount}: left out of the choice (CAPACITY_EXTRAPOLATE=linear extrapolates it)`,
      ),
      ...base,
    };
  base.searches = {
    ok: runs.length,
    failed: search.runs.length - okRuns(search),
    dirs: search.runs.map((r) => r.dir).filter(Boolean),
  };
  if (!runs.length) {
    const last = search.runs[search.runs.length - 1];
    const row = last
      ? blankRow(p, 'failed', `every search failed: ${last.error}`)
      : blankRow(p, 'pending', 'not searched yet');
    return { ...row, ...base };
  }
  const inst = { ...p, measured_cores: p.fits ? null : p.run_cores };
  const row = { ...instanceRow(inst, measuredOf(runs), o), note: null, ...base };
  if (row.status === 'no-rate') row.note = 'no rate held the bounds, even the lowest the search tried';
  else if (!row.saturated_rps.limit_reached)
    row.note = 'a search stopped before crossing a bound (SATURATE_MAX_STEPS): the saturated rate is a lower bound';
  return row;
}

/** The rows, the choice and the balancer's share from the searches (and the verification, once run). */
function analyse(dir, state, inputs) {
  const s = inputs.scenario;
  const runsBy = {};
  for (const search of state.searches)
    runsBy[search.instance] = search.runs
      .filter((r) => r.status === 'ok' && r.dir)
      .map((r) => readRun(dir, r.dir))
      .filter((r) => r && r.saturation && r.figures);
  const first = Object.values(runsBy).flat()[0];
  state.bounds = first ? first.saturation.bounds : state.bounds;
  const measured = state.verification ? state.verification.balancer_cpu_ms_per_request : null;
  const lbCpu = measured ?? searchBalancerCpu(runsBy);
  state.balancer = {
    cpu_ms_per_request: lbCpu,
    source: measured !== null && measured !== undefined ? 'verification' : lbCpu !== null ? 'searches' : null,
  };
  const o = {
    targetRps: s.TARGET_RPS,
    headroomPct: s.CAPACITY_HEADROOM,
    redundancy: s.REDUNDANCY,
    balancerCpuMs: lbCpu,
    cpuCount: inputs.cpuCount,
  };
  state.instances = inputs.profiles.map((p) =>
    rowFor(
      p,
      state.searches.find((x) => x.instance === p.name),
      runsBy[p.name] || [],
      o,
    ),
  );
  const choice = choose(state.instances);
  state.choice = choice && { ...choice, call: callOf(choice, s.CAPACITY_REPEATS) };
}

/** How the choice stands against its runner-up: a tie, no tie, or nothing to tell it by. */
function callOf(choice, repeats) {
  if (!choice.runner_up) return 'the only instance with a measured rate';
  if (choice.tie === true) return 'tie';
  if (choice.tie === false) return 'no tie';
  return repeats === 1 ? 'no interval (1 search)' : 'no interval';
}

module.exports = { analyse, measuredOf };
