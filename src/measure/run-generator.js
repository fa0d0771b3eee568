'use strict';
// How a run's windows get their load (REPEAT_GENERATOR): one generator kept
// across the warm-up and every window (measure/kept-generator.js), started as
// soon as the node is synced, or a pass per window. measure/phases.js measures
// the windows; this module starts, warms and ends their generator.

const fs = require('node:fs');
const path = require('node:path');
const { log } = require('../util/log');
const { KeptGenerator, keptRefusal, keptScenario, KEPT_LEAD_S } = require('./kept-generator');
const { copyScrubbed } = require('../util/scrub');

/**
 * How a run's windows (REPEAT's, or a saturation search's steps) get their load (REPEAT_GENERATOR): one generator kept
 * across them, or a pass per window when the setting or the workload asks for one (the reason said).
 */
function repeatGeneratorMode(s, mix) {
  if (s.REPEAT_GENERATOR !== 'kept') return { mode: 'per-window', reason: `REPEAT_GENERATOR=${s.REPEAT_GENERATOR}` };
  const why = keptRefusal(keptScenario(s), mix);
  return why ? { mode: 'per-window', reason: why } : { mode: 'kept', reason: null };
}

/** A run's kept generator: its name (its files), and what it runs, for the log. */
function keptRole(s) {
  if (s.SATURATE === 'yes') return { name: 'saturate', what: 'saturation', runs: 'every step', each: 'step' };
  if (s.REPEAT > 1) return { name: 'repeat', what: 'repetitions', runs: `the ${s.REPEAT} windows`, each: 'window' };
  return { name: 'measure', what: 'window', runs: 'the window', each: 'window' };
}

/**
 * Starts the run's kept generator where its windows keep one (ctx.repeatMode), as soon as the node is synced
 * (prepareNode's onSynced): artillery's start-up, 4 to 7 s, then overlaps the history and the harvest rather than
 * delaying the warm-up. Its workers send nothing until the warm-up's window opens, and read the pool then.
 */
function launchRunGenerator(ctx) {
  const { s } = ctx;
  ctx.repeatMode = repeatGeneratorMode(s, ctx.mix);
  if (ctx.repeatMode.mode !== 'kept') return;
  const role = keptRole(s);
  log(`${role.what}: starting its load generator while the node is prepared (it waits for the warm-up)`);
  ctx.kept = new KeptGenerator({ ...ctx, s: keptScenario(s) }, role.name, ctx.signal);
  ctx.keptName = role.name;
}

/**
 * The warm-up and how the run's windows get their load (ctx.repeatMode, REPEAT_GENERATOR). Kept: one artillery pass
 * (GENERATORS of them), started by launchRunGenerator (or now), runs the warm-up (WARMUP_S, at least 1 s of
 * unmeasured load that proves its workers up), then idles; its users wait for each window
 * (measure/kept-generator.js), which then has a 1.25 s lead-in in place of artillery's start-up; a saturation step's
 * window carries its own rate. measureRepeated and measureSaturation end it (releaseGenerator). Per-window (the
 * setting, or a workload that needs a pass per window): the warm-up's pass, then a pass per window. warmUp: the
 * session's warm-up pass (session/prepare.js), which this layer is given.
 */
async function startRunGenerator(ctx, warmUp) {
  const { s } = ctx;
  const role = keptRole(s);
  if (!ctx.repeatMode) launchRunGenerator(ctx);
  if (ctx.repeatMode.mode !== 'kept') {
    if (s.SATURATE === 'yes' || s.REPEAT > 1)
      log(`${role.what}: a load generator pass per ${role.each} (${ctx.repeatMode.reason})`);
    await warmUp(s, ctx.stack, { spec: ctx.spec, workDir: ctx.workDir, signal: ctx.signal, log });
    return;
  }
  log(`${role.what}: one load generator runs the warm-up and ${role.runs} (REPEAT_GENERATOR=kept)`);
  if (s.WARMUP_S > 0) log(`warmup: warming up for ${s.WARMUP_S} s (not measured)`);
  await ctx.kept.warm(s.WARMUP_S, path.join(ctx.workDir, `samples-${role.name}-warmup`));
  ctx.startupS = KEPT_LEAD_S;
}

/**
 * Ends the kept generator; its artillery output into the report folder: artillery.json for a single window's (as a
 * pass of its own writes it), artillery-repeat*.json, artillery-saturate*.json.
 */
async function releaseGenerator(ctx) {
  const { kept } = ctx;
  if (!kept) return;
  ctx.kept = null;
  ctx.startupS = undefined; // later windows (PROFILE=methods) start a pass of their own
  const stem = ctx.keptName === 'measure' ? 'artillery' : `artillery-${ctx.keptName}`;
  for (const r of await kept.stop().catch(() => []))
    if (r.rawFile && fs.existsSync(r.rawFile))
      copyScrubbed(r.rawFile, path.join(ctx.reportDir, `${stem}${r.index ? `-g${r.index}` : ''}.json`));
}

module.exports = { repeatGeneratorMode, launchRunGenerator, startRunGenerator, releaseGenerator };
