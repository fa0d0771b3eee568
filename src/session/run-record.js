'use strict';
// The record of one run (run.json as it is built): a new one, the measured
// window's figures into it, the failure and what was measured before it, and
// what it holds besides measurements (verdict, end time, provenance).

const clients = require('../clients');
const { redactScenario } = require('../scenario/resolve');
const { verdict } = require('../verdict');
const { costPerMillion } = require('../saturation');
const { applyPartialWindow } = require('../measure/partial');
const { provenance } = require('../report/provenance');
const { log } = require('../util/log');
const { addWarnings } = require('./run-warnings');

function newRunRecord(s, runId, resolveWarnings) {
  const run = {
    schema_version: 1,
    run_id: runId,
    scenario_name: s.NAME,
    status: 'running',
    started_at: new Date().toISOString(),
    ended_at: null,
    phase: 'starting',
    warnings: [...resolveWarnings],
  };
  for (const w of resolveWarnings) log(`warning: ${w}`);
  return run;
}

/** The chosen window's figures into run.json and series.json; returns that window. */
function recordMeasured(run, series, s, measured) {
  const m = measured.chosen;
  run.window = m.window;
  run.node = { ...run.node, ...m.node };
  run.figures = m.figures;
  run.figures.cost_per_million_requests = costPerMillion(s.HOURLY_PRICE, m.figures.rps);
  run.errors = m.samples.errors;
  run.generator = m.generator;
  if (m.chainRecords) Object.assign(run, m.chainRecords); // a chain family's own fields (Substrate: run.substrate)
  Object.assign(series, m.series);
  Object.assign(run, measured.extra);
  addWarnings(run, s, m.samples);
  return m;
}

async function recordFailure(r, err) {
  const { run, series, held } = r;
  const { signal } = r.controller;
  run.status = 'failed';
  // A node that died (e.g. killed for its MEMORY_MB) is often seen first as a refused request: let its exit be reported
  // as the reason.
  if (held.stack && !signal.aborted) await new Promise((res) => setTimeout(res, 500));
  if (held.stack && held.stack.lookForNodeExit && !signal.aborted) await held.stack.lookForNodeExit().catch(() => {});
  run.error = signal.aborted && signal.reason ? signal.reason.message : err.message;
  if (err.partial) Object.assign(run, err.partial); // windows measured before the failure
  applyPartialWindow(run, series, err); // and the one cut short, up to the failure
  log(`run failed during ${run.phase}: ${run.error}`);
}

/** The verdict, the end time and the provenance: what run.json holds besides the measurements. */
function completeRecord(run, s, sources, stack) {
  run.verdict = verdict(s, run.figures) || undefined;
  if (run.verdict) {
    log(
      run.verdict.pass
        ? `verdict: pass (${run.verdict.checks.map((c) => c.key).join(', ')})`
        : `verdict: FAIL: ${run.verdict.failed.join('; ')}`,
    );
  }
  run.ended_at = new Date().toISOString();
  const clientModule = clients[s.CLIENT];
  run.provenance = provenance({
    scenario: redactScenario(s),
    sources,
    client: stack
      ? stack.client
      : {
          name: s.CLIENT,
          version: null,
          ...(clientModule.kind && clientModule.kind !== 'node' ? { kind: clientModule.kind } : {}),
        },
    runtime: s.RUNTIME,
    tools: stack && stack.prometheus ? { prometheus: stack.prometheus.version } : {},
  });
}

module.exports = { newRunRecord, recordMeasured, recordFailure, completeRecord };
