'use strict';
// AB_SLICE_S: an A/B pair measured as two interleaved windows. On a shared or
// virtual machine the speed of the cores moves over tens of seconds, and in a
// pair of whole windows measured one after the other that movement falls
// between A and B. Here both sides' windows run over one span, taking turns
// in slices of about a second (measure/slices.js): each side's kept generator
// sends only in its own slices, each node's counters are read at every edge
// of its slices, and each side's figures are its own slices' sums. What a
// pair of whole windows measures, the same way, with the machine's slow
// changes falling on both sides alike.

const { windowWithFigures } = require('../measure/phases');
const { measureIdleTogether } = require('../measure/edges');
const { planSlices } = require('../measure/slices');
const { PICKUP_MS } = require('../measure/kept-generator');
const { windowSeed } = require('../measure/window');
const { log } = require('../util/log');
const { readAtAnyInstant, sideWindowRecord } = require('./sides');

/**
 * Each slice's load stops this long before its end: its answers come in before the other side's slice begins (geth
 * --dev under 32 users in a closed loop answered in up to 85 ms; with 50 ms, 0.2-1.4% of them came after).
 */
const SLICE_GAP_MS = 100;
/** Slices shorter than this would be mostly gap. */
const MIN_SLICE_S = 0.5;
/** A side with more than this share of its answers after its slices' ends answers too slowly for slices. */
const LATE_SHARE = 0.01;

/** The session key's own check (AB_SLICE_S, read from A): 0, or long enough to be more than its gap. */
const sliceProblem = (sa) =>
  sa.AB_SLICE_S > 0 && sa.AB_SLICE_S < MIN_SLICE_S
    ? `AB_SLICE_S=${sa.AB_SLICE_S}: a slice must be at least ${MIN_SLICE_S} s (its load stops ${SLICE_GAP_MS} ms before its end), or 0 for whole windows`
    : null;

/** Why the session measures whole windows, known before the nodes start (null: it may interleave). */
function interleaveRefusal(sides, settings) {
  if (!settings.slice_s) return 'AB_SLICE_S=0';
  if (settings.generator !== 'kept')
    return `the load generators run a pass per window (${settings.generator_reason || 'AB_GENERATOR'})`;
  const [a, b] = sides;
  if (a.s.DURATION_S !== b.s.DURATION_S) return "A's and B's DURATION_S differ";
  for (const side of sides) {
    if (side.s.RATE) return `${side.key}: an open loop (RATE) runs whole windows`;
    if (side.s.REPLICAS > 1) return `${side.key}: a fleet (REPLICAS) runs whole windows`;
  }
  return null;
}

/** Why, once both nodes run, a side's node cannot be read at every slice's edges (null: it can). */
function stackRefusal(sides) {
  for (const side of sides) {
    const cpu = side.stack && side.stack.cpu;
    if (!readAtAnyInstant(cpu))
      return `${side.key}: its node's CPU (${cpu ? cpu.kind : 'none'}) is read at its source's own instants, not at any`;
  }
  return null;
}

/** Settles settings.interleave (and interleave_reason) once both nodes run; logs the choice. */
function settleInterleave(settings, sides) {
  const why = interleaveRefusal(sides, settings) || stackRefusal(sides);
  settings.interleave = !why;
  if (why) settings.interleave_reason = why;
  log(
    why
      ? `pairs of whole windows, one side after the other (${why})`
      : `each pair interleaved: A and B take turns in slices of about ${settings.slice_s} s (AB_SLICE_S)`,
  );
}

/**
 * After the burn-in pairs: a side whose answers came after its slices' ends (more than LATE_SHARE of them) answers too
 * slowly for slices; the session goes on with whole windows and says why. Returns whether it did.
 */
function checkLateAnswers(settings, pairs, warnings) {
  for (const p of pairs)
    for (const key of ['a', 'b']) {
      const cw = p[key] && p[key].node && p[key].node.cpu_window;
      if (!cw || !cw.requests_ok || cw.answered_outside_slices / cw.requests_ok <= LATE_SHARE) continue;
      const share = ((100 * cw.answered_outside_slices) / cw.requests_ok).toFixed(1);
      const why = `${key.toUpperCase()} answered ${share}% of its requests after its slices ended in burn-in pair ${p.pair}`;
      Object.assign(settings, { interleave: false, interleave_reason: why });
      warnings.push(`${why}: its node answers too slowly for slices of ${settings.slice_s} s; whole windows instead`);
      log(`${why}: the pairs after the burn-in are whole windows`);
      return true;
    }
  return false;
}

/** What a node spent between its own slices (the other side's were on), in CPU s/s; null without a reading. */
const betweenRate = (w) =>
  w.between_slices && w.between_slices.seconds > 0 ? w.between_slices.cpu_s / w.between_slices.seconds : null;

/**
 * Both idle baselines over the same seconds (both nodes idle at once, both measured again while either settles), each
 * side's IDLE_S long; null for 0.
 */
async function idleBoth(sides, signal, idleOf) {
  const measured = sides.filter((x) => x.s.IDLE_S > 0);
  const idles = await idleOf(
    measured.map((x) => ({ stack: x.stack, seconds: x.s.IDLE_S, label: x.key })),
    signal,
  );
  return sides.map((x) => (measured.includes(x) ? idles[measured.indexOf(x)] : null));
}

/**
 * Measures one interleaved pair: both idle baselines at once, then both windows over one span, `first` taking the
 * first slice. names: the two windows' names; sliceS: AB_SLICE_S; lengthS, when given, in place of DURATION_S
 * (AB_WINDOW=auto). Resolves to the two sides' window records, first's then second's. A window whose generator began
 * late is measured again once, both sides with it, after idle baselines of their own: each window's baseline is the one
 * just before it. fns: the window and idle measurements (a unit test's stubs).
 */
async function measureInterleaved(first, second, { names, signal, sliceS, lengthS = null }, fns = {}) {
  const { measureWindow = windowWithFigures, idleOf = measureIdleTogether } = fns;
  const sides = [first, second];
  const perSideS = lengthS || first.s.DURATION_S;
  for (let attempt = 1; ; attempt++) {
    const [idleA, idleB] = await idleBoth(sides, signal, idleOf);
    // far enough ahead for both kept generators to have picked their windows up
    const plan = planSlices({
      fromMs: Date.now() + PICKUP_MS + 250,
      perSideMs: perSideS * 1000,
      sliceMs: sliceS * 1000,
      seed: windowSeed(first.s.SEED, names[0]),
    });
    const over = lengthS ? { DURATION_S: lengthS } : {};
    const runs = await Promise.allSettled([
      measureWindow(first.ctx, names[0], idleA, { over, sliced: { slices: plan.first, gapMs: SLICE_GAP_MS } }),
      measureWindow(second.ctx, names[1], idleB, { over, sliced: { slices: plan.second, gapMs: SLICE_GAP_MS } }),
    ]);
    const failed = runs.find((r) => r.status === 'rejected');
    if (failed && failed.reason.lateStart && attempt === 1 && !signal.aborted) {
      log(`${names.join(', ')}: ${failed.reason.message}; the pair is measured again, after new idle baselines`);
      continue;
    }
    if (failed) throw failed.reason;
    const [wa, wb] = runs.map((r) => r.value);
    // each side's partner: the other, between its own slices, while this side's were on
    return [
      sideWindowRecord(first, names[0], wa, { idle: idleA, halves: wa.slice_halves, partnerRate: betweenRate(wb) }),
      sideWindowRecord(second, names[1], wb, { idle: idleB, halves: wb.slice_halves, partnerRate: betweenRate(wa) }),
    ];
  }
}

module.exports = {
  measureInterleaved,
  settleInterleave,
  checkLateAnswers,
  sliceProblem,
  interleaveRefusal,
  SLICE_GAP_MS,
};
