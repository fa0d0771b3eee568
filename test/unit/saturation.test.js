'use strict';
const assert = require('node:assert/strict');
const { searchSaturation, costPerMillion, DEFAULT_BOUNDS } = require('../../src/saturation');

/** A synthetic node: answers up to `capacity` requests/s; p99 grows sharply near it. */
function syntheticNode(capacity, { errorsAbove = Infinity, generatorBusy = 0.3 } = {}) {
  const measured = [];
  const measure = async (rate) => {
    measured.push(rate);
    const rps = Math.min(rate, capacity);
    const load = rate / capacity;
    return {
      figures: {
        rps,
        latency_ms: { p99: load < 0.9 ? 5 + 20 * load : 5 + 2000 * (load - 0.85) },
        error_rate: rate > errorsAbove ? 0.05 : 0,
        cpu_ms_per_request: 0.1 + 0.02 * load,
      },
      generator: { cpu_utilization: generatorBusy },
      window: { start_ms: 0, end_ms: 1000 },
    };
  };
  return { measure, measured };
}

describe('saturation search', () => {
  const base = { factor: 2, maxSteps: 12, bisect: 3, bounds: DEFAULT_BOUNDS };

  it('raises the rate until a bound breaks, bisects, and stops by itself', async () => {
    const node = syntheticNode(5000);
    const r = await searchSaturation({ ...base, start: 500, measure: node.measure });
    // p99 crosses 100 ms at load 0.8975: 4487/s; the search must land between 4000 and that
    assert.ok(
      r.max_sustainable_target_rps >= 4000 && r.max_sustainable_target_rps <= 4487,
      String(r.max_sustainable_target_rps),
    );
    assert.equal(r.reached_limit, true);
    assert.deepEqual(node.measured.slice(0, 5), [500, 1000, 2000, 4000, 8000]);
    assert.equal(node.measured.length, 8, 'five growing steps and three bisections');
    assert.ok(r.steps.every((s) => typeof s.holds === 'boolean'));
    assert.ok(r.cpu_ms_per_request_at_max > 0.1);
  });

  it('an error rate over its bound stops the climb too', async () => {
    const node = syntheticNode(1e6, { errorsAbove: 3000 });
    const r = await searchSaturation({ ...base, start: 1000, bisect: 0, measure: node.measure });
    assert.equal(r.max_sustainable_target_rps, 2000);
    assert.match(r.steps[2].reasons.join(), /error rate 0\.0500 > 0\.01/);
  });

  it('comes down from a first rate that fails until one holds, then bisects', async () => {
    const node = syntheticNode(5000);
    const r = await searchSaturation({ ...base, start: 100000, measure: node.measure });
    assert.deepEqual(node.measured.slice(0, 6), [100000, 50000, 25000, 12500, 6250, 3125]);
    assert.equal(r.reached_limit, true);
    assert.ok(r.max_sustainable_target_rps >= 3125 && r.max_sustainable_target_rps <= 4487);
    assert.ok(r.first_failing_rps > r.max_sustainable_target_rps);
    assert.ok(r.steps.filter((s) => !s.holds).every((s) => s.target_rps > r.max_sustainable_target_rps));
  });

  it('says when no rate held, and when the search ran out of steps', async () => {
    const dead = syntheticNode(5000, { errorsAbove: 0 });
    const none = await searchSaturation({ ...base, start: 1000, maxSteps: 4, measure: dead.measure });
    assert.equal(none.max_sustainable_rps, null);
    assert.deepEqual(dead.measured, [1000, 500, 250, 125], 'four steps down, then it gives up');
    const easy = await searchSaturation({ ...base, start: 100, maxSteps: 3, measure: syntheticNode(1e9).measure });
    assert.equal(easy.reached_limit, false);
    assert.equal(easy.max_sustainable_target_rps, 400);
  });

  it('marks steps where the generator was the busy one', async () => {
    const r = await searchSaturation({
      ...base,
      start: 4000,
      bisect: 0,
      measure: syntheticNode(5000, { generatorBusy: 0.95 }).measure,
    });
    assert.ok(r.steps.every((s) => s.generator_limited));
  });

  it("REPLICAS: each step says how evenly the fleet took it and what the balancer cost (its window's node.fleet)", async () => {
    const base2 = syntheticNode(5000);
    const measure = async (rate) => {
      const m = await base2.measure(rate);
      const lopsided = rate > 2000;
      m.node = {
        fleet: {
          spread: { share_max_over_min: lopsided ? 1.5 : 1, cpu_per_request_max_over_min: 1.02 },
          balancer: { cpu_ms_per_request: 0.04 },
          replicas_lost: lopsided ? [{ replica: 'replica-2' }] : [],
        },
      };
      return m;
    };
    const r = await searchSaturation({ ...base, start: 1000, bisect: 0, measure });
    assert.deepEqual(r.steps[0].fleet, {
      share_max_over_min: 1,
      cpu_per_request_max_over_min: 1.02,
      balancer_cpu_ms_per_request: 0.04,
      replicas_lost: 0,
    });
    assert.equal(r.steps[2].fleet.share_max_over_min, 1.5);
    assert.equal(r.steps[2].fleet.replicas_lost, 1);
    const lone = await searchSaturation({ ...base, start: 1000, bisect: 0, measure: syntheticNode(5000).measure });
    assert.ok(
      lone.steps.every((x) => !('fleet' in x)),
      'no fleet, no fleet figures',
    );
  });

  it('prices a million requests', () => {
    assert.ok(Math.abs(costPerMillion(3.6, 1000) - 1) < 1e-12); // 3.6 per hour at 1000/s = 1 per million
    assert.equal(costPerMillion(null, 1000), null);
  });
});
