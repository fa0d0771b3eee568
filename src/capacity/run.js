'use strict';
// ./run.sh capacity <scenario.env>: for a target rate under the scenario's
// bounds, which instance profile, how many replicas, at what monthly cost,
// and does that fleet hold. Each instance's saturated rate comes from
// CAPACITY_REPEATS saturation searches (each a run of its own on a fresh node,
// in rounds across the instances, as a plan's repetitions); the arithmetic
// (arithmetic.js) turns them into replicas and costs and chooses; the choice
// is then run at the target behind HAProxy (verify.js). capacity.json holds
// the state after every run: the same command run again resumes the folder,
// keeping the searches already measured.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { capacityInputs } = require('./inputs');
const { verificationPlan } = require('./arithmetic');
const { analyse } = require('./analyse');
const { runVerification } = require('./verify');
const { renderCapacityReport, EMULATION_NOTE } = require('./report');
const { runRounds, readState, saveState, findResumable, okRuns } = require('../plan/run');
const { runScenario, newRunId } = require('../run');
const { redactScenario } = require('../scenario/resolve');
const { archiveGit } = require('../report/archive');
const { scrub } = require('../util/scrub');
const { log } = require('../util/log');
const { reportProblems } = require('../util/problems');

const STATE_FILE = 'capacity.json';

/** Identifies a capacity run's content: the same scenario, keys, profiles and machine resume the same folder. */
function fingerprint(inputs) {
  const { file, scenario, profiles, cpuCount } = inputs;
  return crypto
    .createHash('sha256')
    .update(
      JSON.stringify({ file, scenario: redactScenario(scenario), profiles: profiles.map((p) => p.settings), cpuCount }),
    )
    .digest('hex')
    .slice(0, 16);
}

/** A new capacity folder's state. */
function newState(inputs, fp) {
  const s = inputs.scenario;
  return {
    schema_version: 1,
    kind: 'capacity',
    name: s.NAME,
    file: inputs.file,
    fingerprint: fp,
    status: 'running',
    started_at: new Date().toISOString(),
    ended_at: null,
    settings: {
      target_rps: s.TARGET_RPS,
      headroom_pct: s.CAPACITY_HEADROOM,
      redundancy: s.REDUNDANCY,
      repeats: s.CAPACITY_REPEATS,
      extrapolate: s.CAPACITY_EXTRAPOLATE,
      instances: s.INSTANCES,
      workload: s.WORKLOAD,
      runtime: s.RUNTIME,
      hours_per_month: 730,
    },
    machine: {
      cores: inputs.cpuCount,
      node_cores: Math.max(1, inputs.cpuCount - 1),
      memory_bytes: os.totalmem(),
      cpu_model: (os.cpus()[0] || {}).model || null,
    },
    emulated: true,
    emulation_note: EMULATION_NOTE,
    searches: inputs.points.map((p) => ({
      name: p.name,
      instance: p.instance,
      values: { instance: p.instance, CORES: p.values.CORES },
      runs: [],
    })),
    bounds: null,
    balancer: null,
    instances: [],
    choice: null,
    verification: null,
    warnings: [],
  };
}

/** The newest unfinished folder of the same capacity run, or a new one. */
function openCapacity(inputs, root, fp) {
  const found = findResumable(root, fp, STATE_FILE);
  if (found) {
    const state = readState(found, STATE_FILE);
    const done = state.searches.reduce((n, p) => n + okRuns(p), 0);
    log(
      `resuming capacity ${state.name} in ${found}: ${done} of ${state.searches.length * state.settings.repeats} searches already measured`,
    );
    return { dir: found, state };
  }
  const dir = path.join(root, newRunId());
  fs.mkdirSync(path.join(dir, 'runs'), { recursive: true });
  const state = newState(inputs, fp);
  saveState(dir, state, STATE_FILE);
  log(
    `capacity ${state.name}: ${inputs.points.length} instance(s) x ${state.settings.repeats} saturation search(es), in ${dir}`,
  );
  return { dir, state };
}

/** Runs the verification of the choice unless the same fleet was verified already; returns true when interrupted. */
async function verifyChoice({ dir, state, inputs, env, runner, save }) {
  const { choice } = state;
  const profile = inputs.profiles.find((p) => p.name === choice.instance);
  const plan = verificationPlan({
    replicas: choice.replicas,
    cores: profile.cores,
    cpuCount: inputs.cpuCount,
    targetRps: inputs.scenario.TARGET_RPS,
  });
  const v = state.verification;
  const interruptedBefore = v && /^interrupted/.test(v.error || '');
  if (
    v &&
    !interruptedBefore &&
    v.instance === choice.instance &&
    v.replicas === plan.replicas &&
    v.rate_rps === plan.rate_rps
  )
    return false;
  log(
    `capacity ${state.name}: verifying ${choice.instance} x ${plan.replicas}: ${plan.mode === 'fleet' ? `the whole fleet at ${plan.rate_rps}/s` : `${plan.replicas_run} of ${plan.replicas} replica(s) on ${plan.cores} core(s) at ${plan.rate_rps}/s, their share of ${inputs.scenario.TARGET_RPS}/s (the whole fleet needs ${plan.machine_cores_needed} cores)`}`,
  );
  state.verification = await runVerification({ inputs, profile, plan, bounds: state.bounds, dir, env, runner });
  save();
  return /^interrupted/.test(state.verification.error || '');
}

/** The folder's status and the exit status: 0 only when complete and the verification held. */
function conclude(state, inputs, interrupted) {
  const missing = state.searches.some((p) => okRuns(p) < state.settings.repeats);
  state.status = interrupted ? 'interrupted' : missing ? 'incomplete' : 'complete';
  state.ended_at = new Date().toISOString();
  const v = state.verification;
  const moved = `the verification ran ${v && v.instance} x ${v && v.replicas}, but with the balancer's share the choice is ${state.choice && state.choice.instance} x ${state.choice && state.choice.replicas}`;
  if (v && state.choice && (v.instance !== state.choice.instance || v.replicas !== state.choice.replicas))
    if (!state.warnings.includes(moved)) state.warnings.push(moved);
  if (state.status !== 'complete')
    log(`capacity ${state.name} ${state.status}: run the same command again to resume it`);
  else if (!state.choice) log(`capacity ${state.name}: no instance could be chosen (see summary.md)`);
  else if (v && v.pass) log(`capacity ${state.name}: ${state.choice.instance} x ${state.choice.replicas} holds`);
  else if (v) log(`capacity ${state.name}: the verification failed: ${v.failed.join('; ')}`);
  return state.status === 'complete' && v && v.pass ? 0 : 1;
}

/** ARCHIVE=git: the capacity folder committed, as a plan's; a failure leaves it on disk and says so. */
function archiveCapacity(s, dir, state) {
  const c = state.choice;
  const v = state.verification;
  const what = c ? `${c.instance} x ${c.replicas}${v ? (v.pass ? ', holds' : ', FAILS') : ''}` : 'no choice';
  try {
    const reportsRoot = path.resolve(s.REPORTS_DIR);
    const message = scrub(`chainperf: capacity ${state.name} for ${state.settings.target_rps}/s: ${what}`);
    const a = archiveGit({ reportsRoot, reportDir: dir, message, log });
    log(`archived in git: ${a.repository} ${a.commit.slice(0, 12)}`);
  } catch (err) {
    log(`ARCHIVE=git failed, the capacity report is only on disk: ${err.message}`);
  }
}

/**
 * @param {string} file the scenario
 * @param {{env?: object, out?: Function, runner?: Function, cpuCount?: number, resolveOpts?: object}} opts runner is
 *   runScenario (tests inject their own), cpuCount the machine's cores, resolveOpts resolveScenario's (tests)
 */
async function runCapacity(
  file,
  {
    env = process.env,
    out = (l) => process.stdout.write(`${l}\n`),
    runner = runScenario,
    cpuCount = os.cpus().length,
    resolveOpts = {},
  } = {},
) {
  const { inputs, errors } = capacityInputs(file, { env, cpuCount, resolveOpts });
  if (errors.length) {
    reportProblems('the capacity run is not valid; nothing was started.', errors);
    return { exitCode: 2 };
  }
  const s = inputs.scenario;
  const fp = fingerprint(inputs);
  const { dir, state } = openCapacity(inputs, path.join(path.resolve(s.REPORTS_DIR), 'capacity', s.NAME), fp);
  const save = () => saveState(dir, state, STATE_FILE);
  state.status = 'running';
  save();
  const plan = {
    name: s.NAME,
    base: inputs.file,
    repetitions: s.CAPACITY_REPEATS,
    fixed: {},
    points: inputs.points.map((p) => ({ name: p.name, values: p.values })),
  };
  const searches = { points: state.searches };
  let interrupted = await runRounds({ plan, state: searches, dir, fp, env, runner, save, label: `capacity ${s.NAME}` });
  analyse(dir, state, inputs);
  // The balancer's share, measured in the verification, may change the choice: the new one is verified in turn.
  for (let k = 0; k < 2 && !interrupted && state.choice; k++) {
    interrupted = await verifyChoice({ dir, state, inputs, env, runner, save });
    analyse(dir, state, inputs);
  }
  const exitCode = conclude(state, inputs, interrupted);
  save();
  renderCapacityReport(dir, state);
  if (s.ARCHIVE === 'git' && state.status === 'complete') archiveCapacity(s, dir, state);
  out(dir);
  return { exitCode, dir, state };
}

module.exports = { runCapacity, fingerprint, STATE_FILE };
