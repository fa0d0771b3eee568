'use strict';
// The two sides of an A/B session: each a node started, synced and
// harvested, warmed up back to back with the other, measured one window at a
// time while its partner idles, and torn down; and what the report says of
// each.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { redactScenario } = require('../scenario/resolve');
const { prepareNode, warmUp } = require('../session/prepare');
const { windowWithFigures } = require('../measure/phases');
const { measureIdle } = require('../measure/edges');
const { judgeStalls } = require('../measure/stall');
const { provenance } = require('../report/provenance');
const { log } = require('../util/log');
const { copyScrubbed, copyTailScrubbed } = require('../util/scrub');
const { windowFigures } = require('./figures');
const { windowHalves } = require('./window-length');
const { summarizeSideProfile } = require('./shared');
const { KEPT_LEAD_S, KeptGenerator, keptRefusal } = require('../measure/kept-generator');
const { loadMix } = require('../workload/artillery');

/** One side of the session: its scenario, folders, run record and (once started) measuring context. */
function newSide(key, resolved, { dir, runId }) {
  const reportDir = path.join(dir, key.toLowerCase());
  fs.mkdirSync(reportDir, { recursive: true });
  return {
    key,
    s: resolved.scenario,
    sources: resolved.sources,
    reportDir,
    workDir: fs.mkdtempSync(path.join(os.tmpdir(), `chainperf-ab-${runId}-${key}-`)),
    run: { phase: 'starting', warnings: [] },
    ctx: null,
    stack: null,
  };
}

/** Whether a node's CPU source can be read at any instant (not at cAdvisor's samples, an attached node's refreshes). */
const readAtAnyInstant = (cpu) => Boolean(cpu) && !cpu.sampled && !cpu.readEdge;

/** Node CPU seconds of the side not under load, read now (null when its source cannot be read at any instant). */
function partnerCpu(side) {
  const cpu = side.stack && side.stack.cpu;
  return readAtAnyInstant(cpu) ? cpu.read() : null;
}

/**
 * A side's measured window as ab.json records it, once its stalls are judged (a frozen node's window would look
 * healthy). halves: CPU per request in each half of the window, the noise inside it (AB_WINDOW=auto); partnerRate:
 * what the idle partner node spent meanwhile on the same machine, in CPU s/s: not in this window's figure, but it
 * shares the cores.
 */
function sideWindowRecord(side, name, w, { idle, halves, partnerRate }) {
  const stalled = judgeStalls([w], side.run.warnings, side.s.STALL_S);
  if (stalled) throw new Error(`${side.key}, ${name}: ${stalled}`);
  return {
    window: w.window,
    idle,
    node: w.node,
    generator: w.generator,
    figures: w.figures,
    compared: windowFigures(w),
    halves,
    partner_cpu_s_per_s: partnerRate === null ? null : Number(partnerRate.toFixed(6)),
  };
}

/**
 * Measures one window of `side` (idle baseline first, as in a run) while `other` stays up, idle; lengthS, when given,
 * in place of the side's DURATION_S (AB_WINDOW=auto).
 */
async function measureSide(side, other, name, signal, lengthS = null) {
  const { s } = side;
  const idle = s.IDLE_S > 0 ? await measureIdle(side.stack, s.IDLE_S, signal) : null;
  const p0 = await partnerCpu(other);
  const w = await windowWithFigures(side.ctx, name, idle, lengthS ? { over: { DURATION_S: lengthS } } : {});
  const p1 = await partnerCpu(other);
  const seconds = (w.window.end_ms - w.window.start_ms) / 1000;
  const partnerRate = p0 && p1 ? (p1.total_s - p0.total_s) / seconds : null;
  return sideWindowRecord(side, name, w, { idle, halves: windowHalves(w), partnerRate });
}

function sideRecord(side) {
  return {
    scenario_file: side.file,
    scenario_name: side.s.NAME,
    client: side.stack ? side.stack.client : { name: side.s.CLIENT, version: null },
    node: side.run.node || null,
    sync: side.run.sync || null,
    warnings: side.run.warnings,
    ...(side.profile ? { profile: side.profile } : {}),
    provenance: provenance({
      scenario: redactScenario(side.s),
      sources: side.sources,
      client: side.stack ? side.stack.client : { name: side.s.CLIENT },
      runtime: side.s.RUNTIME,
    }),
  };
}

/**
 * Starts both nodes (each synced and harvested). mode kept: each side's generator starts as soon as its node is synced
 * (its start-up overlaps the history and the harvest); its workers wait for warmBoth.
 */
async function startBoth(sides, { runId, signal, controller, mode = 'per-window' }) {
  for (const side of sides) {
    log(
      `${side.key}: ${side.file} (${side.s.CHAIN}/${side.s.CLIENT}, RUNTIME=${side.s.RUNTIME}, WORKLOAD=${side.s.WORKLOAD})`,
    );
    side.ctx = await prepareNode(side.s, {
      run: side.run,
      runId: `${runId}-${side.key.toLowerCase()}`,
      workDir: side.workDir,
      reportDir: side.reportDir,
      signal,
      warm: false,
      onSynced: (ctx) => {
        if (mode === 'kept') side.kept = new KeptGenerator(ctx, `session-${side.key}`, signal);
      },
      onStarting: (x) => {
        side.starting = x;
      },
      onStack: (x) => {
        side.stack = x;
      },
      onNodeExit: (info) =>
        controller.abort(
          new Error(
            `node ${side.key} ${info.restarted ? 'restarted' : 'exited'} during ${side.run.phase} (${info.signal ? `signal ${info.signal}` : `status ${info.code}`}); see ${side.key.toLowerCase()}/node.log`,
          ),
        ),
    });
  }
  return sides;
}

/**
 * How both sides' load generators run (AB_GENERATOR, read from A): kept across windows when both sides' workloads
 * allow it, else a pass per window on both, so that the two sides' load is made the same way.
 */
function generatorMode(sides, setting) {
  if (setting !== 'kept') return { mode: 'per-window', reason: `AB_GENERATOR=${setting}` };
  for (const side of sides) {
    const why = keptRefusal(side.s, loadMix(side.s.WORKLOAD)); // known before the side starts: prepareNode's mix
    if (why) return { mode: 'per-window', reason: `${side.key}: ${why}` };
  }
  return { mode: 'kept', reason: null };
}

/**
 * Both sides warmed up back to back with the same workload, after the pool is settled. mode kept: each side's
 * generator (started by startBoth) runs its warm-up and stays for the session (measure/kept-generator.js).
 */
async function warmBoth(sides, signal, mode = 'per-window') {
  // Both kept generators have started (startBoth, as each node was synced) before either warm-up, and each warm-up is
  // counted from its generator's first worker (KeptGenerator.warm). Without both, A/A sessions leaned to B higher
  // (1.02, 1.06, 1.077 in a CI run): B's node was warmed longer (docs/results.md, A/B sessions).
  for (const side of sides) {
    side.run.phase = 'warmup';
    if (mode === 'kept') {
      log(
        `warmup-${side.key}: warming up for ${side.s.WARMUP_S} s (not measured); its load generator stays for the session`,
      );
      await side.kept.warm(side.s.WARMUP_S, path.join(side.workDir, `samples-warmup-${side.key}`));
      side.ctx.kept = side.kept;
      side.ctx.startupS = KEPT_LEAD_S;
      continue;
    }
    await warmUp(side.s, side.stack, {
      spec: side.ctx.spec,
      workDir: side.workDir,
      signal,
      log,
      name: `warmup-${side.key}`,
    });
  }
}

/** Ends the generators kept for the session; artillery's own output of each goes into its side's folder. */
async function stopKept(sides) {
  for (const side of sides.filter((x) => x.kept)) {
    for (const r of await side.kept.stop())
      if (r.rawFile && fs.existsSync(r.rawFile))
        copyScrubbed(r.rawFile, path.join(side.reportDir, `artillery-session${r.index ? `-g${r.index}` : ''}.json`));
  }
}

/** Tears both sides down and keeps their node logs and artillery logs. */
async function teardownBoth(sides) {
  for (const side of sides) {
    summarizeSideProfile(side);
    if (side.stack) {
      // NETWORK_NODES: network nodes lost, blocks not handed over, transactions refused
      if (side.stack.network) side.run.warnings.push(...side.stack.network.watch.problems());
      if (side.stack.startWarnings) side.run.warnings.push(...side.stack.startWarnings); // a swarm task restarted once
      log(`${side.key}: tearing down`);
      await side.stack.teardown();
      for (const e of side.stack.teardownErrors || []) side.run.warnings.push(`teardown: ${e}`);
      if (side.stack.nodeLog && fs.existsSync(side.stack.nodeLog))
        copyTailScrubbed(side.stack.nodeLog, path.join(side.reportDir, 'node.log'), 400);
    }
    try {
      for (const f of fs.readdirSync(side.workDir).filter((x) => /\.artillery\.log$/.test(x))) {
        copyScrubbed(path.join(side.workDir, f), path.join(side.reportDir, f));
      }
    } finally {
      fs.rmSync(side.workDir, { recursive: true, force: true }); // it holds the generator's spec, with the node's URL
    }
  }
}

module.exports = {
  newSide,
  partnerCpu,
  readAtAnyInstant,
  sideWindowRecord,
  measureSide,
  sideRecord,
  startBoth,
  generatorMode,
  warmBoth,
  stopKept,
  teardownBoth,
};
