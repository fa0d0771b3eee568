'use strict';
// The verification of a capacity run's choice: the chosen fleet run at the
// target rate behind HAProxy (REPLICAS with the instance's limits), or the
// largest share of it the machine can run, and its figures checked against
// every bound the saturation searches judged by (as judge() in saturation.js
// holds them, so a bound added there is checked here too) and the scenario's
// validate bounds (MAX_CPU_MS_PER_REQUEST, MIN_RPS, ...: the run's verdict).

const path = require('node:path');
const { judge } = require('../saturation');
const { KEYS } = require('../scenario/keys');

/**
 * The environment of the verification run: plan.replicas_run replicas behind HAProxy on plan.cores cores (the
 * replicas share them, each with the profile's memory and disk limits), an open loop at plan.rate_rps, on a network
 * (one network node when the scenario has none: replicas serve one chain through it).
 */
function verifyValues(s, profile, plan) {
  const values = {
    SATURATE: 'no',
    RATE: String(plan.rate_rps),
    REPLICAS: String(plan.replicas_run),
    BALANCER: 'haproxy',
    FAULT: '',
    INSTANCE: profile.shipped ? profile.name : '',
    ...profile.settings,
    CORES: String(plan.cores),
    // the price of what runs: its replicas, each at its share of the instance's cores
    HOURLY_PRICE: String(profile.hourly_price * plan.replicas * plan.share),
  };
  if (!(s.NETWORK_NODES > 0)) values.NETWORK_NODES = '1';
  // MIN_RPS is the fleet's: the share that runs answers its share of it
  if (s.MIN_RPS !== null && s.MIN_RPS !== undefined) values.MIN_RPS = String(s.MIN_RPS * plan.share);
  return values;
}

/**
 * Which of the searches' bounds a measured window fails, each named: the bound (max_p99_ms), its scenario key where
 * one sets it (MAX_P99_MS), its limit and judge()'s reason. Each bound is judged alone, the others loosened, so that
 * any bound judge() knows is named without this module knowing it.
 * @param {{target_rps:number, figures:object}} step
 * @param {object} bounds the searches' (run.json saturation.bounds)
 */
function boundFailures(step, bounds) {
  const names = Object.keys(bounds);
  const loose = Object.fromEntries(names.map((b) => [b, b.startsWith('min_') ? 0 : Infinity]));
  const base = new Set(judge(step, loose));
  const out = [];
  for (const name of names) {
    const own = judge(step, { ...loose, [name]: bounds[name] }).filter((r) => !base.has(r));
    const key = KEYS[name.toUpperCase()] ? name.toUpperCase() : null;
    for (const reason of own) out.push({ bound: name, key, limit: bounds[name], reason });
  }
  return out;
}

/** The headline figures of the verification run, for capacity.json. */
function headline(f) {
  if (!f) return null;
  return {
    rps: f.rps,
    p50_ms: f.latency_ms.p50,
    p99_ms: f.latency_ms.p99,
    error_rate: f.error_rate,
    cpu_ms_per_request: f.cpu_ms_per_request,
  };
}

/** Every check the verification failed: the run itself, each of the searches' bounds, the run's own verdict. */
function failures(run, plan, bounds) {
  const failed = [];
  if (!run || run.status !== 'ok') failed.push(`the verification run failed: ${run ? run.error : 'it did not start'}`);
  if (run && run.figures && bounds)
    for (const x of boundFailures({ target_rps: plan.rate_rps, figures: run.figures }, bounds))
      failed.push(`${x.key || x.bound}=${x.limit}: ${x.reason}`);
  const named = new Set(failed.map((x) => x.split('=')[0]));
  const verdictFailed = (run && run.verdict && run.verdict.failed) || [];
  // validate's own bounds (MAX_CPU_MS_PER_REQUEST, MIN_RPS), each once
  for (const c of verdictFailed) if (!named.has(c.split('=')[0])) failed.push(c);
  return failed;
}

/** The verification's figures and its checks: the run's status, each bound that failed, the run's verdict. */
function verificationOutcome(run, plan, bounds) {
  const fleet = run && run.node && run.node.fleet;
  const failed = failures(run, plan, bounds);
  return {
    status: run ? run.status : 'failed',
    error: (run && run.error) || null,
    figures: headline(run && run.figures),
    balancer_cpu_ms_per_request: fleet && fleet.balancer ? fleet.balancer.cpu_ms_per_request : null,
    failed,
    pass: failed.length === 0,
  };
}

/**
 * Runs the verification through runner (runScenario) into dir/runs; returns its record for capacity.json.
 * @param {object} o {inputs, profile, plan, bounds, dir, env, runner}
 */
async function runVerification({ inputs, profile, plan, bounds, dir, env, runner }) {
  const values = verifyValues(inputs.scenario, profile, plan);
  const name = `${inputs.scenario.NAME}-verify`.replace(/[^A-Za-z0-9_.-]/g, '_');
  const res = await runner(inputs.file, {
    env: { ...env, ...values, NAME: name, REPORTS_DIR: path.join(dir, 'runs'), ARCHIVE: 'none' },
    out: () => {},
    index: false,
  });
  return {
    instance: profile.name,
    ...plan,
    dir: res.reportDir ? path.relative(dir, res.reportDir) : null,
    ...verificationOutcome(res.run, plan, bounds),
  };
}

module.exports = { verifyValues, boundFailures, verificationOutcome, runVerification };
