'use strict';
const assert = require('node:assert/strict');
const { machineSpeed, machineSpeedNote } = require('../../src/ab/machine-speed');
const { renderSummary } = require('../../src/ab/report');
const { AB_FIGURES } = require('../../src/ab/figures');

/** A window of ab.json with the node's and the generator's CPU per request. */
const win = (node, gen) => ({ figures: { cpu_ms_per_request: node }, generator: { cpu_us_per_request: gen } });

/** Pairs whose node ratio is speed^k times its own noise, the generator's ratio speed times genOffset. */
function pairs(speeds, noise, { k = 1, genOffset = 1 } = {}) {
  return speeds.map((s, i) => ({ a: win(0.2, 40), b: win(0.2 * s ** k * noise[i], 40 * s * genOffset) }));
}

const SPEEDS = [1.08, 0.95, 1.12, 0.9, 1.03, 0.97, 1.1, 0.93];
const NOISE = [1.01, 0.99, 0.995, 1.005, 1.01, 0.99, 1.0, 1.0];

describe("A/B: how much of the pairs' spread the machine's speed explains", () => {
  it("node ratios that follow the generator's: a significant correlation, and the spread left is the node's own", () => {
    const m = machineSpeed(pairs(SPEEDS, NOISE));
    assert.equal(m.pairs, 8);
    assert.ok(m.correlation > 0.95, JSON.stringify(m));
    assert.equal(m.significant, true);
    assert.ok(m.pair_sd_pct > 5 && m.pair_sd_without_generator_pct < 1.2, JSON.stringify(m));
    assert.match(
      machineSpeedNote(m),
      /followed the generator's own \(correlation (0\.9\d|1\.00) over 8 pairs.*accounts for most/,
    );
  });

  it('a difference of the sides that lasts all session (the generator dearer toward B) changes none of it', () => {
    assert.deepEqual(machineSpeed(pairs(SPEEDS, NOISE, { genOffset: 1.5 })), machineSpeed(pairs(SPEEDS, NOISE)));
  });

  it('node ratios that do not follow it: no correlation to speak of, and no note', () => {
    const flat = SPEEDS.map(() => 1);
    const m = machineSpeed(pairs(SPEEDS, NOISE, { k: 0 }));
    assert.ok(Math.abs(m.correlation) < 0.5, JSON.stringify(m));
    assert.equal(m.significant, false);
    assert.equal(machineSpeedNote(m), null);
    assert.equal(machineSpeed(pairs(flat, NOISE)), null, 'no spread of the generator: nothing to say');
  });

  it('needs 3 pairs with both figures on both sides', () => {
    const some = pairs(SPEEDS.slice(0, 3), NOISE);
    some[2].b.generator.cpu_us_per_request = null;
    assert.equal(machineSpeed(some), null);
    assert.equal(machineSpeed(pairs(SPEEDS.slice(0, 3), NOISE)).pairs, 3);
  });

  it('the summary says it, and that no interval uses it', () => {
    const ps = pairs(SPEEDS, NOISE);
    const ratio = { a_mean: 1, b_mean: 1, ratio: 1, ci95: [0.9, 1.1], halfwidth_pct: 10, verdict: 'same', n: 8 };
    const side = { warnings: [], provenance: { scenario: { CHAIN: 'ethereum', GENERATOR: 'lean' } }, client: {} };
    const md = renderSummary({
      run_id: 'x',
      status: 'ok',
      pairs: [],
      figures: Object.fromEntries(Object.keys(AB_FIGURES).map((k) => [k, ratio])),
      settings: { order: 'ABBA', interval: 't' },
      warnings: [],
      a: side,
      b: side,
      machine_speed: machineSpeed(ps),
    });
    assert.match(
      md,
      /The machine's speed: over 8 pairs, the node's B\/A .* correlation of (0\.9\d|1\.00) \(different from 0 at 95%\)/,
    );
    assert.match(md, /Descriptive only/);
  });
});
