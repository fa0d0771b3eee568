'use strict';
// The measuring of an A/B session: pairs of windows, ABBA, in Stein's two
// stages. The first stage's spread says how many pairs the target needs
// (rounded up to as many AB as BA pairs).
// With AB_WINDOW=auto, the noise inside the first two pairs' windows says
// whether a longer window would reach it sooner (ab/window-length.js); if
// so, those pairs become a pilot and the stages start at that length. A
// session stops once the pairs the first stage asked for are measured, or at
// AB_MAX_PAIRS or AB_MAX_S.

const { fmtHeadline } = require('../measure/phases');
const { log } = require('../util/log');
const { pairedRatio, pairsNeeded, stage1Units, balancedUnits } = require('./stats');
const { blockOf, restartBoth } = require('./restarts');
const { measureSide } = require('./sides');
const { cpuPairs, fmtRatio } = require('./pairs');
const { chooseWindowLength, withinWindowVariance } = require('./window-length');
const { measureInterleaved, checkLateAnswers } = require('./interleave');

/**
 * One pair: the two windows in the pair's order (AB for odd k, BA for even), each with its figures. label names its
 * log lines: 'pair', or 'burn-in' for AB_BURN_IN_PAIRS; its windows are named after it, with 'stage2' before the
 * names of the stages that follow a pilot (whose pairs are numbered from 1 too): per-window files keep both.
 */
async function measurePair(k, block, A, B, o) {
  const { signal, lengthS, measure, label = 'pair', afterPilot = false } = o;
  const order = k % 2 ? [A, B] : [B, A];
  const pair = {
    pair: k,
    order: order.map((x) => x.key).join(''),
    ...(block === null ? {} : { block }),
    ...(o.interleave ? { interleaved: true } : {}),
  };
  const prefix = `${afterPilot ? 'stage2-' : ''}${label.replace('-', '')}`;
  if (o.interleave) {
    // AB_SLICE_S: both windows over one span, the side named first in the order taking the first slice
    const names = order.map((side) => `${prefix}${k}-${side.key}`);
    const windows = await o.measureBoth(order[0], order[1], { names, signal, sliceS: o.interleave, lengthS });
    for (const [i, side] of order.entries()) {
      pair[side.key.toLowerCase()] = windows[i];
      log(`${label} ${k} ${side.key}: ${fmtHeadline(windows[i].figures)} (in slices)`);
    }
    return pair;
  }
  for (const [i, side] of order.entries()) {
    const key = side.key.toLowerCase();
    pair[key] = await measure(side, order[1 - i], `${prefix}${k}-${side.key}`, signal, lengthS);
    log(`${label} ${k} ${side.key}: ${fmtHeadline(pair[key].figures)}`);
  }
  return pair;
}

/**
 * AB_BURN_IN_PAIRS: pairs measured before the stages and kept out of every interval (ab.burn_in). In A/A sessions the
 * first pair, always AB, cost B/A about 1% less than the pairs after it (docs/results.md): whatever makes a session's
 * first windows odd then falls on pairs no interval uses. With restarts, both nodes restart before them, and again
 * before the first stage's first pair (blockOf). Like the set-up, they count in neither AB_MAX_PAIRS nor AB_MAX_S.
 */
async function measureBurnIn(ab, A, B, { signal, measure, measureBoth, restart }) {
  const set = ab.settings;
  ab.burn_in = { pairs: [] };
  for (let k = 1; k <= set.burn_in_pairs; k++) {
    const what = `burn-in pair ${k} of ${set.burn_in_pairs} runs`;
    if (set.restart_pairs && k === 1) await restart([A, B], { signal, mode: set.generator, per: 1, what });
    const o = { signal, lengthS: null, measure, measureBoth, interleave: interleaveOf(set), label: 'burn-in' };
    ab.burn_in.pairs.push(await measurePair(k, null, A, B, o));
  }
  const n = ab.burn_in.pairs.length;
  log(`${n} burn-in pair${n === 1 ? '' : 's'} measured (in ab.json, in no interval: AB_BURN_IN_PAIRS)`);
  // a node too slow to answer within its slices: the stages measure whole windows (no interval has mixed pairs)
  if (set.interleave) checkLateAnswers(set, ab.burn_in.pairs, ab.warnings);
}

/** The slice length a pair is interleaved with (settings.interleave: AB_SLICE_S), or 0 for whole windows. */
const interleaveOf = (set) => (set.interleave ? set.slice_s : 0);

/**
 * After the first stage: how many pairs in all the target needs (Stein), logged; null while it cannot say. The pairs
 * measured (planned) are that many or one unit more, so that as many run AB as BA: ABBA order cancels an effect of a
 * window's place in its pair (the second of two windows a little dearer or cheaper) only in a whole number of ABBA
 * blocks. Rounding up depends on the first stage's spread alone, as the count itself does, so the interval keeps its
 * 95%.
 */
function stageNeed(ab, k, stage1, per) {
  const set = ab.settings;
  const units = pairsNeeded(cpuPairs(ab.pairs), stage1, set.target_pct);
  if (units === null) return null;
  const need = units * per;
  const planned = balancedUnits(units, per) * per;
  const more = planned > set.max_pairs ? ` (more than AB_MAX_PAIRS=${set.max_pairs}: the interval will be wider)` : '';
  const balance = planned > need ? `; ${planned} are measured, as many AB as BA (ABBA)` : '';
  log(`the spread of the first ${k} pairs asks for ${need} pairs in all for ±${set.target_pct}%${balance}${more}`);
  return { need, planned };
}

/**
 * When AB_WINDOW=auto chooses: after CHOICE_PAIRS pairs (whole units of the interval), or the first stage if it is
 * shorter. Early, so that a pilot costs little of AB_MAX_S; the choice looks only at the windows' halves, which say
 * nothing of the pairs' spread or mean, so pairs measured before it may stay in Stein's first stage.
 */
const CHOICE_PAIRS = 2;
const choiceAfter = (stage1, per) => Math.min(stage1, Math.ceil(CHOICE_PAIRS / per)) * per;

/** AB_WINDOW=auto: the window length that reaches the target soonest (logged), or null. */
function windowChoice(ab, { stage1, per, done }, { stageSeconds, elapsedS }) {
  const set = ab.settings;
  const choice = chooseWindowLength({
    units: stage1,
    done,
    within: withinWindowVariance(ab.pairs),
    lengthS: set.window_s,
    pairS: stageSeconds / ab.pairs.length,
    per,
    targetPct: set.target_pct,
    budgetS: set.max_s - elapsedS,
    pairsLeft: set.max_pairs - ab.pairs.length,
  });
  if (!choice) {
    log('AB_WINDOW=auto: the windows could not be split in halves (no CPU reading inside them); the length stays');
    return null;
  }
  const minutes = (c) =>
    `${c.length_s} s: ${c.units_needed * per} pairs, ${(c.seconds_left / 60).toFixed(1)} min left${c.fits === false ? ' (beyond AB_MAX_S or AB_MAX_PAIRS)' : ''}`;
  log(
    `AB_WINDOW=auto: the noise inside the first pairs' windows predicts ${choice.candidates.map(minutes).join('; ')}`,
  );
  return choice;
}

/**
 * One run of Stein's two stages at the session's window length (settings.window_s). Returns why it stopped, or
 * {pilot: choice} when AB_WINDOW=auto chose another length after its first pairs.
 */
async function measureStage(ab, A, B, { signal, clock, mayChoose, measure, measureBoth, restart, now }) {
  const set = ab.settings;
  const t0 = now();
  const per = set.restart_pairs || 1; // pairs per unit of the interval
  const stage1 = stage1Units(set);
  const mode = set.generator;
  let need = null; // {need, planned} once the first stage is measured
  for (let k = 1; clock.pairs < set.max_pairs; k++) {
    const { block, restart: restartNow } = blockOf(k, set.restart_pairs);
    // restarted and warmed up in the pair's order: each side's wait from its warm-up to its window is that of its place
    if (restartNow) await restart(k % 2 ? [A, B] : [B, A], { signal, mode, block, per });
    const lengthS = ab.pilot ? set.window_s : null;
    const o = { signal, lengthS, measure, measureBoth, interleave: interleaveOf(set), afterPilot: Boolean(ab.pilot) };
    ab.pairs.push(await measurePair(k, block, A, B, o));
    clock.pairs++;
    if (mayChoose && k === choiceAfter(stage1, per)) {
      const choice = windowChoice(
        ab,
        { stage1, per, done: k / per },
        {
          stageSeconds: (now() - t0) / 1000,
          elapsedS: (now() - clock.t0) / 1000,
        },
      );
      if (choice) ab.window_choice = choice;
      if (choice && !choice.stay) return { pilot: choice };
    }
    if (k === stage1 * per) {
      need = stageNeed(ab, k, stage1, per);
      ab.pairs_needed = need && need.need;
      ab.pairs_planned = need && need.planned;
    }
    const cpu = pairedRatio(cpuPairs(ab.pairs), { stage1 });
    const elapsed = (now() - clock.t0) / 1000;
    ab.progress.push({ pairs: k, ratio: cpu.ratio, ci95: cpu.ci95, elapsed_s: Math.round(elapsed) });
    log(
      `${k}${need ? ` of ${Math.min(need.planned, set.max_pairs)}` : ''} pairs in ${(elapsed / 60).toFixed(1)} min: B/A CPU per request ${fmtRatio(cpu)}, target ±${set.target_pct}%`,
    );
    if (need !== null && k >= need.planned)
      return `the ${need.need} pairs the first ${stage1 * per} asked for to reach ±${set.target_pct}% are measured${need.planned > need.need ? `, and ${need.planned - need.need} more for as many AB as BA pairs` : ''}`;
    if (elapsed + (now() - t0) / 1000 / k > set.max_s) return `AB_MAX_S=${set.max_s}: another pair would end after it`;
  }
  return `AB_MAX_PAIRS=${set.max_pairs} reached`;
}

/**
 * Burn-in pairs (AB_BURN_IN_PAIRS, ab.burn_in), then pairs of windows until the target, AB_MAX_PAIRS or AB_MAX_S; fills
 * ab.pairs, ab.progress, ab.pairs_needed, ab.pairs_planned, and with AB_WINDOW=auto ab.window_choice (and ab.pilot
 * when the first stage's length was left). Returns why it stopped.
 * measure, measureBoth, restart, now: how a window and an interleaved pair are measured, both nodes restarted and time
 * read (a unit test's own).
 */
async function measurePairs(ab, A, B, signal, fns = {}) {
  const { measure = measureSide, measureBoth = measureInterleaved, restart = restartBoth, now = Date.now } = fns;
  const set = ab.settings;
  if (set.burn_in_pairs) await measureBurnIn(ab, A, B, { signal, measure, measureBoth, restart });
  const clock = { t0: now(), pairs: 0 }; // after the burn-in: AB_MAX_PAIRS and AB_MAX_S count the stages' pairs
  const o = { signal, clock, measure, measureBoth, restart, now };
  const first = await measureStage(ab, A, B, { ...o, mayChoose: set.window === 'auto' });
  if (typeof first === 'string') return first;
  ab.pilot = { window_s: set.window_s, pairs: ab.pairs, progress: ab.progress };
  Object.assign(ab, { pairs: [], progress: [], pairs_needed: null, pairs_planned: null });
  set.window_s = first.pilot.length_s;
  log(
    `AB_WINDOW=auto: windows of ${set.window_s} s reach ±${set.target_pct}% sooner; the first ${ab.pilot.pairs.length} pairs were a pilot (in ab.json, in no interval), and the two stages start again`,
  );
  return measureStage(ab, A, B, { ...o, mayChoose: false }); // its first pair on new processes too (blockOf)
}

module.exports = { measurePairs };
