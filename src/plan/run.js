'use strict';
// Runs a plan unattended: every point, REPETITIONS times, each a full run of
// the base scenario with the point's values. The runs go in rounds: each
// round measures every point once, in a shuffled order (seeded by the plan and
// the round), so a drift of the machine spreads over all points instead of
// landing on whichever point was measured last. The plan's state (plan.json)
// is saved after every run, so running the same plan again after an
// interruption resumes where it stopped: runs already measured are kept.

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { parsePlan, pointEnv } = require('./parse');
const { renderPlanReport } = require('./report');
const { resolveScenario, redactScenario } = require('../scenario/resolve');
const { runScenario, newRunId } = require('../run');
const { archiveGit } = require('../report/archive');
const { writeIndex } = require('../report/index');
const { log } = require('../util/log');
const { seededRandom } = require('../util/random');
const { scrub, scrubDeep } = require('../util/scrub');
const { reportProblems } = require('../util/problems');

/** The point indices in the order of one round: shuffled, the same for the same plan and round. */
function roundOrder(n, fp, round) {
  const random = seededRandom(parseInt(fp.slice(0, 8), 16) + round);
  const order = [...Array(n).keys()];
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * Identifies a plan's content: a folder is resumed only by the same plan.
 * Secret values enter it redacted (a hash of a weak password could be
 * searched for), so a plan whose key was rotated resumes its folder.
 */
function fingerprint(plan) {
  const { base, sweep, repetitions, points } = plan;
  const fixed = redactScenario(plan.fixed);
  return crypto
    .createHash('sha256')
    .update(JSON.stringify({ base, sweep, repetitions, fixed, points: points.map((p) => redactScenario(p.values)) }))
    .digest('hex')
    .slice(0, 16);
}

/** A folder's saved state (plan.json; a capacity run's capacity.json), or null. */
function readState(dir, file = 'plan.json') {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  } catch {
    return null;
  }
}

function saveState(dir, state, file = 'plan.json') {
  const tmp = path.join(dir, `${file}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify(scrubDeep(state), null, 2)}\n`); // plan-level URLs stored scrubbed
  fs.renameSync(tmp, path.join(dir, file)); // never a half-written state
}

/** The newest unfinished folder of the same plan (or capacity run: file names its state), if any. */
function findResumable(planRoot, fp, file = 'plan.json') {
  if (!fs.existsSync(planRoot)) return null;
  const dirs = fs.readdirSync(planRoot).sort().reverse();
  for (const d of dirs) {
    const state = readState(path.join(planRoot, d), file);
    if (state && state.fingerprint === fp && state.status !== 'complete') return path.join(planRoot, d);
  }
  return null;
}

const okRuns = (point) => point.runs.filter((r) => r.status === 'ok').length;

/** The plan's folder and state: the newest unfinished one of the same plan, or a new one. */
function openPlan(file, plan, planRoot, fp) {
  const dir = findResumable(planRoot, fp);
  if (dir) {
    const state = readState(dir);
    const done = state.points.reduce((n, p) => n + okRuns(p), 0);
    log(
      `resuming plan ${plan.name} in ${dir}: ${done} of ${plan.points.length * plan.repetitions} runs already measured`,
    );
    return { dir, state };
  }
  const fresh = path.join(planRoot, newRunId());
  fs.mkdirSync(path.join(fresh, 'runs'), { recursive: true });
  const state = {
    schema_version: 1,
    plan: plan.name,
    file: path.resolve(file),
    base: plan.base,
    sweep: plan.sweep,
    repetitions: plan.repetitions,
    fixed: plan.fixed,
    fingerprint: fp,
    status: 'running',
    started_at: new Date().toISOString(),
    points: plan.points.map((p) => ({ name: p.name, values: p.values, runs: [] })),
  };
  saveState(fresh, state);
  log(`plan ${plan.name}: ${plan.points.length} points x ${plan.repetitions} repetitions, in ${fresh}`);
  return { dir: fresh, state };
}

/**
 * Runs the missing repetitions, round by round; returns true when interrupted.
 * Ctrl-C between two runs stops the plan before the next one and still writes the plan report
 * (during a run, the run's own handler tears it down and the run comes back marked interrupted).
 * save stores the state after each run (plan.json; a capacity run keeps its own file); label starts each log line.
 */
async function runRounds({ plan, state, dir, fp, env, runner, save = () => saveState(dir, state), label = null }) {
  const total = plan.points.length * plan.repetitions;
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Each pass tries every missing repetition once; a failed run is kept in the record, not retried in a loop.
  const missing = state.points.map((p) => plan.repetitions - okRuns(p));
  const rounds = Math.max(0, ...missing);
  outer: for (let round = 0; round < rounds; round++) {
    for (const i of roundOrder(state.points.length, fp, round)) {
      if (missing[i] <= round) continue;
      if (interrupted) break outer;
      const point = state.points[i];
      const done = state.points.reduce((n, p) => n + okRuns(p), 0);
      log(
        `${label || `plan ${plan.name}`}: round ${round + 1} of ${rounds}, point ${i + 1}/${state.points.length} (${Object.entries(
          point.values,
        )
          .map(([a, b]) => `${a}=${b}`)
          .join(' ')}), run ${done + 1} of ${total}`,
      );
      const res = await runner(plan.base, {
        env: { ...pointEnv(env, plan.fixed, plan.points[i]), REPORTS_DIR: path.join(dir, 'runs'), ARCHIVE: 'none' },
        out: () => {},
        index: false,
      });
      const rel = res.reportDir ? path.relative(dir, res.reportDir) : null;
      point.runs.push({
        dir: rel,
        status: res.run ? res.run.status : 'failed',
        error: res.run ? res.run.error : 'the run did not start',
      });
      save();
      if (res.run && res.run.status !== 'ok' && /^interrupted/.test(res.run.error || '')) {
        interrupted = true;
        break outer;
      }
    }
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return interrupted;
}

function archivePlan(reportsRoot, dir, message) {
  try {
    const a = archiveGit({ reportsRoot, reportDir: dir, message, log, extra: ['INDEX.md'] });
    log(`archived in git: ${a.repository} ${a.commit.slice(0, 12)}`);
  } catch (err) {
    log(`ARCHIVE=git failed, the plan report is only on disk: ${err.message}`);
  }
}

/**
 * @param {string} file plan file
 * @param {{env?: object, out?: Function, runner?: Function}} opts runner is runScenario (tests inject their own)
 */
async function runPlan(
  file,
  { env = process.env, out = (l) => process.stdout.write(`${l}\n`), runner = runScenario } = {},
) {
  const { plan, errors } = parsePlan(file, { env });
  if (errors.length) {
    reportProblems('the plan is not valid; nothing was started.', errors);
    return { exitCode: 2 };
  }
  const base = resolveScenario(plan.base, { env: pointEnv(env, plan.fixed, plan.points[0]) }).scenario;
  const planRoot = path.join(path.resolve(base.REPORTS_DIR), 'plans', plan.name);
  const fp = fingerprint(plan);
  const { dir, state } = openPlan(file, plan, planRoot, fp);
  const total = plan.points.length * plan.repetitions;
  const interrupted = await runRounds({ plan, state, dir, fp, env, runner });

  const measured = state.points.reduce((n, p) => n + okRuns(p), 0);
  state.status = interrupted ? 'interrupted' : measured === total ? 'complete' : 'incomplete';
  state.ended_at = new Date().toISOString();
  saveState(dir, state);
  renderPlanReport(dir);
  log(
    `plan ${plan.name} ${state.status}: ${measured} of ${total} runs measured${state.status === 'complete' ? '' : '; run the same command again to resume'}`,
  );
  const reportsRoot = path.resolve(base.REPORTS_DIR);
  writeIndex(reportsRoot);
  if (base.ARCHIVE === 'git' && !interrupted)
    archivePlan(reportsRoot, dir, scrub(`chainperf: plan ${plan.name} ${state.status}: ${measured}/${total} runs`));
  out(dir);
  return { exitCode: state.status === 'complete' ? 0 : 1, planDir: dir, state };
}

module.exports = { runPlan, fingerprint, roundOrder, runRounds, readState, saveState, findResumable, okRuns };
