'use strict';
const assert = require('node:assert/strict');
const { windowHalves, withinWindowVariance, chooseWindowLength } = require('../../src/ab/window-length');
const { pairedRatio, pairsNeeded } = require('../../src/ab/stats');
const { normal } = require('../helpers');

/**
 * A simulated window of L s: a term it shares whole (between windows and processes, betweenSd) and noise inside it
 * (perSecondSd per second, so sd/sqrt(L/2) in each half); the window's value is its halves' geometric mean.
 */
function simWindow(gauss, mu, L, { betweenSd, perSecondSd }) {
  const b = betweenSd * gauss();
  const hs = perSecondSd / Math.sqrt(L / 2);
  const first = mu * Math.exp(b + hs * gauss());
  const second = mu * Math.exp(b + hs * gauss());
  return { compared: { cpu_ms_per_request: Math.sqrt(first * second) }, halves: { first, second } };
}

const asUnits = (pairs) =>
  pairs.map((p) => ({ a: p.a.compared.cpu_ms_per_request, b: p.b.compared.cpu_ms_per_request }));

/**
 * One session under AB_WINDOW=auto, as ab/stages.js runs it: two pairs at L0, the choice, then Stein's first stage
 * (those two pairs in it if the length stays, a new one at the chosen length if not) and the pairs it asks for.
 * Returns the interval, the length and the seconds spent.
 */
function autoSession(gauss, noise, { ratio = 1, L0 = 10, fixedS = 20, n0 = 5, targetPct = 2, maxPairs = 400 } = {}) {
  const pairAt = (L) => ({ a: simWindow(gauss, 0.2, L, noise), b: simWindow(gauss, 0.2 * ratio, L, noise) });
  const early = 2;
  let pairs = Array.from({ length: early }, () => pairAt(L0));
  const choice = chooseWindowLength({
    units: n0,
    done: early,
    within: withinWindowVariance(pairs),
    lengthS: L0,
    pairS: fixedS + 2 * L0,
    per: 1,
    targetPct,
  });
  let seconds = early * (fixedS + 2 * L0);
  const L = choice.length_s;
  if (!choice.stay) pairs = [];
  while (pairs.length < n0) pairs.push(pairAt(L));
  const need = Math.min(maxPairs, pairsNeeded(asUnits(pairs), n0, targetPct));
  while (pairs.length < need) pairs.push(pairAt(L));
  seconds += (choice.stay ? pairs.length - early : pairs.length) * (fixedS + 2 * L);
  return { r: pairedRatio(asUnits(pairs), { stage1: n0 }), L, seconds };
}

describe('A/B window length (AB_WINDOW=auto)', () => {
  it("splits a window at the CPU reading nearest its middle, each half's CPU over its own requests", () => {
    // 10 readings a second apart; 0.1 CPU-s a second in the first 5 s, 0.12 after; 500 requests a second
    const start = 1_000_000;
    const ticks = Array.from({ length: 11 }, (_, i) => ({
      t_ms: start + i * 1000,
      total_s: i <= 5 ? 0.1 * i : 0.5 + 0.12 * (i - 5),
    }));
    const w = {
      window: { start_ms: start, end_ms: start + 10_000 },
      cpu_ticks: ticks,
      samples: { okBetween: (a, b) => ((b - a) / 1000) * 500 },
    };
    const h = windowHalves(w);
    assert.equal(h.first, 0.2); // 0.5 CPU-s over 2,500 requests, in ms
    assert.equal(h.second, 0.24);
    assert.equal(windowHalves({ ...w, cpu_ticks: ticks.slice(0, 2) }), null, 'two readings: no middle');
    assert.equal(windowHalves({ ...w, samples: { okBetween: () => 0 } }), null, 'no requests: no halves');
  });

  it("estimates a window's variance from inside it as a quarter of the variance of its halves' log ratios", () => {
    const half = (r) => ({ halves: { first: Math.exp(r), second: 1 } });
    const pairs = [{ a: half(0.02), b: half(-0.02) }];
    assert.ok(Math.abs(withinWindowVariance(pairs) - 0.0002) < 1e-12); // the sample variance of ±0.02, 0.0008, / 4
    const drifting = [{ a: half(0.05), b: half(0.01) }]; // a drift of 0.03 that both share is not noise
    assert.ok(Math.abs(withinWindowVariance(drifting) - withinWindowVariance(pairs)) < 1e-12);
    assert.equal(withinWindowVariance([{ a: half(0.02), b: { halves: null } }]), null, 'one window: no variance');
  });

  it('keeps the length when the noise inside its windows is small enough for the first stage alone', () => {
    const c = chooseWindowLength({ units: 5, within: 0.000005, lengthS: 10, pairS: 40, per: 1, targetPct: 2 });
    assert.equal(c.stay, true);
    assert.equal(c.length_s, 10);
    const stay = c.candidates.find((x) => x.length_s === 10);
    assert.equal(
      stay.units_needed,
      6,
      'the first stage of 5, and one pair more for as many AB as BA (as the stage does)',
    );
    assert.equal(stay.seconds_left, 40);
  });

  it('chooses longer windows when the noise inside them would need many pairs, counting the pilot as lost', () => {
    // a window's variance 0.001 (3.2% sd): a pair's 0.002, about 40 pairs at ±2% with 10 s windows
    const c = chooseWindowLength({ units: 5, within: 0.001, lengthS: 10, pairS: 40, per: 1, targetPct: 2 });
    assert.equal(c.stay, false);
    assert.ok(c.length_s > 10, `chose ${c.length_s} s`);
    const stay = c.candidates.find((x) => x.length_s === 10);
    const chosen = c.candidates.find((x) => x.length_s === c.length_s);
    assert.ok(chosen.seconds_left < stay.seconds_left);
    assert.ok(chosen.seconds_left >= 5 * (20 + 2 * c.length_s), 'a new first stage at least');
    // unless a first stage at that length no longer fits in AB_MAX_S or AB_MAX_PAIRS
    const args = { units: 5, within: 0.001, lengthS: 10, pairS: 40, per: 1, targetPct: 2 };
    const late = chooseWindowLength({ ...args, budgetS: 5 * 60 });
    assert.ok(late.length_s <= 20, `chose ${late.length_s} s with 300 s left`);
    assert.ok(late.candidates.filter((x) => x.length_s > 20).every((x) => x.fits === false));
    assert.equal(chooseWindowLength({ ...args, pairsLeft: 4 }).stay, true);
    // blocks of two pairs between restarts: a unit averages two pairs, half the variance
    const blocks = chooseWindowLength({ units: 3, within: 0.0004, lengthS: 10, pairS: 40, per: 2, targetPct: 2 });
    assert.equal(blocks.within_var, 0.0004);
  });

  it('over 2,000 simulated sessions, with or without a pilot, the interval holds the true ratio 93.5-96.5% of the time', () => {
    const gauss = normal(99);
    for (const noise of [
      { betweenSd: 0.002, perSecondSd: 0.12 }, // inside windows: the choice often moves
      { betweenSd: 0.02, perSecondSd: 0.005 }, // between windows: stays
    ]) {
      let covered = 0;
      let longer = 0;
      const n = 2000;
      for (let i = 0; i < n; i++) {
        const { r, L } = autoSession(gauss, noise, { ratio: 1.05 });
        if (r.ci95[0] <= 1.05 && 1.05 <= r.ci95[1]) covered++;
        if (L > 10) longer++;
      }
      assert.ok(covered / n > 0.935 && covered / n < 0.965, `${JSON.stringify(noise)}: coverage ${covered / n}`);
      if (noise.perSecondSd > noise.betweenSd) assert.ok(longer / n > 0.5, `longer in ${longer / n}`);
      else assert.ok(longer / n < 0.05, `longer in ${longer / n}`);
    }
  });

  it('reaches the target sooner than fixed windows when the noise is inside windows', () => {
    const noise = { betweenSd: 0.002, perSecondSd: 0.12 };
    const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
    const gauss = normal(5);
    const auto = Array.from({ length: 400 }, () => autoSession(gauss, noise).seconds);
    const fixed = Array.from({ length: 400 }, () => {
      const pairs = Array.from({ length: 5 }, () => ({
        a: simWindow(gauss, 0.2, 10, noise),
        b: simWindow(gauss, 0.2, 10, noise),
      }));
      const need = pairsNeeded(asUnits(pairs), 5, 2);
      return need * 40;
    });
    assert.ok(median(auto) < 0.8 * median(fixed), `auto ${median(auto)} s, fixed ${median(fixed)} s`);
  });
});

describe('A/B session stages with AB_WINDOW=auto (measurePairs)', () => {
  const { measurePairs } = require('../../src/ab/stages');
  const settings = (over = {}) => ({
    target_pct: 2,
    min_pairs: 3,
    restart_pairs: 1,
    window: 'auto',
    window_s: 10,
    max_pairs: 40,
    max_s: 3600,
    generator: 'kept',
    ...over,
  });
  /** A stub of sides.js measureSide: halves apart by `spread` (log), the window's value their geometric mean. */
  function stubMeasure(spread, calls, clock) {
    let i = 0;
    return async (side, other, name, signal, lengthS) => {
      calls.push({ side: side.key, name, lengthS });
      clock.ms += ((lengthS || 10) + 10) * 1000; // the window and 10 s of idle baseline, restart and warm-up
      const sign = i++ % 2 ? 1 : -1;
      const first = 0.2 * Math.exp((sign * spread) / 2);
      const second = 0.2 * Math.exp((-sign * spread) / 2);
      const cpu = Math.sqrt(first * second) * (1 + 0.001 * sign);
      return {
        compared: { cpu_ms_per_request: cpu },
        halves: { first, second },
        figures: { cpu_ms_per_request: cpu, cpu_ms_per_request_net: null, rps: 1000, latency_ms: { p99: 1 } },
      };
    };
  }
  /** measurePairs on stub windows whose halves are `spread` apart: the session record, why it stopped, the calls. */
  async function session(spread, over = {}) {
    const ab = { settings: settings(over), pairs: [], progress: [], warnings: [] };
    const calls = [];
    const restarts = [];
    const clock = { ms: 0 };
    const why = await measurePairs(ab, { key: 'A' }, { key: 'B' }, null, {
      measure: stubMeasure(spread, calls, clock),
      restart: async (x, o) => restarts.push(o.what ? o.what : o.block),
      now: () => clock.ms,
    });
    return { ab, why, calls, restarts };
  }

  it('quiet windows: keeps DURATION_S, one stage, the pairs the first stage asked for and one more for ABBA', async () => {
    const { ab, why, calls, restarts } = await session(0.001);
    assert.match(why, /the 3 pairs the first 3 asked for .* are measured, and 1 more for as many AB as BA pairs/);
    assert.equal(ab.window_choice.stay, true);
    assert.equal(ab.pilot, undefined);
    assert.equal(ab.pairs.length, 4, 'Stein asked for 3: an odd count is rounded up to as many AB as BA pairs');
    assert.deepEqual(
      ab.pairs.map((p) => p.order),
      ['AB', 'BA', 'AB', 'BA'],
    );
    assert.ok(
      calls.every((c) => c.lengthS === null),
      "each side's own DURATION_S",
    );
    assert.deepEqual(restarts, [0, 1, 2, 3], 'a restart before every pair, the first too');
    assert.equal(ab.pairs_needed, 3, "Stein's count");
    assert.equal(ab.pairs_planned, 4);
    // the stub's second window of a pair costs 0.2% more than its first: three pairs (AB, BA, AB) keep a third of it
    // in the mean, four cancel it
    const ratio = (k) => ab.progress[k - 1].ratio;
    assert.ok(Math.abs(ratio(3) - 1) > 0.0005, `3 pairs: ${ratio(3)}`);
    assert.ok(Math.abs(ratio(4) - 1) < 1e-9, `4 pairs: ${ratio(4)}`);
  });

  it('an even count stays; with blocks of an odd number of pairs, one block more', async () => {
    const even = await session(0.001, { min_pairs: 4 });
    assert.equal(even.ab.pairs_needed, 4);
    assert.equal(even.ab.pairs.length, 4, 'already as many AB as BA');
    // AB_RESTART_PAIRS=3: units of three pairs (ABA, BAB); Stein's two blocks are six pairs, even
    const blocks = await session(0.001, { min_pairs: 6, restart_pairs: 3 });
    assert.equal(blocks.ab.pairs_needed, 6);
    assert.equal(blocks.ab.pairs.length, 6);
    // AB_RESTART_PAIRS=1 and AB_MAX_PAIRS below the balanced count: the cap wins
    const capped = await session(0.001, { max_pairs: 3 });
    assert.equal(capped.ab.pairs.length, 3);
    assert.match(capped.why, /AB_MAX_PAIRS=3/);
  });

  it('noisy windows: the first two pairs become a pilot, and both stages start, on new processes, at a longer length', async () => {
    const { ab, why, calls, restarts } = await session(0.2); // halves 20% apart: a window's variance 0.01
    assert.equal(ab.window_choice.stay, false);
    assert.ok(ab.settings.window_s > 10, `${ab.settings.window_s} s`);
    assert.equal(ab.pilot.window_s, 10);
    assert.equal(ab.pilot.pairs.length, 2, 'the choice after two pairs');
    assert.equal(ab.pilot.progress.length, 1, "the pilot's progress up to its last pair");
    assert.equal(ab.pairs[0].pair, 1, 'the pairs of the new stages are numbered from 1');
    assert.ok(ab.pairs.length >= 3);
    assert.ok(calls.slice(0, 4).every((c) => c.lengthS === null));
    assert.ok(calls.slice(4).every((c) => c.lengthS === ab.settings.window_s));
    assert.deepEqual(
      calls.slice(2, 6).map((c) => c.name),
      ['pair2-B', 'pair2-A', 'stage2-pair1-A', 'stage2-pair1-B'],
      "the new stages' windows named apart from the pilot's (per-window files keep both)",
    );
    assert.deepEqual(restarts.slice(0, 3), [0, 1, 0], "the new stage's first pair on new processes");
    assert.match(why, /asked for|AB_MAX/);
  });

  it('AB_BURN_IN_PAIRS=1: one pair on new processes before the stages, in ab.burn_in, in no interval and not on the clock', async () => {
    const { ab, calls, restarts } = await session(0.001, { burn_in_pairs: 1 });
    assert.equal(ab.burn_in.pairs.length, 1);
    assert.equal(ab.burn_in.pairs[0].order, 'AB');
    assert.deepEqual(
      calls.slice(0, 3).map((c) => c.name),
      ['burnin1-A', 'burnin1-B', 'pair1-A'],
      'its windows named apart from the pairs',
    );
    assert.deepEqual(restarts, ['burn-in pair 1 of 1 runs', 0, 1, 2, 3], 'restarted before it, and before every pair');
    assert.equal(ab.pairs.length, 4, 'the stages as without it');
    assert.equal(ab.pairs[0].pair, 1);
    assert.equal(ab.progress[0].elapsed_s, 40, "AB_MAX_S's clock starts after it (one pair: two 20 s windows)");
    assert.equal(ab.window_choice.stay, true, 'the window choice looks at the pairs after it');
  });

  /** A stub of interleave.js measureInterleaved: both windows at once, late answers as given for each side. */
  function stubBoth(calls, clock, late = { A: 0, B: 0 }) {
    return async (first, second, { names, sliceS, lengthS }) => {
      calls.push({ names, sliceS, lengthS });
      clock.ms += ((lengthS || 10) * 2 + 10) * 1000;
      return [first, second].map((side, i) => ({
        compared: { cpu_ms_per_request: 0.2 * (1 + 0.001 * i) },
        halves: { first: 0.2, second: 0.2 },
        node: { cpu_window: { requests_ok: 1000, answered_outside_slices: late[side.key] } },
        figures: { cpu_ms_per_request: 0.2, cpu_ms_per_request_net: null, rps: 1000, latency_ms: { p99: 1 } },
      }));
    };
  }
  async function interleavedSession(over = {}, late = undefined) {
    const ab = { settings: settings({ interleave: true, slice_s: 1, ...over }), pairs: [], progress: [], warnings: [] };
    const calls = [];
    const single = [];
    const clock = { ms: 0 };
    const why = await measurePairs(ab, { key: 'A' }, { key: 'B' }, null, {
      measure: stubMeasure(0.001, single, clock),
      measureBoth: stubBoth(calls, clock, late),
      restart: async () => {},
      now: () => clock.ms,
    });
    return { ab, why, calls, single };
  }

  it('AB_SLICE_S: both windows of each pair at once, the side first in its order taking the first slice', async () => {
    const { ab, calls, single } = await interleavedSession();
    assert.equal(single.length, 0, 'no whole window');
    assert.deepEqual(calls[0], { names: ['pair1-A', 'pair1-B'], sliceS: 1, lengthS: null });
    assert.deepEqual(calls[1].names, ['pair2-B', 'pair2-A'], 'BA pairs begin with B');
    assert.ok(ab.pairs.every((p) => p.interleaved && p.a.compared && p.b.compared));
    assert.equal(ab.pairs[0].b.compared.cpu_ms_per_request, 0.2 * 1.001, "each side's own window");
  });

  it("AB_SLICE_S: a burn-in pair with a side's answers after its slices turns the stages to whole windows", async () => {
    const { ab, calls, single } = await interleavedSession({ burn_in_pairs: 1 }, { A: 0, B: 30 });
    assert.equal(calls.length, 1, 'the burn-in pair only was interleaved');
    assert.ok(single.length >= 6, 'then whole windows');
    assert.equal(ab.settings.interleave, false);
    assert.match(ab.settings.interleave_reason, /B answered 3\.0% of its requests after its slices ended/);
    assert.match(ab.warnings[0], /too slowly for slices of 1 s/);
    assert.ok(ab.pairs.every((p) => !p.interleaved));
    const fine = await interleavedSession({ burn_in_pairs: 1 }, { A: 5, B: 10 });
    assert.equal(fine.ab.settings.interleave, true, '1% or less: slices go on');
    assert.equal(fine.single.length, 0);
  });

  it("interleaved pairs: the noise inside windows is their halves' B/A, not what moves both sides' halves alike", () => {
    const gauss = normal(7);
    const pair = (drift, own) => {
      const d = drift * gauss(); // the machine's speed over the span: both sides' first halves alike
      const h = () => ({ first: 0.2 * Math.exp(d + own * gauss()), second: 0.2 * Math.exp(-d + own * gauss()) });
      return { interleaved: true, a: { halves: h() }, b: { halves: h() } };
    };
    const drifting = Array.from({ length: 40 }, () => pair(0.1, 0.001));
    assert.ok(withinWindowVariance(drifting) < 1e-5, `${withinWindowVariance(drifting)}: the drift cancels`);
    const asWhole = drifting.map((p) => ({ ...p, interleaved: false }));
    assert.ok(withinWindowVariance(asWhole) > 0.005, 'counted whole, each window would carry it');
    const own = Array.from({ length: 400 }, () => pair(0, 0.02));
    // each half's log carries 0.02 of its own: d = (b1 - a1) - (b2 - a2) has variance 4 x 0.0004, the pair's log B/A a
    // quarter of it, per window an eighth
    const v = withinWindowVariance(own);
    assert.ok(v > 0.0002 * 0.8 && v < 0.0002 * 1.2, `${v}`);
  });
});

describe('an interleaved pair whose generator began late (measureInterleaved)', () => {
  const { measureInterleaved } = require('../../src/ab/interleave');
  const side = (key) => ({
    key,
    s: { IDLE_S: 2, DURATION_S: 4, SEED: 1 },
    stack: key,
    ctx: { key },
    run: { warnings: [] },
  });
  const late = () =>
    Object.assign(new Error('the load generator sent its first request 2.2 s late'), { lateStart: true });

  it('measures both windows again, each after an idle baseline of its own taken just before it', async () => {
    const events = [];
    let idles = 0;
    const idleOf = async (nodes) =>
      nodes.map(({ stack }) => {
        idles++;
        events.push(`idle ${stack}`);
        return { seconds: 2, cpu_s: 0.01 * idles, end_ms: idles };
      });
    let windows = 0;
    const measureWindow = async (ctx, name) => {
      windows++;
      events.push(`window ${name}`);
      if (windows === 1) throw late(); // the first attempt's first side began late
      const figures = { cpu_ms_per_request: 0.2, rps: 1000, requests_ok: 4000, latency_ms: { p50: 1, p99: 2 } };
      return { window: { start_ms: 10, end_ms: 20 }, node: {}, generator: {}, figures };
    };
    const [a, b] = await measureInterleaved(
      side('A'),
      side('B'),
      { names: ['pair1-A', 'pair1-B'], signal: new AbortController().signal, sliceS: 1 },
      { measureWindow, idleOf },
    );
    assert.deepEqual(events, [
      'idle A',
      'idle B',
      'window pair1-A',
      'window pair1-B',
      'idle A',
      'idle B',
      'window pair1-A',
      'window pair1-B',
    ]);
    assert.deepEqual([a.idle.end_ms, b.idle.end_ms], [3, 4], "the second attempt's baselines, not the first's");
  });

  it('a second late start ends the pair with its reason', async () => {
    const idleOf = async (nodes) => nodes.map(() => ({ seconds: 2, cpu_s: 0.01, end_ms: 1 }));
    const measureWindow = async () => {
      throw late();
    };
    const opts = { names: ['pair1-A', 'pair1-B'], signal: new AbortController().signal, sliceS: 1 };
    await assert.rejects(measureInterleaved(side('A'), side('B'), opts, { measureWindow, idleOf }), /2\.2 s late/);
  });
});
