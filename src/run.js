'use strict';
// One run, step by step (README, "What a run does"): resolve the scenario, start the
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
const chains = require('./chains');
const { resolveScenario, redactScenario } = require('./scenario/resolve');
const { prepareNode } = require('./session/prepare');
const { killGenerators } = require('./workload/artillery');
const { guardRun, leftoversOf } = require('./session/signals');
const { watchOtherRuns } = require('./runtime/others');
const { verdict } = require('./verdict');
const { costPerMillion } = require('./saturation');
const { measureRepeated, measureSaturation, profileMethods, fmtHeadline } = require('./measure/phases');
const { measureIdle } = require('./measure/window');
const { profileOutcome } = require('./measure/profile');
const { judgeStalls } = require('./measure/stall');
const { applyPartialWindow } = require('./measure/partial');
const { writeReport } = require('./report/write');
const { archiveGit } = require('./report/archive');
const { writeIndex } = require('./report/index');
const { provenance } = require('./report/provenance');
const { log, logTo } = require('./util/log');
const { scrub, scrubName, copyScrubbed, copyTailScrubbed } = require('./util/scrub');
const { reportProblems } = require('./util/problems');
const { holdRunLock } = require('./session/run-lock');
const { reclaimKilledRuns } = require('./reclaim');

function newRunId(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${stamp}-${crypto.randomBytes(2).toString('hex')}`;
}

/** The report folder and the private work folder of a new run; run.log starts in the report folder. */
function openRun(file, s) {
  const runId = newRunId();
  const reportsRoot = path.resolve(s.REPORTS_DIR);
  const reportDir = path.join(reportsRoot, scrubName(s.NAME), runId);
  fs.mkdirSync(reportDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `chainperf-${runId}-`));
  logTo(path.join(reportDir, 'run.log'));
  log(
    `run ${runId}: scenario ${file} (${s.CHAIN}/${s.CLIENT}, RUNTIME=${s.RUNTIME}, WORKLOAD=${s.WORKLOAD}, ${s.RATE ? `RATE=${s.RATE}/s` : `CONCURRENCY=${s.CONCURRENCY}`}, DURATION_S=${s.DURATION_S})`,
  );
  log(`report folder: ${reportDir}`);
  return { runId, reportsRoot, reportDir, workDir };
}

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

/** Starts the node (prepareNode), then the idle baseline, the measured window(s) and PROFILE=methods. */
async function measureRun(s, r) {
  const { run, series, held, controller } = r;
  const { signal } = controller;
  const ctx = await prepareNode(s, {
    run,
    runId: r.runId,
    workDir: r.workDir,
    reportDir: r.reportDir,
    signal,
    onStarting: (x) => {
      held.starting = x;
    },
    onStack: (x) => {
      held.stack = x;
      watchOtherRuns(r.runId, run.warnings, log);
    },
    onNodeExit: (info) => {
      const how = info.restarted ? 'restarted' : 'exited';
      controller.abort(
        new Error(
          info.message
            ? `${info.message} during ${run.phase}`
            : `the node ${how} during ${run.phase} (${info.signal ? `signal ${info.signal}` : `status ${info.code}`}); see node.log`,
        ),
      );
    },
  });
  if (s.IDLE_S > 0) {
    run.phase = 'idle';
    run.idle = await measureIdle(held.stack, s.IDLE_S, signal);
  }
  ctx.idle = run.idle || null;

  run.phase = 'measure';
  const measured = s.SATURATE === 'yes' ? await measureSaturation(ctx) : await measureRepeated(ctx);
  const m = recordMeasured(run, series, s, measured);
  if (s.PROFILE === 'methods') {
    run.phase = 'profile';
    run.methods_profile = await profileMethods(ctx);
  }
  // A node that stopped answering in the window fails the run, its figures kept (measure/stall.js).
  const stalled = judgeStalls([m, ...(run.repetitions || [])], run.warnings, s.STALL_S);
  run.status = stalled ? 'failed' : 'ok';
  if (stalled) run.error = stalled;
  log(stalled ? `run failed: ${stalled}` : `done: ${fmtHeadline(run.figures)}`);
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
  run.error = signal.aborted && signal.reason ? signal.reason.message : err.message;
  if (err.partial) Object.assign(run, err.partial); // windows measured before the failure
  applyPartialWindow(run, series, err); // and the one cut short, up to the failure
  log(`run failed during ${run.phase}: ${run.error}`);
}

/** On every path: the load stops, the stack goes, its logs are kept, the work folder is removed. */
async function tearDownRun(r) {
  const { run, guard, workDir, reportDir } = r;
  const { stack } = r.held;
  guard.tearingDown();
  killGenerators(); // the load stops first, on every path
  watchOtherRuns(r.runId, run.warnings, log); // a run that started after this one
  if (stack && stack.windowHooks && stack.windowHooks.profiler) addProfile(run, stack.windowHooks, reportDir);
  if (stack) {
    log('tearing down');
    await stack.teardown();
    for (const e of stack.teardownErrors || []) run.warnings.push(`teardown: ${e}`);
  }
  copyRunLogs(run, stack, workDir, reportDir);
  // on every path: it holds the generator's spec, with the node's URL
  fs.rmSync(workDir, { recursive: true, force: true });
  guard.reporting();
}

function copyRunLogs(run, stack, workDir, reportDir) {
  try {
    if (stack && stack.nodeLog && fs.existsSync(stack.nodeLog))
      copyTailScrubbed(stack.nodeLog, path.join(reportDir, 'node.log'), 400);
    // artillery's logs and scripts of every pass (scrubbed): artillery.log/.yml for the main window,
    // <pass>.artillery.log for the others
    for (const f of fs.readdirSync(workDir).filter((x) => /\.artillery\.(log|yml)$/.test(x))) {
      copyScrubbed(path.join(workDir, f), path.join(reportDir, f.replace(/^measure\./, '')));
    }
  } catch (err) {
    run.warnings.push(`the run's logs could not all be copied into the report: ${err.message}`); // the work folder goes all the same
  }
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

/** ARCHIVE=git: commits the report; a failed commit fails the run and the report is rewritten to say so. */
function archiveRun(r, s, index) {
  const { run, series, reportDir, reportsRoot } = r;
  try {
    const archived = archiveGit({
      reportsRoot,
      reportDir,
      message: scrub(`chainperf: ${s.NAME} ${run.status}: ${run.figures ? fmtHeadline(run.figures) : run.error}`),
      log,
      extra: index ? ['INDEX.md'] : [],
    });
    log(`archived in git: ${archived.repository} ${archived.commit.slice(0, 12)}`);
  } catch (err) {
    log(`ARCHIVE=git failed, the report is only on disk: ${err.message}`);
    if (run.status === 'ok') run.status = 'failed';
    run.error = run.error || `archiving in git failed: ${err.message}`;
    writeReport(reportDir, run, series);
    if (index) writeIndex(reportsRoot);
  }
}

/**
 * @param {string} file scenario path
 * @param {{env?: object, out?: (line:string)=>void}} opts
 * @returns {Promise<{exitCode:number, reportDir?:string}>}
 */
async function runScenario(
  file,
  { env = process.env, out = (l) => process.stdout.write(`${l}\n`), index = true } = {},
) {
  const { scenario: s, sources, errors, warnings: resolveWarnings = [] } = resolveScenario(file, { env });
  if (errors.length) {
    reportProblems('the scenario is not valid; nothing was started.', errors);
    return { exitCode: 2 };
  }
  const r = openRun(file, s);
  await reclaimKilledRuns({ log, by: `run ${r.runId}` });
  r.controller = new AbortController();
  // held.stack is kept until the report is written: a signal while tearing down waits for the teardown.
  // held.starting is the stack while its runtime is still starting it: a forced exit then names what it left.
  const held = { stack: null, starting: null };
  r.held = held;
  r.guard = guardRun({
    log,
    abort: (err) => r.controller.abort(err),
    leftovers: () => leftoversOf(held.stack || held.starting, r.workDir),
  });
  r.run = newRunRecord(s, r.runId, resolveWarnings);
  r.series = {};
  const { run, guard } = r;
  // Until the report is written, the lock says what this run started and measured, for a later run to reclaim if this
  // process is killed.
  const early = provenance({
    scenario: redactScenario(s),
    sources,
    client: { name: s.CLIENT, version: null },
    runtime: s.RUNTIME,
  });
  const lock = holdRunLock({
    runId: r.runId,
    kind: 'run',
    reportDir: r.reportDir,
    workDirs: [r.workDir],
    leftovers: () => leftoversOf(held.stack || held.starting, r.workDir),
    record: () => ({ ...run, provenance: run.provenance || early }),
  });

  const clientModule = clients[s.CLIENT];
  if (clientModule.warning) run.warnings.push(clientModule.warning); // what the client is, whatever happens next

  try {
    await measureRun(s, r);
  } catch (err) {
    await recordFailure(r, err);
  } finally {
    await tearDownRun(r);
  }
  run.warnings.push(...guard.late());
  completeRecord(run, s, sources, held.stack);
  try {
    writeReport(r.reportDir, run, r.series);
  } catch (err) {
    logTo(null);
    log(`the report could not be written in ${r.reportDir}: ${err.code || err.message} (is the filesystem full?)`);
    guard.release();
    lock.release();
    return { exitCode: 1, run };
  }
  logTo(null); // the folder is complete: what follows is not part of it
  if (index) writeIndex(r.reportsRoot);
  if (s.ARCHIVE === 'git') archiveRun(r, s, index);
  guard.release();
  lock.release();
  out(r.reportDir);
  return { exitCode: run.status === 'ok' && (!run.verdict || run.verdict.pass) ? 0 : 1, reportDir: r.reportDir, run };
}

/** run.profile, and the warning that says the figures were measured with a profiler running. */
function addProfile(run, hooks, reportDir) {
  const { profile, warnings } = profileOutcome(hooks, reportDir);
  run.profile = profile;
  run.warnings.push(...warnings);
}

/** Things a reader of the figures must know. */
function addWarnings(run, s, samples) {
  const w = run.warnings;
  if (samples.before_window === 0)
    w.push('the load generator completed no request before the window opened: the window may start with idle time');
  if (samples.ok === 0) w.push('no request succeeded in the window: CPU time per request is not defined');
  if (samples.failed > 0) w.push(`${samples.failed} requests failed in the window (see Errors seen)`);
  if (run.retries && run.retries.calls > 0)
    w.push(
      `${run.retries.calls} calls before the window (${Object.keys(run.retries.by_phase).join(', ')}) failed for a transient reason (${Object.keys(run.retries.by_reason).join(', ')}) and were tried again (run.json retries): the endpoint is flaky`,
    );
  const writes = run.figures && run.figures.writes;
  if (writes && writes.failed > 0)
    w.push(`${writes.failed} transactions failed in the window (see figures.writes.errors)`);
  w.push(...generatorWarnings(run, s, samples));
  if (
    run.node.cpu_source &&
    run.node.cpu_source.kind === 'cadvisor' &&
    run.node.disk_read_bytes === 0 &&
    run.node.disk_write_bytes === 0
  ) {
    w.push(
      "the node container's blkio counters did not move: on cgroup v1 some kernels count block I/O only once a blkio throttle rule exists, and writes the kernel flushes later are charged to the root cgroup (see README, compose runtime)",
    );
  }
  const chain = chains[s.CHAIN];
  if (chain && chain.runWarnings) w.push(...chain.runWarnings(run));
  w.push(...cpuCheckWarnings(run.node));
}

/** The generator's side: replayed requests the chain lacks, requests it could not start, its cores and its load. */
function generatorWarnings(run, s, samples) {
  const w = [];
  const replay = run.generator.replay;
  if (replay && replay.missing_on_target > 0)
    w.push(
      `${replay.missing_on_target} replayed requests asked for blocks, transactions or state this chain does not have (generator.replay.missing_on_target): answered, not counted as errors`,
    );
  if (samples.skipped > 0)
    w.push(
      `the open loop could not start ${samples.skipped} requests in the window (over 8192 unanswered at once): the node was far behind the rate offered`,
    );
  if (!run.generator.cpus && s.RUNTIME !== 'attach')
    w.push(
      `the load generator shares the node's cores (CORES=${s.CORES} of ${os.cpus().length}): its CPU competes with the node's`,
    );
  const g = run.generator;
  if (g.cpu_utilization > 0.9)
    w.push(
      `the load generator used ${(g.cpu_utilization * 100).toFixed(0)}% of its ${g.cores} core(s): it, not the node, may have been the limit`,
    );
  return w;
}

/** The second CPU source disagreeing with the first by more than 5%. */
function cpuCheckWarnings(node) {
  const check = node.cpu_check;
  if (!check || !(node.cpu_total_s > 0.5)) return [];
  const name = {
    pid: '/proc/PID/stat',
    cgroup: 'the cgroup',
    docker: "the Docker engine's stats",
    cadvisor: 'cAdvisor',
  };
  const [theirs, ours, unit] =
    check.cpu_s_per_s !== undefined
      ? [check.cpu_s_per_s, node.cpu_s_per_s, 'CPU s/s'] // read at other instants: compared as rates
      : [check.total_s, node.cpu_total_s, 's'];
  const diff = Math.abs(theirs - ours) / ours;
  if (diff > 0.05)
    return [
      `the node's CPU from ${name[check.kind] || check.kind} (${theirs.toFixed(3)} ${unit}) differs from ${name[node.cpu_source.kind] || node.cpu_source.kind}'s (${ours.toFixed(3)} ${unit}) by ${(diff * 100).toFixed(1)}%`,
    ];
  return [];
}

module.exports = { runScenario, newRunId };
