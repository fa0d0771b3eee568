'use strict';
// Saturation search: raise the offered request rate (open loop) step by step
// until p99 latency or the error rate crosses its bound, or the node no longer
// answers the rate offered (or, when the first rate fails, lower it until one
// holds); then bisect between the last rate that held and
// the first that did not. The highest rate that held is the node's sustainable
// rate under these bounds. The search is pure: `measure` runs one step.

/** Defaults for the search when the scenario sets no bound of its own. */
const DEFAULT_BOUNDS = { max_p99_ms: 100, max_error_rate: 0.01, min_achieved_ratio: 0.95 };

/** Whether one measured step holds the bounds, and why not. */
function judge(step, bounds) {
  const f = step.figures;
  const reasons = [];
  if (f.latency_ms.p99 === null || f.latency_ms.p99 > bounds.max_p99_ms)
    reasons.push(
      `p99 ${f.latency_ms.p99 === null ? 'not measured' : `${f.latency_ms.p99.toFixed(1)} ms`} > ${bounds.max_p99_ms} ms`,
    );
  if (f.error_rate === null || f.error_rate > bounds.max_error_rate)
    reasons.push(
      `error rate ${f.error_rate === null ? 'not measured' : f.error_rate.toFixed(4)} > ${bounds.max_error_rate}`,
    );
  if (bounds.max_head_lag_s !== undefined) {
    const lag = f.head_lag_s_max;
    if (lag === null || lag === undefined || lag > bounds.max_head_lag_s)
      reasons.push(
        `head lag ${lag === null || lag === undefined ? 'not measured' : `${lag.toFixed(2)} s`} > ${bounds.max_head_lag_s} s`,
      );
  }
  if (f.rps < bounds.min_achieved_ratio * step.target_rps)
    reasons.push(`answered ${f.rps.toFixed(0)}/s of ${step.target_rps}/s offered`);
  return reasons;
}

/**
 * @param {object} o
 * @param {number} o.start first rate, requests/s
 * @param {number} o.factor growth between steps (> 1)
 * @param {number} o.maxSteps steps of the growing phase
 * @param {number} o.bisect bisection steps after the first failure
 * @param {object} o.bounds {max_p99_ms, max_error_rate, min_achieved_ratio, max_head_lag_s?}
 * @param {(rate:number, k:number) => Promise<{figures:object, generator?:object}>} o.measure
 * @param {Function} [o.log]
 */
async function searchSaturation({ start, factor, maxSteps, bisect, bounds, measure, log = () => {} }) {
  const steps = [];
  const run = async (rate) => {
    const m = await measure(rate, steps.length + 1);
    const step = { target_rps: rate, ...m };
    const reasons = judge(step, bounds);
    const util = m.generator && m.generator.cpu_utilization;
    const row = {
      target_rps: rate,
      achieved_rps: m.figures.rps,
      p99_ms: m.figures.latency_ms.p99,
      error_rate: m.figures.error_rate,
      cpu_ms_per_request: m.figures.cpu_ms_per_request,
      holds: reasons.length === 0,
      reasons,
      generator_cpu_utilization: util === undefined ? null : util,
      generator_limited: util !== undefined && util > 0.9,
      ...(m.node && m.node.fleet ? { fleet: fleetStep(m.node.fleet) } : {}),
    };
    steps.push({ ...row, figures: m.figures, window: m.window });
    log(
      `saturation step ${steps.length}: ${rate}/s offered, ${m.figures.rps.toFixed(0)}/s answered, p99 ${row.p99_ms === null ? 'n/a' : row.p99_ms.toFixed(1)} ms: ${row.holds ? 'holds' : reasons.join('; ')}`,
    );
    return row.holds;
  };
  let good = null;
  let bad = null;
  let rate = start;
  for (let k = 0; k < maxSteps; k++) {
    if (await run(rate)) {
      good = rate;
      rate = Math.round(rate * factor);
    } else {
      bad = rate;
      break;
    }
  }
  // The first rate already failed: come down by the same factor until one holds,
  // so that a node slower than SATURATE_START_RPS still gets an answer.
  for (let k = 1; k < maxSteps && good === null && bad > 1; k++) {
    const lower = Math.max(1, Math.round(bad / factor));
    if (await run(lower)) good = lower;
    else bad = lower;
  }
  for (let k = 0; k < bisect && good !== null && bad !== null && bad - good > 1; k++) {
    const mid = Math.round(Math.sqrt(good * bad));
    if (mid <= good || mid >= bad) break;
    if (await run(mid)) good = mid;
    else bad = mid;
  }
  const best = good === null ? null : steps.filter((s) => s.holds && s.target_rps === good).pop();
  return {
    max_sustainable_rps: best ? best.achieved_rps : null,
    max_sustainable_target_rps: good,
    first_failing_rps: bad,
    reached_limit: bad !== null,
    cpu_ms_per_request_at_max: best ? best.cpu_ms_per_request : null,
    bounds,
    steps,
    best,
  };
}

/** REPLICAS: what a step did to the fleet: how evenly it spread, what the balancer cost, replicas lost. */
function fleetStep(f) {
  return {
    share_max_over_min: f.spread ? f.spread.share_max_over_min : null,
    cpu_per_request_max_over_min: f.spread ? f.spread.cpu_per_request_max_over_min : null,
    balancer_cpu_ms_per_request: f.balancer ? f.balancer.cpu_ms_per_request : null,
    replicas_lost: (f.replicas_lost || []).length,
  };
}

/** Cost of a million requests at a rate, for an hourly price. */
function costPerMillion(hourlyPrice, rps) {
  if (hourlyPrice === null || hourlyPrice === undefined || !(rps > 0)) return null;
  return (hourlyPrice / (rps * 3600)) * 1e6;
}

module.exports = { searchSaturation, judge, costPerMillion, DEFAULT_BOUNDS };
