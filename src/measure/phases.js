'use strict';
// What the measure phase of a run can be: one window or REPEAT windows, a
// saturation search, and the per-method profile after either. Each returns
// the window the report's top-level figures come from (`chosen`) and what
// goes into run.json beside them (`extra`).

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { measureWorkload } = require('./window');
const { measureIdle } = require('./edges');
const { startupSOf } = require('../workload/artillery');
const { partialFigures } = require('./partial');
const { computeFigures } = require('../figures');
const { writesFigures } = require('../workload/write-figures');
const { summarizeRepetitions, medianIndex, flagOutliers } = require('../repetitions');
const { searchSaturation, costPerMillion, DEFAULT_BOUNDS } = require('../saturation');
const { log } = require('../util/log');
const { coldRestart } = require('./cold');
const { ioFigures } = require('./io');
const { releaseGenerator } = require('./run-generator');
const { keepUpFigures } = require('./keep-up');

function fmtHeadline(f) {
  const net = f.cpu_ms_per_request_net === null ? '' : ` (${f.cpu_ms_per_request_net.toFixed(3)} net)`;
  return `${f.cpu_ms_per_request === null ? 'n/a' : f.cpu_ms_per_request.toFixed(3)} ms CPU/request${net}, ${f.rps.toFixed(0)} requests/s, p99 ${f.latency_ms.p99 === null ? 'n/a' : f.latency_ms.p99.toFixed(2)} ms`;
}

/**
 * A measured window with its figures: CPU and requests, disk I/O, writes and subscriptions where the workload has them.
 */
function withFigures(m, idle, cold, idleChain = null) {
  if (cold) {
    m.node.cold_restart_s = Number(cold.seconds.toFixed(3));
    m.node.cold_evicted = cold.evicted;
    m.node.cold_settle = cold.settle;
  }
  const { window, cpu, samples, cpuWindow } = m;
  const computed = computeFigures({ window, cpu, idle, samples, cpuWindow, idleChain });
  const figures = { ...computed, ...ioFigures(m.node, computed.rps), ...keepUpFigures(m.node) };
  const writes = writesFigures(m);
  if (writes) figures.writes = writes; // chain-neutral transaction figures of a write workload
  if (m.subscriptions) figures.subscriptions = m.subscriptions;
  return { ...m, idle, figures };
}

/**
 * One measured window with its figures; `over` changes scenario keys for it, `mix` its methods, and `last` says it is
 * the run's last window (its kept generator may end once the window's samples are in).
 * A window whose load generator started after the window opened (artillery
 * needed longer than its start-up allowance on a busy machine) measured no
 * load at its start: it is measured again with twice the allowance, twice at most.
 */
async function windowWithFigures(ctx, name, idle, { over = {}, mix = undefined, last = false, sliced = null } = {}) {
  const cold = ctx.s.COLD === 'yes' ? await coldRestart(ctx) : null;
  let startupS = ctx.startupS || startupSOf(ctx.s);
  for (let attempt = 1; ; attempt++) {
    try {
      const mayMeasureAgain = !sliced && attempt <= 2;
      const o = { ...ctx, s: { ...ctx.s, ...over }, name, mix, startupS, last, sliced, mayMeasureAgain };
      const m = await measureWorkload(o).catch((err) => {
        if (!err.lateStart) partialFigures(err, idle); // a window cut short keeps its figures up to the failure
        throw err;
      });
      return withFigures(m, idle, cold, ctx.idleChain || null);
    } catch (err) {
      // a window of slices (sliced: an interleaved A/B pair's) is measured again with the other side's, by the caller
      if (!err.lateStart || sliced || attempt > 2 || (ctx.signal && ctx.signal.aborted)) throw err;
      const w = `${name}: ${err.message}; measured again with ${startupS * 2} s for the generator to start`;
      log(w);
      if (ctx.warnings) ctx.warnings.push(w);
      startupS *= 2;
      ctx.startupS = startupS; // later windows of this run start with the allowance that worked
    }
  }
}

/** A shallow copy of o without key. */
function omit(o, key) {
  const copy = { ...o };
  delete copy[key];
  return copy;
}

/** Drops the kernel's page cache (DROP_CACHES=yes); a failure is a warning, not the end of the run. */
function dropPageCache(warnings) {
  try {
    execFileSync('sync');
    fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
    log('dropped the page cache');
  } catch (err) {
    const w = `DROP_CACHES=yes but the page cache could not be dropped (${err.code || err.message}): the window ran warm`;
    if (!warnings.includes(w)) warnings.push(w);
  }
}

/** REPEAT windows on the warm stack; the report's figures are the median repetition's. */
async function measureRepeated(ctx) {
  const { s } = ctx;
  const reps = [];
  const keep = (x) => ({ window: x.window, idle: x.idle, node: x.node, generator: x.generator, figures: x.figures });
  const mode = ctx.repeatMode || null; // startRunGenerator's
  try {
    for (let r = 1; r <= s.REPEAT; r++) {
      const idle = r === 1 ? ctx.idle : s.IDLE_S > 0 ? await measureIdle(ctx.stack, s.IDLE_S, ctx.signal) : null;
      if (s.DROP_CACHES === 'yes') dropPageCache(ctx.warnings);
      // the last: its kept generator may end once its samples are in (measureWorkload)
      reps.push(await windowWithFigures(ctx, s.REPEAT > 1 ? `rep${r}` : 'measure', idle, { last: r === s.REPEAT }));
      if (s.REPEAT > 1) log(`repetition ${r} of ${s.REPEAT}: ${fmtHeadline(reps[r - 1].figures)}`);
    }
  } catch (err) {
    // The repetitions measured before the failure go into the failed report.
    if (reps.length) err.partial = { repetitions: reps.map(keep), repetitions_generator: mode };
    throw err;
  } finally {
    await releaseGenerator(ctx);
  }
  if (s.REPEAT === 1) return { chosen: reps[0], extra: mode ? { window_generator: mode } : {} };
  const outliers = flagOutliers(reps);
  for (const o of outliers)
    ctx.warnings.push(
      `repetition ${o.repetition} is an outlier (${(o.deviation * 100).toFixed(1)}% from the median CPU time per request): ${o.reasons.join('; ')}`,
    );
  return {
    chosen: reps[medianIndex(reps)],
    extra: {
      repetitions_generator: mode,
      repetitions: reps.map(keep),
      summary: summarizeRepetitions(reps),
      outliers,
    },
  };
}

/**
 * The saturation search; the report's figures are those of the highest rate that held (the last step when none did).
 */
async function measureSaturation(ctx) {
  const { s } = ctx;
  const steps = [];
  const result = await searchSaturation({
    start: s.SATURATE_START_RPS,
    factor: s.SATURATE_FACTOR,
    maxSteps: s.SATURATE_MAX_STEPS,
    bisect: s.SATURATE_BISECT,
    bounds: {
      max_p99_ms: s.MAX_P99_MS ?? DEFAULT_BOUNDS.max_p99_ms,
      max_error_rate: s.MAX_ERROR_RATE ?? DEFAULT_BOUNDS.max_error_rate,
      min_achieved_ratio: DEFAULT_BOUNDS.min_achieved_ratio,
      ...(s.MAX_HEAD_LAG_S !== null && s.MAX_HEAD_LAG_S !== undefined ? { max_head_lag_s: s.MAX_HEAD_LAG_S } : {}),
    },
    measure: async (rate, k) => {
      try {
        steps.push({
          ...(await windowWithFigures(ctx, `step${k}`, ctx.idle, {
            over: { RATE: rate, RAMP_S: 0, DURATION_S: s.SATURATE_STEP_S },
          })),
          target_rps: rate,
        });
      } catch (err) {
        // The steps measured before the failure go into the failed report.
        if (steps.length)
          err.partial = {
            saturation_steps: steps.map((x) => ({ target_rps: x.target_rps, window: x.window, figures: x.figures })),
          };
        throw err;
      }
      return steps[steps.length - 1];
    },
    log,
  }).finally(() => releaseGenerator(ctx));
  if (!result.reached_limit)
    ctx.warnings.push(
      `the saturation search stopped after ${s.SATURATE_MAX_STEPS} steps without crossing a bound: the node's limit is above ${result.max_sustainable_target_rps}/s`,
    );
  if (result.steps.some((x) => !x.holds && x.generator_limited))
    ctx.warnings.push(
      "a failing saturation step had the load generator over 90% busy: the limit found may be the generator's (try GENERATOR=lean)",
    );
  log(
    result.max_sustainable_rps === null
      ? `saturation: even ${Math.min(...result.steps.map((x) => x.target_rps))}/s did not hold`
      : `saturation: ${result.max_sustainable_rps.toFixed(0)} requests/s sustainable at ${result.cpu_ms_per_request_at_max.toFixed(3)} ms CPU/request`,
  );
  return {
    chosen: steps[result.best ? result.steps.indexOf(result.best) : steps.length - 1],
    extra: {
      saturation: {
        ...omit(result, 'best'),
        steps: result.steps.map((row) => omit(row, 'figures')), // each step's full figures stay out of run.json
        cost_per_million_at_max: costPerMillion(s.HOURLY_PRICE, result.max_sustainable_rps),
        generator: ctx.repeatMode || null,
      },
    },
  };
}

/**
 * PROFILE=methods: each method of the mix alone in its own window, heaviest
 * weight first, on the warm node. Net figures use the run's idle baseline.
 */
async function profileMethods(ctx) {
  const out = {};
  const methods = Object.keys(ctx.mix).sort((a, b) => ctx.mix[b] - ctx.mix[a]);
  for (const [i, method] of methods.entries()) {
    log(`profile: ${method} (${i + 1} of ${methods.length})`);
    const w = await windowWithFigures(ctx, `method-${method}`, ctx.idle, {
      over: { DURATION_S: ctx.s.PROFILE_DURATION_S, SHAPE: 'steady' },
      mix: { [method]: 1 },
    });
    const f = w.figures;
    out[method] = {
      window: w.window,
      requests_ok: f.requests_ok,
      requests_failed: f.requests_failed,
      cpu_ms_per_request: f.cpu_ms_per_request,
      cpu_ms_per_request_net: f.cpu_ms_per_request_net,
      rps: f.rps,
      latency_ms: f.latency_ms,
      generator_cpu_utilization: w.generator.cpu_utilization === undefined ? null : w.generator.cpu_utilization,
    };
    log(`profile: ${method}: ${fmtHeadline(f)}`);
  }
  return out;
}

module.exports = {
  measureRepeated,
  measureSaturation,
  profileMethods,
  fmtHeadline,
  windowWithFigures,
};
