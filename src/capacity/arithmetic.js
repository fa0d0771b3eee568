// @ts-check
'use strict';
// A capacity run's arithmetic, pure: from each instance's measured saturation
// searches to the replicas a target rate needs, what they cost a month, the
// cheapest choice and its runner-up (a tie called a tie), the linear
// extrapolation of an instance larger than the machine, the share of a fleet
// the machine can run, and the cost curves of the chart. No I/O here: the
// runner (run.js) reads the runs and hands their figures in.

const { summarize } = require('../stats');
const { costPerMillion } = require('../saturation');

/** The month capacity prices: 730 hours (365 days x 24 / 12). */
const HOURS_PER_MONTH = 730;
/** A ratio this close above a whole number is that number (0.7 x 200 / 140 is 1.0000000000000002). */
const EPS = 1e-9;

/**
 * Replicas for a target rate: each serves at most saturated x (1 - headroom); N+1 adds one.
 * @returns {{usable_rps:number, needed:number, replicas:number}|null} null when nothing was sustainable
 */
function replicasFor({ targetRps, saturatedRps, headroomPct, redundancy }) {
  if (!(saturatedRps > 0) || !(targetRps > 0)) return null;
  const usable = saturatedRps * (1 - headroomPct / 100);
  const needed = Math.max(1, Math.ceil(targetRps / usable - EPS));
  return { usable_rps: usable, needed, replicas: needed + (redundancy === 'N+1' ? 1 : 0) };
}

/** What replicas cost a month at an hourly price. */
const monthlyCost = (replicas, hourlyPrice) => replicas * hourlyPrice * HOURS_PER_MONTH;

/**
 * The balancer's share of a month: its measured CPU per request at the target rate, in cores, priced at the
 * instance's price per core-hour. Null when the balancer's CPU was not measured.
 */
function balancerShare({ targetRps, cpuMsPerRequest, hourlyPrice, cores }) {
  if (cpuMsPerRequest === null || cpuMsPerRequest === undefined || !(cores > 0)) return null;
  const busy = (targetRps * cpuMsPerRequest) / 1000; // CPU seconds per second: cores kept busy
  const perCoreHour = hourlyPrice / cores;
  return { cores: busy, price_per_core_hour: perCoreHour, monthly: busy * perCoreHour * HOURS_PER_MONTH };
}

/** Cost of a million requests served at the target rate by a fleet costing `monthly` a month. */
const fleetCostPerMillion = (monthly, targetRps) => costPerMillion(monthly / HOURS_PER_MONTH, targetRps);

/**
 * Linear extrapolation of an instance with more cores than were measured: each measured rate times to/from.
 * @returns {{method:'linear', measured_cores:number, cores:number, factor:number, values:number[],
 *   measured:number[]}}
 */
function extrapolateLinear(measured, fromCores, toCores) {
  const factor = toCores / fromCores;
  return {
    method: 'linear',
    measured_cores: fromCores,
    cores: toCores,
    factor,
    values: measured.map((x) => x * factor),
    measured: [...measured],
  };
}

/** The saturated rate over the searches: n, mean, 95% interval (null from one search), the values. */
function rateSummary(values) {
  const s = summarize(values);
  return { n: s.n, mean: s.mean, ci95: s.ci95, values: [...values] };
}

/** Monthly cost of the replicas at each end of the rate's interval: [at its high end, at its low end]. */
function costRange({ ci95, targetRps, headroomPct, redundancy, hourlyPrice }) {
  if (!ci95) return null;
  const at = (rate) => {
    const r = replicasFor({ targetRps, saturatedRps: rate, headroomPct, redundancy });
    return r ? monthlyCost(r.replicas, hourlyPrice) : Infinity;
  };
  return [at(ci95[1]), at(ci95[0])];
}

const mean = (xs) => {
  const ok = xs.filter((x) => typeof x === 'number' && Number.isFinite(x));
  return ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : null;
};

/**
 * One instance's row: its saturated rate (extrapolated when asked), the replicas for the target, their cost.
 * @param {object} inst {name, cores, memory_mb, hourly_price, measured_cores?}
 * @param {object} m {rates, p50s, p99s, cpus, limit_reached} from the searches that ended ok
 * @param {object} o {targetRps, headroomPct, redundancy, balancerCpuMs}
 */
function instanceRow(inst, m, o) {
  const extrapolated =
    inst.measured_cores && inst.measured_cores < inst.cores
      ? extrapolateLinear(m.rates, inst.measured_cores, inst.cores)
      : null;
  const rate = rateSummary(extrapolated ? extrapolated.values : m.rates);
  const row = {
    instance: inst.name,
    cores: inst.cores,
    memory_mb: inst.memory_mb,
    hourly_price: inst.hourly_price,
    status: extrapolated ? 'extrapolated' : 'measured',
    saturated_rps: { ...rate, limit_reached: m.limit_reached },
    p50_ms: mean(m.p50s),
    p99_ms: mean(m.p99s),
    cpu_ms_per_request: mean(m.cpus),
    extrapolated: extrapolated && {
      method: extrapolated.method,
      measured_cores: extrapolated.measured_cores,
      cores: extrapolated.cores,
      factor: extrapolated.factor,
      measured_rps: rateSummary(m.rates), // the measured points the extrapolated rate came from
    },
    ...costs(inst, rate, o),
  };
  if (!(rate.mean > 0)) row.status = 'no-rate';
  return row;
}

/** The cost columns of a row: replicas, their month, the balancer's share, the total, per million, the range. */
function costs(inst, rate, { targetRps, headroomPct, redundancy, balancerCpuMs }) {
  const r = replicasFor({ targetRps, saturatedRps: rate.mean, headroomPct, redundancy });
  const lb = balancerShare({
    targetRps,
    cpuMsPerRequest: balancerCpuMs,
    hourlyPrice: inst.hourly_price,
    cores: inst.cores,
  });
  const fleet = r ? monthlyCost(r.replicas, inst.hourly_price) : null;
  const total = fleet === null ? null : fleet + (lb ? lb.monthly : 0);
  return {
    usable_rps: r ? r.usable_rps : null,
    replicas_needed: r ? r.needed : null,
    replicas: r ? r.replicas : null,
    replicas_monthly_cost: fleet,
    balancer_monthly_cost: r && lb ? lb.monthly : null,
    monthly_cost: total,
    cost_per_million: total === null ? null : fleetCostPerMillion(total, targetRps),
    cost_per_million_at_saturation: costPerMillion(inst.hourly_price, rate.mean),
    monthly_cost_range: r
      ? costRange({ ci95: rate.ci95, targetRps, headroomPct, redundancy, hourlyPrice: inst.hourly_price })
      : null,
  };
}

const overlaps = (a, b) => a[0] <= b[1] && b[0] <= a[1];

/**
 * The cheapest instance with its fleet, the runner-up, the margin between them, and the tie rule: two instances
 * tie when their monthly costs are equal, or when the costs their saturated rates' 95% intervals allow overlap.
 * With one search an instance has no interval: no tie or no-tie is called then (tie null).
 */
function choose(rows) {
  const eligible = rows
    .filter((r) => (r.status === 'measured' || r.status === 'extrapolated') && r.monthly_cost !== null)
    .sort((a, b) => a.monthly_cost - b.monthly_cost || a.instance.localeCompare(b.instance));
  if (!eligible.length) return null;
  const [best, next] = eligible;
  const pick = (r) => ({ instance: r.instance, replicas: r.replicas, monthly_cost: r.monthly_cost });
  if (!next) return { ...pick(best), runner_up: null, margin: null, margin_pct: null, rates_overlap: null, tie: null };
  const margin = next.monthly_cost - best.monthly_cost;
  const [ia, ib] = [best.saturated_rps.ci95, next.saturated_rps.ci95];
  const ratesOverlap = ia && ib ? overlaps(ia, ib) : null;
  const [ca, cb] = [best.monthly_cost_range, next.monthly_cost_range];
  const tie = margin <= EPS * Math.max(1, best.monthly_cost) ? true : ca && cb ? overlaps(ca, cb) : null;
  return {
    ...pick(best),
    runner_up: pick(next),
    margin,
    margin_pct: best.monthly_cost > 0 ? (margin / best.monthly_cost) * 100 : null,
    rates_overlap: ratesOverlap,
    tie,
  };
}

/**
 * Which part of a fleet the machine can run: whole when its replicas' cores and the load generator's fit, else the
 * largest number of replicas that fit (at least one, on the cores the machine gives a node), at their share of the
 * target; an instance larger than the machine runs on the node's cores at that share scaled by cores.
 */
function verificationPlan({ replicas, cores, cpuCount, targetRps }) {
  const room = Math.max(1, cpuCount - 1); // the load generator keeps a core
  const perReplica = Math.min(cores, room);
  const run = Math.min(replicas, Math.floor(room / perReplica));
  const share = (run / replicas) * (perReplica / cores);
  return {
    mode: run === replicas && perReplica === cores ? 'fleet' : 'share',
    replicas,
    replicas_run: run,
    cores_per_replica: perReplica,
    cores: run * perReplica,
    share,
    rate_rps: Math.max(1, Math.ceil(targetRps * share - EPS)),
    machine_cores_needed: replicas * cores + 1,
  };
}

/**
 * A row's monthly cost against the target rate, 0 to xMax, as the exact steps of its replicas (the balancer's share,
 * when measured, a slope on them): [x, cost] points for a line chart.
 */
function costCurve(row, { xMax, redundancy, balancerCpuMs }) {
  if (!(row.usable_rps > 0)) return [];
  const extra = redundancy === 'N+1' ? 1 : 0;
  const lb = (x) => {
    const s = balancerShare({
      targetRps: x,
      cpuMsPerRequest: balancerCpuMs,
      hourlyPrice: row.hourly_price,
      cores: row.cores,
    });
    return s ? s.monthly : 0;
  };
  const pts = [];
  for (let n = 1; (n - 1) * row.usable_rps < xMax && n <= 10000; n++) {
    const from = (n - 1) * row.usable_rps;
    const to = Math.min(n * row.usable_rps, xMax);
    const c = monthlyCost(n + extra, row.hourly_price);
    pts.push([from, c + lb(from)], [to, c + lb(to)]);
  }
  return pts;
}

module.exports = {
  HOURS_PER_MONTH,
  replicasFor,
  monthlyCost,
  balancerShare,
  fleetCostPerMillion,
  extrapolateLinear,
  rateSummary,
  costRange,
  instanceRow,
  choose,
  verificationPlan,
  costCurve,
  mean,
};
