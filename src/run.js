'use strict';
// One run, step by step (DESIGN.md "One run"): resolve the scenario, start the
// runtime, wait for sync, create history on a dev chain, harvest parameters,
// warm up, measure the idle baseline, measure the workload, compute the
// figures, write the report, archive it, tear down. Whatever happens after the
// scenario is valid, a report folder is written, marked failed with the reason
// when the run did not complete, with what was measured until then.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const clients = require('./clients');
const { resolveScenario, redactScenario } = require('./scenario/resolve');
const { prepareNode } = require('./session/prepare');
const { trapSignals } = require('./util/signals');
const { verdict } = require('./verdict');
const { costPerMillion } = require('./saturation');
const { measureRepeated, measureSaturation, profileMethods, fmtHeadline } = require('./measure/phases');
const { measureIdle } = require('./measure/window');
const { writeReport } = require('./report/write');
const { archiveGit } = require('./report/archive');
const { writeIndex } = require('./report/index');
const { provenance } = require('./report/provenance');
const { log, logTo } = require('./util/log');

function newRunId(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${stamp}-${crypto.randomBytes(2).toString('hex')}`;
}

/**
 * @param {string} file scenario path
 * @param {{env?: object, out?: (line:string)=>void}} opts
 * @returns {Promise<{exitCode:number, reportDir?:string}>}
 */
async function runScenario(file, { env = process.env, out = (l) => process.stdout.write(`${l}\n`), index = true } = {}) {
  const { scenario: s, sources, errors, warnings: resolveWarnings = [] } = resolveScenario(file, { env });
  if (errors.length) {
    process.stderr.write(`chainperf: the scenario is not valid; nothing was started.\n${errors.map((e) => `  ${e}`).join('\n')}\n`);
    return { exitCode: 2 };
  }
  const runId = newRunId();
  const reportsRoot = path.resolve(s.REPORTS_DIR);
  const reportDir = path.join(reportsRoot, s.NAME, runId);
  fs.mkdirSync(reportDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `chainperf-${runId}-`));
  logTo(path.join(reportDir, 'run.log'));
  log(`run ${runId}: scenario ${file} (${s.CHAIN}/${s.CLIENT}, RUNTIME=${s.RUNTIME}, WORKLOAD=${s.WORKLOAD}, ${s.RATE ? `RATE=${s.RATE}/s` : `CONCURRENCY=${s.CONCURRENCY}`}, DURATION_S=${s.DURATION_S})`);
  log(`report folder: ${reportDir}`);

  const controller = new AbortController();
  const { signal } = controller;
  const releaseSignals = trapSignals(controller, log);

  const started = new Date();
  const run = {
    schema_version: 1,
    run_id: runId,
    scenario_name: s.NAME,
    status: 'running',
    started_at: started.toISOString(),
    ended_at: null,
    phase: 'starting',
    warnings: [...resolveWarnings],
  };
  for (const w of resolveWarnings) log(`warning: ${w}`);
  const series = {};
  let stack = null;
  const phase = (name) => {
    run.phase = name;
  };

  const clientModule = clients[s.CLIENT];
  if (clientModule.warning) run.warnings.push(clientModule.warning); // what the client is, whatever happens next

  try {
    const ctx = await prepareNode(s, {
      run,
      runId,
      workDir,
      reportDir,
      signal,
      onStack: (x) => {
        stack = x;
      },
      onNodeExit: (info) => {
        const how = info.restarted ? 'restarted' : 'exited';
        controller.abort(new Error(`the node ${how} during ${run.phase} (${info.signal ? `signal ${info.signal}` : `status ${info.code}`}); see node.log`));
      },
    });
    if (s.IDLE_S > 0) {
      phase('idle');
      run.idle = await measureIdle(stack, s.IDLE_S, signal);
    }
    ctx.idle = run.idle || null;

    phase('measure');
    const measured = s.SATURATE === 'yes' ? await measureSaturation(ctx) : await measureRepeated(ctx);
    const m = measured.chosen;
    run.window = m.window;
    run.node = { ...run.node, ...m.node };
    run.figures = m.figures;
    run.figures.cost_per_million_requests = costPerMillion(s.HOURLY_PRICE, m.figures.rps);
    run.errors = m.samples.errors;
    run.generator = m.generator;
    if (m.substrate) run.substrate = m.substrate;
    Object.assign(series, m.series);
    Object.assign(run, measured.extra);
    addWarnings(run, s, m.samples);
    if (s.PROFILE === 'methods') {
      phase('profile');
      run.methods_profile = await profileMethods(ctx);
    }
    run.status = 'ok';
    log(`done: ${fmtHeadline(run.figures)}`);
  } catch (err) {
    run.status = 'failed';
    // A node that died (e.g. killed for its MEMORY_MB) is often seen first as a refused request: let its exit be reported as the reason.
    if (stack && !signal.aborted) await new Promise((r) => setTimeout(r, 500));
    run.error = signal.aborted && signal.reason ? signal.reason.message : err.message;
    if (err.partial) Object.assign(run, err.partial); // windows measured before the failure
    log(`run failed during ${run.phase}: ${run.error}`);
  } finally {
    releaseSignals();
    if (stack) {
      log('tearing down');
      await stack.teardown();
      if (stack.nodeLog && fs.existsSync(stack.nodeLog)) copyTail(stack.nodeLog, path.join(reportDir, 'node.log'), 400);
    }
    // artillery's logs and scripts of every pass: artillery.log/.yml for the main window, <pass>.artillery.log for the others
    for (const f of fs.readdirSync(workDir).filter((x) => /\.artillery\.(log|yml)$/.test(x))) {
      fs.copyFileSync(path.join(workDir, f), path.join(reportDir, f.replace(/^measure\./, '')));
    }
    fs.rmSync(workDir, { recursive: true, force: true });
  }

  run.verdict = verdict(s, run.figures) || undefined;
  if (run.verdict) {
    log(run.verdict.pass ? `verdict: pass (${run.verdict.checks.map((c) => c.key).join(', ')})` : `verdict: FAIL: ${run.verdict.failed.join('; ')}`);
  }
  run.ended_at = new Date().toISOString();
  run.provenance = provenance({
    scenario: redactScenario(s),
    sources,
    client: stack ? stack.client : { name: s.CLIENT, version: null, ...(clientModule.kind && clientModule.kind !== 'node' ? { kind: clientModule.kind } : {}) },
    runtime: s.RUNTIME,
    tools: stack && stack.prometheus ? { prometheus: stack.prometheus.version } : {},
  });
  writeReport(reportDir, run, series);
  logTo(null); // the folder is complete: what follows is not part of it
  if (index) writeIndex(reportsRoot);
  if (s.ARCHIVE === 'git') {
    try {
      const archived = archiveGit({ reportsRoot, reportDir, message: `chainperf: ${s.NAME} ${run.status}: ${run.figures ? fmtHeadline(run.figures) : run.error}`, log, extra: index ? ['INDEX.md'] : [] });
      log(`archived in git: ${archived.repository} ${archived.commit.slice(0, 12)}`);
    } catch (err) {
      log(`ARCHIVE=git failed, the report is only on disk: ${err.message}`);
      if (run.status === 'ok') run.status = 'failed';
      run.error = run.error || `archiving in git failed: ${err.message}`;
      writeReport(reportDir, run, series);
      if (index) writeIndex(reportsRoot);
    }
  }
  out(reportDir);
  return { exitCode: run.status === 'ok' && (!run.verdict || run.verdict.pass) ? 0 : 1, reportDir, run };
}

/** Things a reader of the figures must know. */
function addWarnings(run, s, samples) {
  const w = run.warnings;
  if (samples.before_window === 0) w.push('the load generator completed no request before the window opened: the window may start with idle time');
  if (samples.ok === 0) w.push('no request succeeded in the window: CPU time per request is not defined');
  if (samples.failed > 0) w.push(`${samples.failed} requests failed in the window (see Errors seen)`);
  if (samples.skipped > 0) w.push(`the open loop could not start ${samples.skipped} requests in the window (over 8192 unanswered at once): the node was far behind the rate offered`);
  if (!run.generator.cpus && s.RUNTIME !== 'attach') w.push(`the load generator shares the node's cores (CORES=${s.CORES} of ${os.cpus().length}): its CPU competes with the node's`);
  const g = run.generator;
  if (g.cpu_utilization > 0.9) w.push(`the load generator used ${(g.cpu_utilization * 100).toFixed(0)}% of its ${g.cores} core(s): it, not the node, may have been the limit`);
  if (run.node.cpu_source && run.node.cpu_source.kind === 'cadvisor' && run.node.disk_read_bytes === 0 && run.node.disk_write_bytes === 0) {
    w.push('the node container\'s blkio counters did not move: on cgroup v1 some kernels count block I/O only once a blkio throttle rule exists, and writes the kernel flushes later are charged to the root cgroup (see README, compose runtime)');
  }
  if (run.substrate) {
    const failedOps = Object.values(run.substrate.operations).reduce((n, o) => n + o.failed, 0);
    if (failedOps > 0) w.push(`${failedOps} operations failed in the window (see substrate.operation_errors)`);
    const t = run.substrate.transactions;
    if (t && t.failed > 0) w.push(`${t.failed} transfers failed in the window (see substrate.transactions.errors)`);
  }
  const check = run.node.cpu_check;
  if (check && run.node.cpu_total_s > 0.5) {
    const name = { pid: '/proc/PID/stat', cgroup: 'the cgroup', docker: 'the Docker engine\'s stats', cadvisor: 'cAdvisor' };
    const [theirs, ours, unit] = check.cpu_s_per_s !== undefined
      ? [check.cpu_s_per_s, run.node.cpu_s_per_s, 'CPU s/s'] // read at other instants: compared as rates
      : [check.total_s, run.node.cpu_total_s, 's'];
    const diff = Math.abs(theirs - ours) / ours;
    if (diff > 0.05) w.push(`the node's CPU from ${name[check.kind] || check.kind} (${theirs.toFixed(3)} ${unit}) differs from ${name[run.node.cpu_source.kind] || run.node.cpu_source.kind}'s (${ours.toFixed(3)} ${unit}) by ${(diff * 100).toFixed(1)}%`);
  }
}

function copyTail(src, dst, lines) {
  const text = fs.readFileSync(src, 'utf8').split('\n');
  fs.writeFileSync(dst, text.slice(-lines).join('\n'));
}

module.exports = { runScenario, newRunId };
