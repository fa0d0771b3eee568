'use strict';
// Load shapes (SHAPE=step|spike): the rate inside the window, the pacer of the
// lean engine, the gate of the ethers processor, and the keys' checks.

const assert = require('node:assert/strict');
const {
  shapeOf,
  rateAt,
  expectedBetween,
  shapedPacer,
  shapedGate,
  shapeFigures,
} = require('../../src/workload/shapes');
const { buildScript } = require('../../src/workload/artillery');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const base = { RATE: 400, DURATION_S: 20, SHAPE_STEPS: 4, SPIKE_FACTOR: 3, SPIKE_S: 4 };

describe('load shapes', () => {
  it('steady and closed loops have no shape', () => {
    assert.equal(shapeOf({ ...base, SHAPE: 'steady' }), null);
    assert.equal(shapeOf({ ...base, RATE: null, SHAPE: 'step' }), null);
  });

  it("step: SHAPE_STEPS equal steps across the window up to RATE, the first step's rate before it", () => {
    const sh = shapeOf({ ...base, SHAPE: 'step' });
    assert.deepEqual(
      sh.segments.map((x) => [x.from_s, x.to_s, x.rps]),
      [
        [0, 5, 100],
        [5, 10, 200],
        [10, 15, 300],
        [15, 20, 400],
      ],
    );
    assert.equal(sh.base_rps, 100);
    const t0 = 1_000_000;
    assert.equal(rateAt(sh, t0, t0 - 1), 100);
    assert.equal(rateAt(sh, t0, t0 + 7000), 200);
    assert.equal(rateAt(sh, t0, t0 + 19999), 400);
    assert.equal(expectedBetween(sh, t0, t0, t0 + 20000), 5 * (100 + 200 + 300 + 400));
  });

  it('spike: RATE with SPIKE_FACTOR x RATE for SPIKE_S in the middle of the window', () => {
    const sh = shapeOf({ ...base, SHAPE: 'spike' });
    assert.deepEqual(
      sh.segments.map((x) => [x.from_s, x.to_s, x.rps]),
      [
        [0, 8, 400],
        [8, 12, 1200],
        [12, 20, 400],
      ],
    );
    assert.equal(sh.peak_rps, 1200);
    assert.equal(expectedBetween(sh, 0, 0, 20000), 16 * 400 + 4 * 1200);
  });

  it("the lean pacer offers the shape's integral on the window's clock, whatever its tick", () => {
    const sh = shapeOf({ ...base, SHAPE: 'spike' });
    const start = 50_000;
    const t0 = start - 3000; // the engine started 3 s before the window
    const due = shapedPacer(sh, start, 0, t0);
    let n = 0;
    for (let t = t0; t <= start + 20000; t += 7) n = due(t);
    const expected = 3 * 400 + expectedBetween(sh, start, start, start + 20000);
    assert.ok(Math.abs(n - expected) < 20, `${n} vs ${expected}`);
  });

  it('the lean pacer ramps to the base rate over RAMP_S before the window', () => {
    const sh = shapeOf({ ...base, SHAPE: 'step' });
    const due = shapedPacer(sh, 100_000, 10, 0);
    let n = 0;
    for (let t = 0; t <= 10_000; t += 5) n = due(t);
    assert.ok(Math.abs(n - 500) < 2, `half of 10 s at 100/s, got ${n}`); // integral of a linear ramp
  });

  it('the ethers gate lets through rate/peak of the arrivals, in order', () => {
    const sh = shapeOf({ ...base, SHAPE: 'spike' });
    const gate = shapedGate(sh, 0);
    let inBase = 0;
    let inSpike = 0;
    // one second of arrivals at the peak rate, before the spike
    for (let i = 0; i < 1200; i++) if (gate(1000)) inBase++;
    for (let i = 0; i < 1200; i++) if (gate(9000)) inSpike++;
    assert.equal(inBase, 400);
    assert.equal(inSpike, 1200);
  });

  it('artillery offers arrivals at the peak rate for the ethers processor', () => {
    const script = buildScript(
      { ...base, SHAPE: 'spike', RAMP_S: 0, WORKLOAD: 'eth-default' },
      { target: 'http://x', processor: '/p.js', totalS: 30 },
    );
    assert.deepEqual(
      script.config.phases.map((p) => [p.duration, p.arrivalRate]),
      [[30, 1200]],
    );
  });

  it("shapeFigures counts each segment's requests from the samples", () => {
    const sh = shapeOf({ ...base, SHAPE: 'step' });
    const samples = { okBetween: (a, b) => (b - a) / 10 };
    const f = shapeFigures(sh, 0, samples);
    assert.deepEqual(
      f.segments.map((x) => [x.requests_ok, x.achieved_rps]),
      [
        [500, 100],
        [500, 100],
        [500, 100],
        [500, 100],
      ],
    );
    assert.equal(f.segments[0].requests_sent, undefined, 'no record of sends: nothing said of them');
    // a spike's late answers fall in the segment after it: what was sent in each tells the offered load apart
    const sent = shapeFigures(sh, 0, { ...samples, sentBetween: (a) => (a === 0 ? 400 : 550) });
    assert.deepEqual(
      sent.segments.map((x) => [x.requests_sent, x.sent_rps]),
      [
        [400, 80],
        [550, 110],
        [550, 110],
        [550, 110],
      ],
    );
  });

  it('keys: a shape needs RATE, room for its spike or steps, and no saturation search (exit 2 messages)', () => {
    const dir = tmpDir();
    const check = (lines) =>
      resolveScenario(writeScenario(dir, 's', lines.join('\n')), { env: {}, dockerEngine: null }).errors.join('\n');
    assert.match(check(['SHAPE=step']), /SHAPE=step shapes an open loop's rate: set RATE/);
    assert.match(
      check(['SHAPE=spike', 'RATE=100', 'DURATION_S=5', 'SPIKE_S=5']),
      /SPIKE_S: the spike \(5 s\) must be shorter than the window/,
    );
    assert.match(
      check(['SHAPE=step', 'RATE=100', 'DURATION_S=5', 'SHAPE_STEPS=6']),
      /6 steps need DURATION_S of at least 6/,
    );
    assert.match(check(['SHAPE=spike', 'SATURATE=yes', 'RATE=100']), /saturation search/);
    assert.equal(check(['SHAPE=spike', 'RATE=100', 'DURATION_S=10', 'SPIKE_S=2', 'RUNTIME=host']), '');
  });
});
