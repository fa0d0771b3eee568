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
const { resolveScenario, redactScenario, derivedLine } = require('./scenario/resolve');
const { prepareNode, warmUp } = require('./session/prepare');
const { killGenerators } = require('./workload/artillery');
const { guardRun, leftoversOf } = require('./session/signals');
const { watchOtherRuns } = require('./runtime/others');
const { measureRepeated, measureSaturation, profileMethods, fmtHeadline } = require('./measure/phases');
const { startRunGenerator, launchRunGenerator } = require('./measure/run-generator');
const { measureIdle } = require('./measure/edges');
const { profileOutcome } = require('./measure/profile');
const { judgeStalls } = require('./measure/stall');
const { writeReport } = require('./report/write');
const { archiveGit } = require('./report/archive');
const { writeIndex } = require('./report/index');
const { provenance } = require('./report/provenance');
const { log, logTo } = require('./util/log');
const { scrub, scrubName, copyScrubbed, copyTailScrubbed } = require('./util/scrub');
const { reportProblems } = require('./util/problems');
const { holdRunLock } = require('./session/run-lock');
const { reclaimKilledRuns } = require('./reclaim');
const { completeRecord, newRunRecord, recordFailure, recordMeasured } = require('./session/run-record');

function newRunId(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${stamp}-${crypto.randomBytes(2).toString('hex')}`;
}

/**
 * The report folder and the private work folder of a new run; run.log starts in the report folder, with the run's
 * first lines: what runs, each companion chainperf chose for it (derived: src/scenario/companions.js), the folder.
 */
function openRun(file, s, derived = []) {
  const runId = newRunId();
  const reportsRoot = path.resolve(s.REPORTS_DIR);
  const reportDir = path.join(reportsRoot, scrubName(s.NAME), runId);
  fs.mkdirSync(reportDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `chainperf-${runId}-`));
  logTo(path.join(reportDir, 'run.log'));
  log(
    `run ${runId}: scenario ${file} (${s.CHAIN}/${s.CLIENT}, RUNTIME=${s.RUNTIME}, WORKLOAD=${s.WORKLOAD}, ${s.RATE ? `RATE=${s.RATE}/s` : `CONCURRENCY=${s.CONCURRENCY}`}, DURATION_S=${s.DURATION_S})`,
  );
  for (const d of derived) log(derivedLine(d));
  log(`report folder: ${reportDir}`);
  return { runId, reportsRoot, reportDir, workDir };
}

/** Starts the node (prepareNode), then the idle baseline, the measured window(s) and PROFILE=methods. */
async function measureRun(s, r) {
  const { run, series, held, controller } = r;
  const { signal } = controller;
  const ctx = await prepareNode(s, {
    warm: false, // startRunGenerator warms up
    onSynced: launchRunGenerator, // a kept generator starts while the history and the pool are made
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
      // and every few seconds while it runs: a run that starts and ends inside this one is seen too
      held.othersTimer = setInterval(() => watchOtherRuns(r.runId, run.warnings, log), 5000).unref();
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
  // the warm-up, by the generator kept for the run's windows (started before the first idle baseline) or a pass
  run.phase = 'warmup';
  await startRunGenerator(ctx, warmUp);
  if (s.IDLE_S > 0) await measureIdles(run, held.stack, s.IDLE_S, signal);
  ctx.idle = run.idle || null;
  ctx.idleChain = run.idle_chain || null; // CHAIN_LOAD: CPU net of the chain's work

  run.phase = 'measure';
  const measured = s.SATURATE === 'yes' ? await measureSaturation(ctx) : await measureRepeated(ctx);
  const m = recordMeasured(run, series, s, measured);
  // FAULT=pause-node: the node's catch-up (with FAULT_LOAD=off, its pause too, with no load)
  if (held.stack.network && held.stack.network.afterWindows) {
    run.phase = 'fault';
    run.fault = await held.stack.network.afterWindows(signal);
  }
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

/**
 * The idle baseline; with CHAIN_LOAD's traffic (stack.network.quietChain), two: on a quiet chain (the feed paused:
 * run.idle, what the net figure subtracts) and under the chain's traffic (run.idle_chain, the net of chain work's).
 */
async function measureIdles(run, stack, seconds, signal) {
  run.phase = 'idle';
  const quiet = stack.network && stack.network.quietChain;
  if (!quiet) {
    run.idle = await measureIdle(stack, seconds, signal);
    return;
  }
  run.idle = await quiet(() => measureIdle(stack, seconds, signal, 'the idle baseline on a quiet chain'), signal);
  run.idle_chain = await measureIdle(stack, seconds, signal, "the idle baseline under the chain's traffic");
}

/** On every path: the load stops, the stack goes, its logs are kept, the work folder is removed. */
async function tearDownRun(r) {
  const { run, guard, workDir, reportDir } = r;
  const { stack } = r.held;
  guard.tearingDown();
  killGenerators(); // the load stops first, on every path
  clearInterval(r.held.othersTimer);
  watchOtherRuns(r.runId, run.warnings, log); // a run that started after this one
  if (stack && stack.windowHooks && stack.windowHooks.profiler) addProfile(run, stack.windowHooks, reportDir);
  // NETWORK_NODES: network nodes lost, blocks not handed over, transactions refused
  if (stack && stack.network) run.warnings.push(...stack.network.watch.problems());
  if (stack && stack.fleet) run.warnings.push(...stack.fleet.problems()); // REPLICAS: replicas lost
  // LB_LAG_CHECK: every change of the agents' answers, the windows' and those outside them
  const lagCheck = stack && stack.fleet && stack.fleet.lagCheckRecord ? stack.fleet.lagCheckRecord() : null;
  if (lagCheck && run.fleet) run.fleet.lag_check = lagCheck;
  if (stack && stack.startWarnings) run.warnings.push(...stack.startWarnings); // the swarm's: a task restarted once
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
    // REPLICAS: the other replicas' logs, the balancer's configuration (whole)
    for (const x of (stack && stack.extraLogs) || [])
      if (fs.existsSync(x.file))
        if (x.whole) copyScrubbed(x.file, path.join(reportDir, x.name));
        else copyTailScrubbed(x.file, path.join(reportDir, x.name), 200);
    // NETWORK_NODES: the tail of each network node's log
    const netDir = path.join(workDir, 'network');
    if (fs.existsSync(netDir))
      for (const f of fs.readdirSync(netDir).filter((x) => x.endsWith('.log')))
        copyTailScrubbed(path.join(netDir, f), path.join(reportDir, `network-${f}`), 200);
    // artillery's logs and scripts of every pass (scrubbed): artillery.log/.yml for the main window (GENERATORS:
    // the first generator's, artillery-g<i>.log/.yml the others'), <pass>.artillery.log for the other passes
    const mainWindow = (_, g, ext) => (g && g !== '0' ? `artillery-g${g}.${ext}` : `artillery.${ext}`);
    for (const f of fs.readdirSync(workDir).filter((x) => /\.artillery\.(log|yml)$/.test(x))) {
      const name = f.replace(/^measure\.(?:g(\d+)\.)?artillery\.(log|yml)$/, mainWindow);
      copyScrubbed(path.join(workDir, f), path.join(reportDir, name));
    }
  } catch (err) {
    run.warnings.push(`the run's logs could not all be copied into the report: ${err.message}`); // the work folder goes all the same
  }
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
 * Opens the run: its folders, its guard against signals, its record, and its lock (until the report is written, the
 * lock says what this run started and measured, for a later run to reclaim if this process is killed).
 */
async function beginRun(file, s, { sources, resolveWarnings, derived }) {
  const r = openRun(file, s, derived);
  await reclaimKilledRuns({ log, by: `run ${r.runId}` });
  r.controller = new AbortController();
  // held.stack is kept until the report is written: a signal while tearing down waits for the teardown.
  // held.starting is the stack while its runtime is still starting it: a forced exit then names what it left.
  r.held = { stack: null, starting: null };
  const leftovers = () => leftoversOf(r.held.stack || r.held.starting, r.workDir);
  r.guard = guardRun({ log, abort: (err) => r.controller.abort(err), leftovers });
  r.run = newRunRecord(s, r.runId, resolveWarnings);
  r.series = {};
  const client = { name: s.CLIENT, version: null };
  const early = provenance({ scenario: redactScenario(s), sources, client, runtime: s.RUNTIME });
  const record = () => ({ ...r.run, provenance: r.run.provenance || early });
  r.lock = holdRunLock({
    runId: r.runId,
    kind: 'run',
    reportDir: r.reportDir,
    workDirs: [r.workDir],
    leftovers,
    record,
  });
  const clientModule = clients[s.CLIENT];
  if (clientModule.warning) r.run.warnings.push(clientModule.warning); // what the client is, whatever happens next
  return r;
}

/** The report written (and indexed, archived); the guard and the lock released. */
function finishRun(r, s, { out, index }) {
  const { run } = r;
  const release = () => {
    r.guard.release();
    r.lock.release();
  };
  try {
    writeReport(r.reportDir, run, r.series);
  } catch (err) {
    logTo(null);
    log(`the report could not be written in ${r.reportDir}: ${err.code || err.message} (is the filesystem full?)`);
    release();
    return { exitCode: 1, run };
  }
  logTo(null); // the folder is complete: what follows is not part of it
  if (index) writeIndex(r.reportsRoot);
  if (s.ARCHIVE === 'git') archiveRun(r, s, index);
  release();
  out(r.reportDir);
  return { exitCode: run.status === 'ok' && (!run.verdict || run.verdict.pass) ? 0 : 1, reportDir: r.reportDir, run };
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
  const { scenario: s, sources, errors, warnings: resolveWarnings = [], derived } = resolveScenario(file, { env });
  if (errors.length) {
    reportProblems('the scenario is not valid; nothing was started.', errors);
    return { exitCode: 2 };
  }
  const r = await beginRun(file, s, { sources, resolveWarnings, derived });
  try {
    await measureRun(s, r);
  } catch (err) {
    await recordFailure(r, err);
  } finally {
    await tearDownRun(r);
  }
  r.run.warnings.push(...r.guard.late());
  completeRecord(r.run, s, sources, r.held.stack);
  return finishRun(r, s, { out, index });
}

/** run.profile, and the warning that says the figures were measured with a profiler running. */
function addProfile(run, hooks, reportDir) {
  const { profile, warnings } = profileOutcome(hooks, reportDir);
  run.profile = profile;
  run.warnings.push(...warnings);
}

module.exports = { runScenario, newRunId, openRun };
