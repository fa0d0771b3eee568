'use strict';
// A capacity run's arithmetic: replicas and costs, the tie rule, the extrapolation marks, which share of a fleet a
// machine runs, and the bounds a verification names when it fails.
const assert = require('node:assert/strict');
const {
  replicasFor,
  monthlyCost,
  balancerShare,
  fleetCostPerMillion,
  instanceRow,
  choose,
  verificationPlan,
  costCurve,
  HOURS_PER_MONTH,
} = require('../../src/capacity/arithmetic');
const { boundFailures, verificationOutcome } = require('../../src/capacity/verify');
const { DEFAULT_BOUNDS } = require('../../src/saturation');

const near = (a, b, msg) => assert.ok(Math.abs(a - b) < 1e-9 * Math.max(1, Math.abs(b)), `${msg || ''} ${a} != ${b}`);
const opts = { targetRps: 3000, headroomPct: 30, redundancy: 'N+1', balancerCpuMs: null };
const measured = (rates, extra = {}) => ({
  rates,
  p50s: rates.map(() => 1),
  p99s: rates.map(() => 20),
  cpus: rates.map(() => 0.3),
  limit_reached: true,
  ...extra,
});
const inst = (name, price, cores = 1, more = {}) => ({ name, cores, memory_mb: 2048, hourly_price: price, ...more });

describe('capacity arithmetic: replicas and costs', () => {
  it('replicas: the target over the saturated rate less the headroom, rounded up, plus one with N+1', () => {
    assert.deepEqual(replicasFor({ targetRps: 3000, saturatedRps: 2000, headroomPct: 30, redundancy: 'N+1' }), {
      usable_rps: 1400,
      needed: 3,
      replicas: 4,
    });
    assert.equal(replicasFor({ targetRps: 3000, saturatedRps: 2000, headroomPct: 30, redundancy: 'none' }).replicas, 3);
    // 200 x 0.7 is 139.99999999999997 in floating point: a target of exactly 140/s needs one replica, not two
    assert.equal(replicasFor({ targetRps: 140, saturatedRps: 200, headroomPct: 30, redundancy: 'none' }).needed, 1);
    assert.equal(replicasFor({ targetRps: 141, saturatedRps: 200, headroomPct: 30, redundancy: 'none' }).needed, 2);
    assert.equal(replicasFor({ targetRps: 10, saturatedRps: 5000, headroomPct: 0, redundancy: 'none' }).needed, 1);
    assert.equal(replicasFor({ targetRps: 100, saturatedRps: 0, headroomPct: 30, redundancy: 'none' }), null);
  });

  it('monthly cost: replicas x hourly price x 730; per million: over a month of the target rate', () => {
    assert.equal(HOURS_PER_MONTH, 730);
    near(monthlyCost(3, 0.0385), 3 * 0.0385 * 730);
    near(fleetCostPerMillion(84.315, 3000), (84.315 / 730 / (3000 * 3600)) * 1e6);
  });

  it("the balancer's share: its CPU per request at the target in cores, at the instance's price per core-hour", () => {
    const s = balancerShare({ targetRps: 3000, cpuMsPerRequest: 0.05, hourlyPrice: 0.192, cores: 4 });
    near(s.cores, 0.15);
    near(s.price_per_core_hour, 0.048);
    near(s.monthly, 0.15 * 0.048 * 730);
    assert.equal(balancerShare({ targetRps: 3000, cpuMsPerRequest: null, hourlyPrice: 0.192, cores: 4 }), null);
  });

  it("an instance's row: mean rate, its interval, replicas, costs that add up", () => {
    const r = instanceRow(inst('a', 0.0385), measured([2000, 2100, 1900]), { ...opts, balancerCpuMs: 0.05 });
    assert.equal(r.status, 'measured');
    near(r.saturated_rps.mean, 2000);
    assert.ok(r.saturated_rps.ci95[0] < 2000 && r.saturated_rps.ci95[1] > 2000);
    assert.equal(r.replicas, 4);
    near(r.replicas_monthly_cost, 4 * 0.0385 * 730);
    near(r.balancer_monthly_cost, ((3000 * 0.05) / 1000) * 0.0385 * 730);
    near(r.monthly_cost, r.replicas_monthly_cost + r.balancer_monthly_cost);
    near(r.cost_per_million, fleetCostPerMillion(r.monthly_cost, 3000));
    // the interval's ends: more replicas at its low end, fewer (or as many) at its high end
    assert.ok(r.monthly_cost_range[0] <= r.replicas_monthly_cost && r.replicas_monthly_cost <= r.monthly_cost_range[1]);
    const one = instanceRow(inst('b', 0.0385), measured([2000]), opts);
    assert.equal(one.saturated_rps.ci95, null, 'one search: no interval');
    assert.equal(one.monthly_cost_range, null);
    assert.equal(instanceRow(inst('c', 0.1), measured([0, 0]), opts).status, 'no-rate');
  });

  it("the cost curve steps at each multiple of a replica's usable rate", () => {
    const r = instanceRow(inst('a', 0.01), measured([1000]), { ...opts, redundancy: 'none' });
    const pts = costCurve(r, { xMax: 2000, redundancy: 'none', balancerCpuMs: null });
    assert.deepEqual(
      pts.map(([x, y]) => [Math.round(x), Number(y.toFixed(2))]),
      [
        [0, 7.3],
        [700, 7.3],
        [700, 14.6],
        [1400, 14.6],
        [1400, 21.9],
        [2000, 21.9],
      ],
    );
  });
});

describe('capacity arithmetic: the choice and the tie rule', () => {
  const row = (name, price, rates, o = opts) => instanceRow(inst(name, price), measured(rates), o);

  it('the cheapest first, the runner-up and the margin; apart beyond the intervals: no tie', () => {
    const c = choose([row('dear', 0.04, [2000, 2010, 1990]), row('cheap', 0.02, [2000, 2010, 1990])]);
    assert.equal(c.instance, 'cheap');
    assert.equal(c.runner_up.instance, 'dear');
    near(c.margin, 4 * 0.02 * 730);
    near(c.margin_pct, 100);
    assert.equal(c.rates_overlap, true, 'the same rates: their intervals overlap');
    assert.equal(c.tie, false, 'but the costs they allow do not: the price decides');
  });

  it('costs whose intervals allow overlapping costs: a tie', () => {
    // 1,500 [1,252, 1,748]: 4 replicas at the mean, 4 to 5 over the interval, at 0.02/h: 58.40 to 73.00 a month;
    // 2,000 [1,950, 2,050]: 4 replicas throughout, at 0.021/h: 61.32. Cheaper at the mean, dearer within its interval.
    const c = choose([row('wide', 0.02, [1400, 1500, 1600]), row('narrow', 0.021, [1980, 2000, 2020])]);
    assert.equal(c.instance, 'wide');
    assert.equal(c.tie, true);
    assert.equal(c.rates_overlap, false, 'the rates differ beyond their intervals');
    const equal = choose([row('x', 0.02, [2000, 2001, 1999]), row('y', 0.02, [2000, 2002, 1998])]);
    assert.equal(equal.tie, true, 'equal monthly costs are a tie');
  });

  it('one search each: no interval, and no tie or no-tie called', () => {
    const c = choose([row('a', 0.02, [2000]), row('b', 0.03, [2000])]);
    assert.equal(c.instance, 'a');
    assert.equal(c.rates_overlap, null);
    assert.equal(c.tie, null);
  });

  it('instances needing a larger machine are left out; alone, an instance has no runner-up', () => {
    const big = { ...row('big', 0.001, [9000]), status: 'needs-machine' };
    const c = choose([big, row('a', 0.02, [2000])]);
    assert.equal(c.instance, 'a');
    assert.equal(c.runner_up, null);
    assert.equal(choose([big]), null);
  });
});

describe('capacity arithmetic: extrapolation', () => {
  it('CAPACITY_EXTRAPOLATE=linear: the rate scaled by cores, every such figure marked, the measured points kept', () => {
    const r = instanceRow(inst('m5.xlarge', 0.192, 4, { measured_cores: 1 }), measured([1000, 1100, 900]), opts);
    assert.equal(r.status, 'extrapolated');
    assert.deepEqual(r.saturated_rps.values, [4000, 4400, 3600]);
    near(r.saturated_rps.mean, 4000);
    assert.deepEqual(r.extrapolated.measured_rps.values, [1000, 1100, 900]);
    near(r.extrapolated.measured_rps.mean, 1000);
    assert.equal(r.extrapolated.factor, 4);
    assert.equal(r.extrapolated.measured_cores, 1);
    assert.equal(r.extrapolated.method, 'linear');
    near(r.usable_rps, 2800);
    assert.equal(r.replicas, 3);
    const plain = instanceRow(inst('one', 0.02), measured([1000]), opts);
    assert.equal(plain.extrapolated, null);
  });
});

describe('capacity: what the machine runs of the chosen fleet', () => {
  it('the whole fleet where its cores and the generator fit, else the largest share at its share of the target', () => {
    assert.deepEqual(verificationPlan({ replicas: 1, cores: 1, cpuCount: 2, targetRps: 100 }), {
      mode: 'fleet',
      replicas: 1,
      replicas_run: 1,
      cores_per_replica: 1,
      cores: 1,
      share: 1,
      rate_rps: 100,
      machine_cores_needed: 2,
    });
    const share = verificationPlan({ replicas: 3, cores: 1, cpuCount: 2, targetRps: 3000 });
    assert.equal(share.mode, 'share');
    assert.equal(share.replicas_run, 1);
    assert.equal(share.rate_rps, 1000);
    assert.equal(share.machine_cores_needed, 4);
    const eight = verificationPlan({ replicas: 10, cores: 1, cpuCount: 8, targetRps: 1000 });
    assert.deepEqual([eight.mode, eight.replicas_run, eight.cores, eight.rate_rps], ['share', 7, 7, 700]);
    const fits = verificationPlan({ replicas: 3, cores: 2, cpuCount: 8, targetRps: 1000 });
    assert.deepEqual([fits.mode, fits.replicas_run, fits.cores, fits.rate_rps], ['fleet', 3, 6, 1000]);
    // an instance larger than the machine: one replica on the cores there are, its rate scaled by cores too
    const big = verificationPlan({ replicas: 2, cores: 4, cpuCount: 2, targetRps: 8000 });
    assert.deepEqual([big.mode, big.replicas_run, big.cores, big.rate_rps], ['share', 1, 1, 1000]);
  });
});

describe('capacity: the verification names the bound that failed', () => {
  const step = (p99, rps, errorRate = 0) => ({
    target_rps: 1000,
    figures: { rps, error_rate: errorRate, latency_ms: { p50: 1, p99 }, cpu_ms_per_request: 0.2 },
  });
  const bounds = { ...DEFAULT_BOUNDS, max_p99_ms: 200 };

  it("each of the saturation judge's bounds, by its scenario key where one sets it", () => {
    assert.deepEqual(boundFailures(step(50, 1000), bounds), []);
    const f = boundFailures(step(250, 800, 0.02), bounds);
    assert.deepEqual(
      f.map((x) => [x.key, x.bound]),
      [
        ['MAX_P99_MS', 'max_p99_ms'],
        ['MAX_ERROR_RATE', 'max_error_rate'],
        [null, 'min_achieved_ratio'],
      ],
    );
    assert.match(f[0].reason, /p99 250\.0 ms > 200 ms/);
    assert.match(f[2].reason, /answered 800\/s of 1000\/s offered/);
  });

  it("the outcome: the run's status, the judge's bounds and validate's verdict, each named once", () => {
    const run = {
      status: 'ok',
      figures: step(250, 1000).figures,
      verdict: { pass: false, failed: ['MAX_P99_MS=200: latency_ms.p99 was 250 ms', 'MIN_RPS=2000: rps was 1000'] },
      node: { fleet: { balancer: { cpu_ms_per_request: 0.05 } } },
    };
    const o = verificationOutcome(run, { rate_rps: 1000 }, bounds);
    assert.equal(o.pass, false);
    assert.equal(o.failed.length, 2);
    assert.match(o.failed[0], /^MAX_P99_MS=200: p99 250\.0 ms/);
    assert.match(o.failed[1], /^MIN_RPS=2000/);
    assert.equal(o.balancer_cpu_ms_per_request, 0.05);
    const failed = verificationOutcome({ status: 'failed', error: 'the node exited' }, { rate_rps: 1000 }, bounds);
    assert.deepEqual(failed.failed, ['the verification run failed: the node exited']);
  });
});
