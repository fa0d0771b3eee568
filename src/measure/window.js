'use strict';
// Measured windows. A window is planned before the load generator starts, so
// that the generator counts requests completing inside it while chainperf
// reads the node's counters at its two edges. Nothing here extrapolates: a
// figure comes from counter values read at the edges, or it is null.

const fs = require('node:fs');
const { copyScrubbed } = require('../util/scrub');
const path = require('node:path');
const { startupSOf, TAIL_MS } = require('../workload/artillery');
const { runGenerators, generatorGroups } = require('./generators');
const { settleReadings } = require('../workload/agent-client');
const { PICKUP_MS } = require('./kept-generator');
const { mergeSamples } = require('../workload/samples');
const { shapeOf, describeShape, shapeFigures } = require('../workload/shapes');
const { mergeWrites, subscriptionFigures } = require('../workload/write-figures');
const { cpuPerRequestSeries, cpuPerRequestBetween } = require('../figures');
const { partialWindow, firstRequestSoFar } = require('./partial');
const { LATE_START_MS, startedLate, throwIfFaultHeldBack } = require('./late');
const { readSteal } = require('./steal');
const { startWindowHooks } = require('./profile');
const { log } = require('../util/log');
const { planWindow, readEdge, startSampler } = require('./edges');
const { generatorRecord, nodeCpuOver, nodeRecord, addNamedAnswers } = require('./window-records');
const { addPrometheusCheck } = require('./prometheus-check');
const { slicedWindow, sendingTimes, sliceExtras, readInnerEdges, spansOf, READ_AHEAD_MS } = require('./slices');

function readSamples(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('worker-'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
}

/**
 * The generator's seed for a window: SEED and the window's name, the two sides of an A/B pair alike ("pair3-A",
 * "pair3-B"). With SEED alone every pass drew the same sequence, so each window asked for the very accounts and
 * slots the warm-up (seeded with SEED) and the windows before it had asked for, and found them cached: on a
 * state larger than the node's memory, its disk reads were those of a few thousand items, not of the state.
 * The same SEED still gives the same sequences, window by window.
 */
function windowSeed(seed, name) {
  let h = 2166136261; // FNV-1a of the name
  for (const c of name.replace(/-[AB]$/, '')) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return (seed + h) % 2147483647;
}

/**
 * Plans the window and starts the load generator for it (a pass of its own, or the window handed to the generator kept
 * for the session, kept-generator.js); its samples go to a clean folder. sliced ({slices, gapMs}): the window's slices,
 * planned by the caller, sent to the kept generator (its users send only inside them, up to gapMs before each end).
 */
function startLoad({ s, stack, chain, spec, workDir, signal, name, mix, startupS, kept, sliced }) {
  if (sliced && !kept) throw new Error('a window made of slices needs the load generator kept for the session');
  const sendFrom = sliced ? sliced.slices[0].from : kept ? Date.now() + PICKUP_MS : null;
  const w = sliced
    ? slicedWindow(sliced)
    : planWindow(stack, (sendFrom || Date.now()) + startupS * 1000 + s.RAMP_S * 1000, s.DURATION_S);
  const shape = shapeOf(s);
  if (shape) log(`${name}: SHAPE=${shape.kind}: ${describeShape(shape)}`);
  const samplesDir = path.join(workDir, `samples-${name}`);
  // a window measured again starts clean, its partial record too
  for (const dir of [samplesDir, `${samplesDir}.partial`]) fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(samplesDir);
  const lead = kept ? `a ${startupS} s lead-in of the generator kept running` : `${startupS} s generator start-up`;
  log(
    sliced
      ? `${name}: measuring ${w.slices.length} slices, ${(w.active_ms / 1000).toFixed(1)} s in all, over ${((w.end - w.start) / 1000).toFixed(0)} s from ${new Date(w.start).toISOString()} (the other side's slices between them)`
      : `${name}: measuring for ${((w.end - w.start) / 1000).toFixed(0)} s from ${new Date(w.start).toISOString()} (after ${lead}${s.RAMP_S ? ` and a ${s.RAMP_S} s ramp` : ''})`,
  );
  const instants = {
    start_at: w.start,
    end_at: w.end,
    // a window of slices stops its load before each slice's end (the gap), so nothing runs on past its last edge
    stop_at: sliced ? w.end : w.end + TAIL_MS,
    ...(sliced ? { slices: sendingTimes(w.slices, sliced.gapMs) } : {}),
    samples_dir: samplesDir,
    shape,
    seed: windowSeed(s.SEED, name),
    ...(mix ? { mix } : {}),
    // on a network (NETWORK_NODES): the answers that name the head are kept, for stale and backwards answers
    ...(stack.network ? { named_blocks: true } : {}),
  };
  const artillery = kept
    ? kept.window({ ...instants, send_from: sendFrom, ...(s.RATE ? { rate: s.RATE } : {}) }) // a saturation step's own
    : runGenerators({
        scenario: s,
        stack,
        spec: spec(instants),
        dir: workDir,
        name,
        processor: chain.processor,
        signal,
      });
  artillery.catch(() => {}); // awaited below; an early failure must not go unhandled meanwhile
  return { w, shape, samplesDir, artillery };
}

/**
 * Reads the node's counters at both edges of the window, the generator's CPU and the steal time with them,
 * and samples in between. m.keepPartial(err) rethrows err with what was measured until then.
 */
async function readEdges(m, { s, stack, name, reportDir, signal }) {
  const { w } = m;
  const group = stack.generatorGroup;
  // The node runs on this machine (host, compose; not SWARM_NODE): its cores' steal time is read here too.
  m.stealCpus = stack.runtime === 'attach' || stack.node.elsewhere ? undefined : stack.node.cpus || null;
  const perGenerator = (s.GENERATORS || 1) > 1 ? generatorGroups(stack, s.GENERATORS) : [];
  const cpuOf = (groups) => groups.map((g) => (g ? g.cpu() : null));
  // A hook may ask mid-window whether the load began late (the window is then measured again): by the generator's own
  // record, as collectSamples decides; no record a second into the window counts as no request.
  const loadBeganLate = () => {
    const first = firstRequestSoFar(m.samplesDir);
    return startedLate(first === undefined ? null : first, w);
  };
  // What else is read at each edge, at the edge (readEdge's onEdge): the generator's CPU, the steal time, and the
  // hooks (per-core load, NODE_PROFILE, the network's and the fleet's), which read their own counters as they start
  // and stop.
  let hooks = null;
  let explained = null;
  const atStart = () => {
    m.genStart = group ? group.cpu() : null;
    m.gensStart = cpuOf(perGenerator);
    m.stealStart = m.stealCpus === undefined ? null : readSteal(m.stealCpus);
    m.sampler = startSampler(stack, w, signal);
    hooks = startWindowHooks({ stack, name, window: { ...w, loadBeganLate }, reportDir });
  };
  const atEnd = () => {
    m.genEnd = group ? group.cpu() : null;
    m.gensEnd = cpuOf(perGenerator);
    m.stealEnd = m.stealCpus === undefined ? null : readSteal(m.stealCpus);
    explained = hooks.stop();
    explained.catch(() => {}); // awaited below, once the edge is read
  };
  try {
    // a window of slices: its first slice's start read a little ahead, as every slice's (slices.js READ_AHEAD_MS)
    m.startEdge = await readEdge(stack, w.slices ? w.start - READ_AHEAD_MS : w.start, signal, atStart);
  } catch (err) {
    if (hooks) hooks.cancel();
    if (m.sampler) await m.sampler.done;
    m.keepPartial(err);
  }
  const progress = setInterval(() => {
    log(
      `${name}: ${Math.round((Math.min(w.end, Date.now()) - w.start) / 1000)} s of ${Math.round((w.end - w.start) / 1000)} s`,
    );
  }, 10000);
  try {
    // a window of slices: the node's counters at every slice's edges, each slice a span of its own (m.spans)
    const inner = w.slices ? await readInnerEdges(stack, w.slices, signal) : [];
    m.endEdge = await readEdge(stack, w.end, signal, atEnd);
    if (w.slices) m.spans = spansOf([m.startEdge, ...inner, m.endEdge], w.slices);
  } catch (err) {
    await m.sampler.done;
    m.keepPartial(err);
  } finally {
    clearInterval(progress);
    if (!m.endEdge) hooks.cancel(); // a stop already begun at the edge is cut short too
  }
  m.explained = await explained;
  await m.sampler.done;
  // SWARM_GENERATOR_NODES: the generators' CPU at the edges, asked of their agents now that the edges are past
  [m.genStart, m.genEnd] = await settleReadings([m.genStart, m.genEnd]);
  m.gensStart = await settleReadings(m.gensStart);
  m.gensEnd = await settleReadings(m.gensEnd);
}

/** The generator's result and samples; a generator that failed, recorded nothing or started late fails the window. */
async function collectSamples(m, { reportDir, name, startupS }) {
  const { w } = m;
  const results = await m.artillery.catch(m.keepPartial);
  m.generatorRuns = results;
  for (const r of results.filter((x) => x.rawFile)) {
    // a generator kept for the session writes its output once, at the session's end
    const stem = `${name === 'measure' ? 'artillery' : `artillery-${name}`}${r.index ? `-g${r.index}` : ''}`;
    copyScrubbed(r.rawFile, path.join(reportDir, `${stem}.json`));
  }
  for (const r of results)
    if (r.code !== 0)
      throw new Error(
        `the load generator${results.length > 1 ? ` ${r.index}` : ''} exited with status ${r.code}; see ${path.basename(r.logFile)}`,
      );
  const snapshots = readSamples(m.samplesDir);
  const userError = snapshots.flatMap((x) => x.user_errors || [])[0];
  // a virtual user that failed stopped sending before the window's end: the window did not measure the load asked for
  if (userError) throw new Error(`a virtual user of the load generator failed: ${userError}; see artillery.log`);
  if (!snapshots.length) throw new Error('the load generator recorded nothing; see artillery.log');
  const samples = mergeSamples(snapshots);
  if (startedLate(samples.first_request_at, w)) {
    // the generator took longer than its start-up allowance (startupSOf) to start its workers: the window's start
    // had no load, its figures would mean nothing.
    const late =
      samples.first_request_at === null
        ? 'never sent a request'
        : `sent its first request ${((samples.first_request_at - w.start) / 1000).toFixed(1)} s after the window opened`;
    const err = new Error(
      `the load generator ${late} (it had ${startupS} s to start: is the machine overloaded?); the window did not measure the load`,
    );
    err.lateStart = true;
    throw err;
  }
  return { snapshots, samples };
}

/** NETWORK_NODES: the head lag's per-second series (not in run.json), or null. */
const keepUpSeries = (net) => (net && net.keep_up && net.keep_up.series) || null;

/** The window's per-second series, for the charts. */
const seriesOf = (m, stack, samples, resources) => ({
  requests: samples.series,
  cpu_per_request: stack.cpu.sampled
    ? cpuPerRequestBetween(m.sampler.ticks, samples)
    : cpuPerRequestSeries(m.sampler.ticks, samples.series),
  memory: m.sampler.memory,
  ...(resources ? { io: resources.io } : {}),
  ...(m.explained.per_core_series ? { per_core: m.explained.per_core_series } : {}),
  ...(m.explained.fleet && m.explained.fleet.series ? { replicas: m.explained.fleet.series } : {}),
  ...(keepUpSeries(m.explained.network) ? { head_lag: keepUpSeries(m.explained.network) } : {}),
});

/**
 * Runs the workload and measures one window of about DURATION_S.
 * @param {object} o
 * @param {object} o.s resolved scenario
 * @param {object} o.stack runtime stack (rpcUrl, cpu sources, generatorGroup, prometheus)
 * @param {object} o.chain chain module (its processor, its windowRecords hook)
 * @param {(over:object)=>object} o.spec builds the generator spec for a window
 * @param {boolean} [o.last] the run's last window: its kept generator ends once the samples are in
 * @param {boolean} [o.mayMeasureAgain] the caller measures the window again when its FAULT was held back in it
 * @returns {Promise<{window, cpu, node, samples, generator, series, cpu_ticks}>}
 */
async function measureWorkload(o) {
  const opts = {
    ...o,
    name: o.name === undefined ? 'measure' : o.name,
    startupS: o.startupS === undefined ? startupSOf(o.s) : o.startupS,
  };
  const { stack, signal, runId, name, warnings } = opts;
  const m = startLoad(opts);
  const { w, shape } = m;
  const window = { start_ms: w.start, end_ms: w.end, ...(w.slices ? { active_ms: w.active_ms } : {}) };
  m.startEdge = null;
  m.sampler = { ticks: [], memory: [], done: Promise.resolve() };
  // A window that fails before its end keeps what was measured until then (measure/partial.js).
  m.keepPartial = (err) => {
    if (!err.partialWindow)
      err.partialWindow = partialWindow({
        stack,
        w,
        samplesDir: m.samplesDir,
        startEdge: m.startEdge,
        sampler: m.sampler,
        failedAtMs: Date.now(),
      });
    throw err;
  };
  await readEdges(m, opts);
  const { snapshots, samples } = await collectSamples(m, opts);
  throwIfFaultHeldBack(m.explained, opts.mayMeasureAgain);
  // the run's last window, its samples in and its start in time: the kept generator may exit (measureRepeated)
  if (opts.kept && opts.last) opts.kept.finish();
  if (shape) window.shape = shapeFigures(shape, w.start, samples);

  const measuredCpu = await nodeCpuOver(m, stack, samples, signal);
  const { cpu, cpuWindow, resources } = measuredCpu;
  const node = nodeRecord(m, stack, measuredCpu, samples);
  addNamedAnswers(node, stack, snapshots, w); // on a network: stale and backwards answers
  await addPrometheusCheck(node, { stack, runId, w, signal, name, warnings });
  const generator = generatorRecord(m, opts, samples, snapshots);
  const series = seriesOf(m, stack, samples, resources);
  // The chain family's own records (Substrate: operations, transfers), through its hook.
  const own = opts.chain.windowRecords ? opts.chain.windowRecords(snapshots, (w.end - w.start) / 1000) : null;
  const writes = mergeWrites(snapshots);
  const subscriptions = subscriptionFigures(snapshots, window);
  return {
    window,
    cpu,
    cpuWindow,
    node,
    samples,
    generator,
    series,
    cpu_ticks: m.sampler.ticks, // the node's CPU read about every second: an A/B session splits its windows in halves
    // a window of slices: its first slices against its last, and its node between them (the other side's turns)
    ...(m.spans ? sliceExtras(m.spans, samples) : {}),
    ...(own ? { chainRecords: own.fields, chainWrites: own.writes } : {}),
    ...(writes ? { writes } : {}),
    ...(subscriptions ? { subscriptions } : {}),
  };
}

module.exports = { windowSeed, measureWorkload, LATE_START_MS };
