'use strict';
// ./run.sh ab <scenario-a> <scenario-b>: two configurations measured
// alternately on this machine in one session. Both nodes are started and kept
// warm; the load alternates between them, pair after pair, in ABBA order (A
// then B, then B then A, ...), so a drift of the machine falls on both sides
// alike. Each window is measured exactly as a run's window (its own idle
// baseline, then the workload). After each pair the ratio B/A of CPU time per
// request and its 95% interval over the pairs are updated. After AB_MIN_PAIRS
// pairs their spread says how many pairs ±AB_TARGET_PCT needs (Stein's
// two-stage rule, ab/stats.js) and, with AB_WINDOW=auto, which window length
// reaches it soonest (ab/window-length.js); the session measures that many
// (ab/stages.js), or stops at AB_MAX_PAIRS or AB_MAX_S.

const fs = require('node:fs');
const path = require('node:path');
const { resolveScenario, derivedLine } = require('../scenario/resolve');
const { newRunId } = require('../run');
const { archiveGit } = require('../report/archive');
const { guardRun, leftoversOf } = require('../session/signals');
const { killGenerators } = require('../workload/artillery');
const { log, logTo } = require('../util/log');
const { scrub } = require('../util/scrub');
const { reportProblems } = require('../util/problems');
const { holdRunLock } = require('../session/run-lock');
const { reclaimKilledRuns } = require('../reclaim');
const { stage1Units } = require('./stats');
const { restartPairs, restartRefusal, settleRestarts } = require('./restarts');
const { measurePairs } = require('./stages');
const { writeAbReport } = require('./report');
const { generatorMode, newSide, sideRecord, startBoth, stopKept, teardownBoth, warmBoth } = require('./sides');
const { fmtRatio, netNotPositiveWarning, regressionGate, summarizePairs } = require('./pairs');
const { profileDifference, shareParameterPool } = require('./shared');
const { machineSpeed, machineSpeedNote } = require('./machine-speed');
const { settleInterleave, sliceProblem } = require('./interleave');

/** Resolves both scenarios; the session's own keys (AB_*, MAX_REGRESSION_PCT, REPORTS_DIR, ARCHIVE) come from A. */
function resolveBoth(fileA, fileB, env) {
  const a = resolveScenario(fileA, { env });
  const b = resolveScenario(fileB, { env });
  const errors = [...a.errors.map((e) => `A: ${e}`), ...b.errors.map((e) => `B: ${e}`)];
  const restart = errors.length ? null : restartRefusal(a.scenario, b.scenario);
  if (restart) errors.push(restart);
  const slice = errors.length ? null : sliceProblem(a.scenario);
  if (slice) errors.push(slice);
  // a fault lands in one window of a run: pair after pair, it would fall in the first pair's windows alone
  for (const [side, r] of [
    ['A', a],
    ['B', b],
  ])
    if (r.scenario && r.scenario.FAULT)
      errors.push(
        `${side}: FAULT=${r.scenario.FAULT}: not in an A/B session, whose pairs are alike; measure it in a run`,
      );
  if (
    !errors.length &&
    a.scenario.RUNTIME === 'attach' &&
    b.scenario.RUNTIME === 'attach' &&
    a.scenario.RPC_URL === b.scenario.RPC_URL
  ) {
    errors.push('A and B attach to the same RPC_URL: an A/B session needs two nodes');
  }
  return { a, b, errors };
}

/** The session's first lines: what it compares and until when, each side's companions chainperf chose, the folder. */
function logOpening({ runId, fileA, fileB, sa, dir }, sides) {
  log(
    `A/B session ${runId}: A=${fileA}, B=${fileB}; until B/A of CPU per request is within ±${sa.AB_TARGET_PCT}% (${sa.AB_BURN_IN_PAIRS ? `after ${sa.AB_BURN_IN_PAIRS} burn-in pair(s), ` : ''}at least ${sa.AB_MIN_PAIRS} pairs, at most ${sa.AB_MAX_PAIRS} pairs or ${sa.AB_MAX_S} s)`,
  );
  // src/scenario/companions.js
  for (const [name, resolved] of Object.entries(sides))
    for (const d of resolved.derived) log(`${name}: ${derivedLine(d)}`);
  log(`report folder: ${dir}`);
}

/** AB_GENERATOR as both sides allow it, in ab.json's settings and the log. */
function chooseGenerators(ab, sides, setting) {
  const { mode, reason } = generatorMode(sides, setting);
  ab.settings.generator = mode;
  if (reason) ab.settings.generator_reason = reason;
  log(
    `load generators: ${mode === 'kept' ? "one per side, kept across the session's windows" : `a pass per window (${reason})`}`,
  );
  return mode;
}

/** How the intervals are taken, for ab.json and summary.md. */
const intervalText = (restarts) =>
  restarts
    ? `Student's t on the mean log of the ratios B/A of each block of ${restarts} pair${restarts === 1 ? '' : 's'} between restarts of both nodes, 95%; for CPU per request with the spread of the first blocks that hold AB_MIN_PAIRS pairs (Stein's two-stage procedure, which chose the number of pairs)`
    : "Student's t on the log of each pair's ratio B/A, 95%; for CPU per request with the spread of the first AB_MIN_PAIRS pairs (Stein's two-stage procedure, which chose the number of pairs)";

/** AB_RESTART_PAIRS once both nodes run: none, with a warning, where a side cannot restart its node and it is unset. */
function applyRestarts(ab, sides, sa) {
  const restarts = settleRestarts(ab.settings, sides, Number.isInteger(sa.AB_RESTART_PAIRS), ab.warnings);
  if (restarts !== ab.settings.restart_pairs)
    Object.assign(ab.settings, { restart_pairs: 0, interval: intervalText(0) });
}

/** The session's record (ab.json as it is built), before any pair. */
function newAbRecord(sa, sb, runId) {
  const restarts = restartPairs(sa, sb);
  const window = sa.AB_WINDOW === 'auto' && sa.DURATION_S !== sb.DURATION_S ? 'fixed' : sa.AB_WINDOW;
  return {
    schema_version: 1,
    kind: 'ab',
    run_id: runId,
    status: 'running',
    started_at: new Date().toISOString(),
    ended_at: null,
    settings: {
      target_pct: sa.AB_TARGET_PCT,
      min_pairs: sa.AB_MIN_PAIRS,
      restart_pairs: restarts,
      window,
      window_s: sa.DURATION_S,
      burn_in_pairs: sa.AB_BURN_IN_PAIRS,
      max_pairs: sa.AB_MAX_PAIRS,
      max_s: sa.AB_MAX_S,
      max_regression_pct: sa.MAX_REGRESSION_PCT,
      slice_s: sa.AB_SLICE_S,
      order: 'ABBA',
      interval: intervalText(restarts),
    },
    pairs: [],
    progress: [],
    warnings:
      window === sa.AB_WINDOW
        ? []
        : [
            `AB_WINDOW=auto: A's DURATION_S (${sa.DURATION_S}) and B's (${sb.DURATION_S}) differ, so each side kept its own`,
          ],
  };
}

/**
 * @param {string} fileA scenario A
 * @param {string} fileB scenario B
 * @returns {Promise<{exitCode:number, dir?:string, ab?:object}>}
 */
async function runAb(fileA, fileB, { env = process.env, out = (l) => process.stdout.write(`${l}\n`) } = {}) {
  const { a, b, errors } = resolveBoth(fileA, fileB, env);
  if (errors.length) {
    reportProblems('ab: a scenario is not valid; nothing was started.', errors);
    return { exitCode: 2 };
  }
  const sa = a.scenario;
  const runId = newRunId();
  const reportsRoot = path.resolve(sa.REPORTS_DIR);
  const dir = path.join(reportsRoot, 'ab', runId);
  fs.mkdirSync(dir, { recursive: true });
  logTo(path.join(dir, 'run.log'));
  await reclaimKilledRuns({ log, by: `A/B session ${runId}` });
  const A = { ...newSide('A', a, { dir, runId }), file: fileA };
  const B = { ...newSide('B', b, { dir, runId }), file: fileB };
  const ab = newAbRecord(sa, b.scenario, runId);
  logOpening({ runId, fileA, fileB, sa, dir }, { A: a, B: b });
  const controller = new AbortController();
  const { signal } = controller;
  // Kept until the report is written: a signal while tearing down waits for the teardown; a third forces an exit.
  const leftovers = () => [A, B].flatMap((x) => leftoversOf(x.stack || x.starting, x.workDir));
  const guard = guardRun({ log, abort: (err) => controller.abort(err), leftovers });
  // What a later run reclaims if this process is killed (src/reclaim.js).
  const lock = holdRunLock({
    runId,
    kind: 'ab',
    reportDir: dir,
    workDirs: [A.workDir, B.workDir],
    leftovers,
    record: () => ab,
  });
  try {
    const mode = chooseGenerators(ab, [A, B], sa.AB_GENERATOR);
    await startBoth([A, B], { runId, signal, controller, mode });
    applyRestarts(ab, [A, B], sa);
    settleInterleave(ab.settings, [A, B]); // AB_SLICE_S, where both sides' generators and nodes allow it
    ab.shared_pool = shareParameterPool(A, B, ab.warnings); // before the warm-up: a kept generator reads it then
    // with restarts, the first pair's processes are restarted and warmed up as every later pair's are (stages.js)
    if (!ab.settings.restart_pairs) await warmBoth([A, B], signal, mode);
    ab.stop_reason = await measurePairs(ab, A, B, signal);
    await stopKept([A, B]);
    ab.status = 'ok';
  } catch (err) {
    ab.status = 'failed';
    ab.error = signal.aborted && signal.reason ? signal.reason.message : err.message;
    log(`A/B session failed: ${ab.error}`);
  } finally {
    guard.tearingDown();
    killGenerators(); // the load stops first, on every path
    await teardownBoth([A, B]);
    guard.reporting();
  }
  ab.warnings.push(...guard.late());
  try {
    return finish(ab, { A, B, dir, reportsRoot, out });
  } finally {
    guard.release();
    lock.release();
  }
}

/** Figures, verdicts, the gate, the report and its archive; the folder printed last. */
function finish(ab, { A, B, dir, reportsRoot, out }) {
  ab.ended_at = new Date().toISOString();
  ab.a = sideRecord(A);
  ab.b = sideRecord(B);
  ab.figures = summarizePairs(ab.pairs, stage1Units(ab.settings));
  ab.machine_speed = machineSpeed(ab.pairs);
  const cpu = ab.figures.cpu_ms_per_request;
  if (ab.pairs.length && cpu.halfwidth_pct !== null && cpu.halfwidth_pct > ab.settings.target_pct) {
    const speed = machineSpeedNote(ab.machine_speed);
    ab.warnings.push(
      `the interval of B/A for CPU per request is ±${cpu.halfwidth_pct.toFixed(1)}%, wider than the target ±${ab.settings.target_pct}% (${ab.stop_reason || ab.error}): a verdict of "same" means no difference beyond that was found, not that there is none${speed ? `; ${speed}` : ''}`,
    );
  }
  const net = netNotPositiveWarning(ab.pairs);
  if (net) ab.warnings.push(net);
  ab.regression = regressionGate(ab.figures, ab.settings.max_regression_pct);
  const profile = profileDifference(A, B, dir);
  if (profile) ab.profile_diff = profile;
  writeAbReport(dir, ab);
  logTo(null);
  const verdictLine = cpu.verdict
    ? `B/A CPU per request ${fmtRatio(cpu)}: ${cpu.verdict}`
    : 'no verdict (fewer than two pairs)';
  log(`A/B ${ab.status}: ${ab.pairs.length} pair(s); ${verdictLine}`);
  if (ab.regression && !ab.regression.pass) log(`regression gate FAILED: ${ab.regression.failed.join('; ')}`);
  if (A.s.ARCHIVE === 'git') {
    try {
      const archived = archiveGit({
        reportsRoot,
        reportDir: dir,
        message: scrub(`chainperf ab: ${A.s.NAME} vs ${B.s.NAME} ${ab.status}: ${verdictLine}`),
        log,
      });
      log(`archived in git: ${archived.repository} ${archived.commit.slice(0, 12)}`);
    } catch (err) {
      log(`ARCHIVE=git failed, the report is only on disk: ${err.message}`);
    }
  }
  out(dir);
  const exitCode = ab.status === 'ok' && (!ab.regression || ab.regression.pass) ? 0 : 1;
  return { exitCode, dir, ab };
}

module.exports = { runAb, resolveBoth, logOpening };
