'use strict';
// ./run.sh ab <scenario-a> <scenario-b>: two configurations measured
// alternately on this machine in one session. Both nodes are started and kept
// warm; the load alternates between them, pair after pair, in ABBA order (A
// then B, then B then A, ...), so a drift of the machine falls on both sides
// alike. Each window is measured exactly as a run's window (its own idle
// baseline, then the workload). After each pair the ratio B/A of CPU time per
// request and its 95% interval over the pairs are updated. After AB_MIN_PAIRS
// pairs their spread says how many pairs ±AB_TARGET_PCT needs (Stein's
// two-stage rule, ab/stats.js); the session measures that many, or stops at
// AB_MAX_PAIRS or AB_MAX_S.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { resolveScenario, redactScenario } = require('../scenario/resolve');
const { newRunId } = require('../run');
const { prepareNode, warmUp } = require('../session/prepare');
const { windowWithFigures, fmtHeadline } = require('../measure/phases');
const { measureIdle } = require('../measure/window');
const { judgeStalls } = require('../measure/stall');
const { provenance } = require('../report/provenance');
const { archiveGit } = require('../report/archive');
const { guardRun, leftoversOf } = require('../session/signals');
const { killGenerators } = require('../workload/artillery');
const { log, logTo } = require('../util/log');
const { scrub, copyScrubbed, copyTailScrubbed } = require('../util/scrub');
const { reportProblems } = require('../util/problems');
const { holdRunLock } = require('../session/run-lock');
const { reclaimKilledRuns } = require('../reclaim');
const { pairedRatio, pairsNeeded, regressed } = require('./stats');
const { mean } = require('../stats');
const { AB_FIGURES, windowFigures } = require('./figures');
const { writeAbReport } = require('./report');
const { profileOutcome } = require('../measure/profile');
const { profileDiff, writeDiffFlamegraph } = require('../report/profile-diff');

/** Resolves both scenarios; the session's own keys (AB_*, MAX_REGRESSION_PCT, REPORTS_DIR, ARCHIVE) come from A. */
function resolveBoth(fileA, fileB, env) {
  const a = resolveScenario(fileA, { env });
  const b = resolveScenario(fileB, { env });
  const errors = [...a.errors.map((e) => `A: ${e}`), ...b.errors.map((e) => `B: ${e}`)];
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

/** One side of the session: its scenario, folders, run record and (once started) measuring context. */
function newSide(key, resolved, { dir, runId }) {
  const reportDir = path.join(dir, key.toLowerCase());
  fs.mkdirSync(reportDir, { recursive: true });
  return {
    key,
    s: resolved.scenario,
    sources: resolved.sources,
    reportDir,
    workDir: fs.mkdtempSync(path.join(os.tmpdir(), `chainperf-ab-${runId}-${key}-`)),
    run: { phase: 'starting', warnings: [] },
    ctx: null,
    stack: null,
  };
}

/** Node CPU seconds of the side not under load, read now (null when its source cannot be read at any instant). */
function partnerCpu(side) {
  const cpu = side.stack && side.stack.cpu;
  if (!cpu || cpu.sampled || cpu.readEdge) return null;
  return cpu.read();
}

/** Measures one window of `side` (idle baseline first, as in a run) while `other` stays up, idle. */
async function measureSide(side, other, name, signal) {
  const { s } = side;
  const idle = s.IDLE_S > 0 ? await measureIdle(side.stack, s.IDLE_S, signal) : null;
  const p0 = await partnerCpu(other);
  const w = await windowWithFigures(side.ctx, name, idle);
  const p1 = await partnerCpu(other);
  const stalled = judgeStalls([w], side.run.warnings, s.STALL_S);
  if (stalled) throw new Error(`${side.key}, ${name}: ${stalled}`); // a frozen node's window would look healthy
  const seconds = (w.window.end_ms - w.window.start_ms) / 1000;
  return {
    window: w.window,
    idle,
    node: w.node,
    generator: w.generator,
    figures: w.figures,
    compared: windowFigures(w),
    // What the idle partner node spent meanwhile on the same machine: not in this window's figure, but it shares the
    // cores.
    partner_cpu_s_per_s: p0 && p1 ? Number(((p1.total_s - p0.total_s) / seconds).toFixed(6)) : null,
  };
}

/** The figures over the pairs so far: ratio, interval, verdict for each. */
function summarizePairs(pairs, stage1) {
  const out = {};
  for (const key of Object.keys(AB_FIGURES)) {
    // CPU per request chose the number of pairs: its interval is the two-stage one. The others' are over all pairs.
    const r = pairedRatio(
      pairs.map((p) => ({ a: p.a.compared[key], b: p.b.compared[key] })),
      key === 'cpu_ms_per_request' ? { stage1 } : {},
    );
    out[key] = {
      ...r,
      a_mean: meanOf(pairs.map((p) => p.a.compared[key])),
      b_mean: meanOf(pairs.map((p) => p.b.compared[key])),
    };
  }
  return out;
}

function meanOf(xs) {
  const v = xs.filter((x) => x !== null);
  return v.length ? mean(v) : null;
}

const fmtRatio = (r) =>
  r.ratio === null
    ? 'n/a'
    : `${r.ratio.toFixed(4)}${r.ci95 ? ` [${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}] (±${r.halfwidth_pct.toFixed(1)}%)` : ''}`;

const cpuPairs = (pairs) =>
  pairs.map((p) => ({ a: p.a.compared.cpu_ms_per_request, b: p.b.compared.cpu_ms_per_request }));

/**
 * Pairs of windows, ABBA, until as many as the first AB_MIN_PAIRS pairs' spread says the target needs
 * (Stein's two-stage rule, see stats.js), or AB_MAX_PAIRS, or AB_MAX_S. Fills ab.pairs, ab.progress, ab.pairs_needed.
 */
async function measurePairs(ab, A, B, signal) {
  const set = ab.settings;
  const t0 = Date.now();
  let need = null;
  for (let k = 1; k <= set.max_pairs; k++) {
    const order = k % 2 ? [A, B] : [B, A];
    const pair = { pair: k, order: order.map((x) => x.key).join('') };
    for (const [i, side] of order.entries()) {
      pair[side.key.toLowerCase()] = await measureSide(side, order[1 - i], `pair${k}-${side.key}`, signal);
      log(`pair ${k} ${side.key}: ${fmtHeadline(pair[side.key.toLowerCase()].figures)}`);
    }
    ab.pairs.push(pair);
    if (k === set.min_pairs) {
      need = pairsNeeded(cpuPairs(ab.pairs), set.min_pairs, set.target_pct);
      ab.pairs_needed = need;
      if (need !== null)
        log(
          `the spread of the first ${k} pairs asks for ${need} pairs in all for ±${set.target_pct}%${need > set.max_pairs ? ` (more than AB_MAX_PAIRS=${set.max_pairs}: the interval will be wider)` : ''}`,
        );
    }
    const cpu = pairedRatio(cpuPairs(ab.pairs), { stage1: set.min_pairs });
    const elapsed = (Date.now() - t0) / 1000;
    ab.progress.push({ pairs: k, ratio: cpu.ratio, ci95: cpu.ci95, elapsed_s: Math.round(elapsed) });
    log(
      `${k}${need ? ` of ${Math.min(need, set.max_pairs)}` : ''} pairs in ${(elapsed / 60).toFixed(1)} min: B/A CPU per request ${fmtRatio(cpu)}, target ±${set.target_pct}%`,
    );
    if (need !== null && k >= need)
      return `the ${need} pairs the first ${set.min_pairs} asked for to reach ±${set.target_pct}% are measured`;
    if (elapsed + elapsed / k > set.max_s) return `AB_MAX_S=${set.max_s}: another pair would end after it`;
  }
  return `AB_MAX_PAIRS=${set.max_pairs} reached`;
}

/**
 * The regression gate: figures where B is worse than A by more than MAX_REGRESSION_PCT with the whole interval beyond.
 */
function regressionGate(figures, maxPct) {
  if (maxPct === null || maxPct === undefined) return null;
  const failed = Object.entries(figures)
    .filter(([key, r]) => regressed(r, maxPct, AB_FIGURES[key].higherIsWorse))
    .map(
      ([key, r]) =>
        `${key}: B/A ${r.ratio.toFixed(4)}, 95% [${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}] beyond ${maxPct}% worse`,
    );
  return { max_regression_pct: maxPct, pass: failed.length === 0, failed };
}

function sideRecord(side) {
  return {
    scenario_file: side.file,
    scenario_name: side.s.NAME,
    client: side.stack ? side.stack.client : { name: side.s.CLIENT, version: null },
    node: side.run.node || null,
    sync: side.run.sync || null,
    warnings: side.run.warnings,
    ...(side.profile ? { profile: side.profile } : {}),
    provenance: provenance({
      scenario: redactScenario(side.s),
      sources: side.sources,
      client: side.stack ? side.stack.client : { name: side.s.CLIENT },
      runtime: side.s.RUNTIME,
    }),
  };
}

/**
 * One parameter pool for both sides where their chains allow it: every list keeps the items both pools hold
 * (in A's order), every other field must be equal. Two dev chains made by the same steps differ only in a
 * block or two of their head; without this, one side would ask for a block the other does not have in its
 * pool, and the windows would not send the same requests. Returns null (each side keeps its own pool) when a
 * field differs or a list would be left empty.
 */
function commonPool(a, b) {
  const out = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const [x, y] = [a[key], b[key]];
    if (Array.isArray(x) && Array.isArray(y)) {
      const inB = new Set(y.map((v) => JSON.stringify(v)));
      out[key] = x.filter((v) => inB.has(JSON.stringify(v)));
      if (x.length && !out[key].length) return null;
    } else if (JSON.stringify(x) === JSON.stringify(y)) {
      out[key] = x;
    } else if (key === 'head') {
      out[key] = Math.min(x, y);
    } else {
      return null;
    }
  }
  return out;
}

/** Gives both sides the common pool (their params.json, which every window's generator reads), or says why not. */
function shareParameterPool(A, B, warnings) {
  const files = [A, B].map((x) => path.join(x.reportDir, 'params.json'));
  const [a, b] = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  const pool = commonPool(a, b);
  if (!pool) {
    warnings.push(
      "the two chains' parameter pools differ beyond their heads: each side draws from its own pool (a/params.json, b/params.json), with the same seed",
    );
    return false;
  }
  for (const f of files) fs.writeFileSync(f, `${JSON.stringify(pool)}\n`);
  log(
    `one parameter pool for both sides: the items both chains hold${pool.blocks ? ` (${pool.blocks.length} blocks)` : ''}`,
  );
  return true;
}

/**
 * Starts both nodes (each synced and harvested), then warms both up back to back, so neither cools while the other
 * starts.
 */
async function startBoth(sides, { runId, signal, controller }) {
  for (const side of sides) {
    log(
      `${side.key}: ${side.file} (${side.s.CHAIN}/${side.s.CLIENT}, RUNTIME=${side.s.RUNTIME}, WORKLOAD=${side.s.WORKLOAD})`,
    );
    side.ctx = await prepareNode(side.s, {
      run: side.run,
      runId: `${runId}-${side.key.toLowerCase()}`,
      workDir: side.workDir,
      reportDir: side.reportDir,
      signal,
      warm: false,
      onStarting: (x) => {
        side.starting = x;
      },
      onStack: (x) => {
        side.stack = x;
      },
      onNodeExit: (info) =>
        controller.abort(
          new Error(
            `node ${side.key} ${info.restarted ? 'restarted' : 'exited'} during ${side.run.phase} (${info.signal ? `signal ${info.signal}` : `status ${info.code}`}); see ${side.key.toLowerCase()}/node.log`,
          ),
        ),
    });
  }
  return sides;
}

/** Both sides warmed up back to back with the same workload, after the pool is settled. */
async function warmBoth(sides, signal) {
  for (const side of sides) {
    side.run.phase = 'warmup';
    await warmUp(side.s, side.stack, {
      spec: side.ctx.spec,
      workDir: side.workDir,
      signal,
      log,
      name: `warmup-${side.key}`,
    });
  }
}

/** NODE_PROFILE=cpu: each side's windows summarized (all of them merged), kept in its folder. */
function summarizeSideProfile(side) {
  const hooks = side.stack && side.stack.windowHooks;
  if (!hooks || !hooks.profiler) return;
  const { profile, warnings } = profileOutcome(hooks, side.reportDir);
  side.profile = profile;
  side.run.warnings.push(...warnings);
}

/** With profiles on both sides: the functions whose share changed most, and a differential flame graph in dir. */
function profileDifference(A, B, dir) {
  const diff = profileDiff(A.reportDir, { profile: A.profile }, B.reportDir, { profile: B.profile });
  if (!diff) return null;
  const fg = writeDiffFlamegraph(diff, dir);
  if (fg.file) diff.flamegraph = fg.file;
  else diff.flamegraph_error = fg.error;
  return diff;
}

/** Tears both sides down and keeps their node logs and artillery logs. */
async function teardownBoth(sides) {
  for (const side of sides) {
    summarizeSideProfile(side);
    if (side.stack) {
      log(`${side.key}: tearing down`);
      await side.stack.teardown();
      for (const e of side.stack.teardownErrors || []) side.run.warnings.push(`teardown: ${e}`);
      if (side.stack.nodeLog && fs.existsSync(side.stack.nodeLog))
        copyTailScrubbed(side.stack.nodeLog, path.join(side.reportDir, 'node.log'), 400);
    }
    try {
      for (const f of fs.readdirSync(side.workDir).filter((x) => /\.artillery\.log$/.test(x))) {
        copyScrubbed(path.join(side.workDir, f), path.join(side.reportDir, f));
      }
    } finally {
      fs.rmSync(side.workDir, { recursive: true, force: true }); // it holds the generator's spec, with the node's URL
    }
  }
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
  const ab = {
    schema_version: 1,
    kind: 'ab',
    run_id: runId,
    status: 'running',
    started_at: new Date().toISOString(),
    ended_at: null,
    settings: {
      target_pct: sa.AB_TARGET_PCT,
      min_pairs: sa.AB_MIN_PAIRS,
      max_pairs: sa.AB_MAX_PAIRS,
      max_s: sa.AB_MAX_S,
      max_regression_pct: sa.MAX_REGRESSION_PCT,
      order: 'ABBA',
      interval:
        "Student's t on the log of each pair's ratio B/A, 95%; for CPU per request with the spread of the first AB_MIN_PAIRS pairs (Stein's two-stage procedure, which chose the number of pairs)",
    },
    pairs: [],
    progress: [],
    warnings: [],
  };
  log(
    `A/B session ${runId}: A=${fileA}, B=${fileB}; until B/A of CPU per request is within ±${sa.AB_TARGET_PCT}% (at least ${sa.AB_MIN_PAIRS} pairs, at most ${sa.AB_MAX_PAIRS} pairs or ${sa.AB_MAX_S} s)`,
  );
  log(`report folder: ${dir}`);
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
    await startBoth([A, B], { runId, signal, controller });
    ab.shared_pool = shareParameterPool(A, B, ab.warnings);
    await warmBoth([A, B], signal);
    ab.stop_reason = await measurePairs(ab, A, B, signal);
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
  ab.figures = summarizePairs(ab.pairs, ab.settings.min_pairs);
  const cpu = ab.figures.cpu_ms_per_request;
  if (ab.pairs.length && cpu.halfwidth_pct !== null && cpu.halfwidth_pct > ab.settings.target_pct) {
    ab.warnings.push(
      `the interval of B/A for CPU per request is ±${cpu.halfwidth_pct.toFixed(1)}%, wider than the target ±${ab.settings.target_pct}% (${ab.stop_reason || ab.error}): a verdict of "same" means no difference beyond that was found, not that there is none`,
    );
  }
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

module.exports = { runAb, summarizePairs, regressionGate, resolveBoth, commonPool };
