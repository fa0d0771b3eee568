'use strict';
// Measured windows. A window is planned before the load generator starts, so
// that the generator counts requests completing inside it while chainperf
// reads the node's counters at its two edges. Nothing here extrapolates: a
// figure comes from counter values read at the edges, or it is null.

const fs = require('node:fs');
const { copyScrubbed } = require('../util/scrub');
const os = require('node:os');
const path = require('node:path');
const { runArtillery, STARTUP_S, TAIL_MS } = require('../workload/artillery');
const { mergeSamples } = require('../workload/samples');
const { shapeOf, describeShape, shapeFigures } = require('../workload/shapes');
const { mergeReplay } = require('../workload/replay');
const { mergeWrites, subscriptionFigures } = require('../workload/write-figures');
const { cpuDelta, cpuPerRequestSeries, cpuPerRequestBetween } = require('../figures');
const { readProcIo } = require('./cpu');
const { findStall } = require('./stall');
const { partialWindow } = require('./partial');
const { readSteal, stealBetween, cpusOf } = require('./steal');
const { startWindowHooks } = require('./profile');
const { ioBetween } = require('./io');
const { log } = require('../util/log');
const { sleep, sleepUntil } = require('../util/time');

/** Reads the node's CPU (with its cross-check and disk counters) at a planned edge. */
async function readEdge(stack, edgeMs, signal) {
  if (stack.cpu.readEdge) return { cpu: await stack.cpu.readEdge(edgeMs, signal), check: null, io: null };
  await sleepUntil(edgeMs, signal);
  // The instant of the read, which a busy event loop can put later than planned.
  const atMs = Date.now();
  // A sampled source (cAdvisor) is read after the window, at its own sample instants; only the cross-check is read now.
  const cpu = stack.cpu.sampled ? null : await stack.cpu.read();
  const check = stack.cpuCheck ? await stack.cpuCheck.read() : null;
  const io = stack.node.pid && stack.runtime === 'host' ? readProcIo(stack.node.pid) : null;
  // the node cgroup's disk and memory counters (measure/io.js)
  const cg = stack.ioCounters ? stack.ioCounters.read() : null;
  return { cpu, check, io, cg, at_ms: atMs };
}

/** Plans a window of about `seconds` from fromMs, aligned to the CPU source's refreshes when it has them. */
function planWindow(stack, fromMs, seconds) {
  if (!stack.cpu.align) return { start: fromMs, end: fromMs + seconds * 1000 };
  const start = stack.cpu.align(fromMs);
  const period = stack.cpu.periodMs;
  return { start, end: start + Math.max(1, Math.round((seconds * 1000) / period)) * period };
}

/** The idle baseline: node CPU over a quiet window of about `seconds`. */
async function measureIdle(stack, seconds, signal) {
  const w = planWindow(stack, Date.now() + 200, seconds);
  log(`measuring the idle baseline over ${((w.end - w.start) / 1000).toFixed(1)} s`);
  if (stack.cpu.sampled) {
    const { a, b } = await stack.cpu.edgesInside(w.start, w.end, signal);
    return { cpu_s: cpuDelta(a, b).total_s, seconds: (b.at_ms - a.at_ms) / 1000, start_ms: a.at_ms, end_ms: b.at_ms };
  }
  const a = await readEdge(stack, w.start, signal);
  const b = await readEdge(stack, w.end, signal);
  const [start, end] = [a.at_ms ?? w.start, b.at_ms ?? w.end]; // attach: the planned refreshes
  return { cpu_s: cpuDelta(a.cpu, b.cpu).total_s, seconds: (end - start) / 1000, start_ms: start, end_ms: end };
}

/**
 * Samples node CPU and memory on every whole second of the window, for the charts (sources readable at any instant
 * only).
 */
function startSampler(stack, window, signal) {
  const ticks = [];
  const memory = [];
  if (stack.cpu.readEdge || stack.cpu.sampled) return { ticks, memory, done: Promise.resolve() };
  const done = (async () => {
    for (let t = Math.ceil(window.start / 1000) * 1000; t < window.end && !signal.aborted; t += 1000) {
      try {
        await sleepUntil(t, signal);
      } catch {
        return;
      }
      try {
        ticks.push({ t_ms: t, total_s: (await stack.cpu.read()).total_s });
        const mem = stack.memoryBytes ? stack.memoryBytes() : null;
        if (mem !== null) memory.push({ t_ms: t, bytes: mem });
      } catch {
        return; // the source is gone (the node exited): the edge read says so; the series ends here
      }
    }
  })();
  return { ticks, memory, done };
}

function readSamples(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('worker-'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
}

/**
 * A generator whose first request left this long after the window opened started late (a replay's first call is due at
 * the opening).
 */
const LATE_START_MS = 500;

const cpuSum = (c) => (Number.isFinite(c.total_s) ? c.total_s : c.user_s + c.system_s);

/** Number of cpus in a cpuset list such as "1", "2-3" or "0,2-3"; 0 for null. */
const cpuCount = (list) => (list ? cpusOf(list).length : 0);

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

/** Plans the window and starts the load generator for it; its samples go to a clean folder. */
function startLoad({ s, stack, chain, spec, workDir, signal, name, mix, startupS }) {
  const w = planWindow(stack, Date.now() + startupS * 1000 + s.RAMP_S * 1000, s.DURATION_S);
  const shape = shapeOf(s);
  if (shape) log(`${name}: SHAPE=${shape.kind}: ${describeShape(shape)}`);
  const samplesDir = path.join(workDir, `samples-${name}`);
  fs.rmSync(samplesDir, { recursive: true, force: true }); // a window measured again starts clean
  fs.mkdirSync(samplesDir);
  log(
    `${name}: measuring for ${((w.end - w.start) / 1000).toFixed(0)} s from ${new Date(w.start).toISOString()} (after ${startupS} s generator start-up${s.RAMP_S ? ` and a ${s.RAMP_S} s ramp` : ''})`,
  );
  const artillery = runArtillery({
    scenario: s,
    spec: spec({
      start_at: w.start,
      end_at: w.end,
      stop_at: w.end + TAIL_MS,
      samples_dir: samplesDir,
      shape,
      seed: windowSeed(s.SEED, name),
      ...(mix ? { mix } : {}),
    }),
    dir: workDir,
    name,
    processor: chain.processor,
    group: stack.generatorGroup,
    signal,
  });
  artillery.catch(() => {}); // awaited below; an early failure must not go unhandled meanwhile
  return { w, shape, samplesDir, artillery };
}

/**
 * Reads the node's counters at both edges of the window, the generator's CPU and the steal time with them,
 * and samples in between. m.keepPartial(err) rethrows err with what was measured until then.
 */
async function readEdges(m, { stack, name, reportDir, signal }) {
  const { w } = m;
  const group = stack.generatorGroup;
  // The node runs on this machine (host, compose): its cores' steal time is read here too.
  m.stealCpus = stack.runtime === 'attach' ? undefined : stack.node.cpus || null;
  try {
    m.startEdge = await readEdge(stack, w.start, signal);
  } catch (err) {
    m.keepPartial(err);
  }
  m.genStart = group ? group.cpu() : null;
  m.stealStart = m.stealCpus === undefined ? null : readSteal(m.stealCpus);
  m.sampler = startSampler(stack, w, signal);
  const hooks = startWindowHooks({ stack, name, window: w, reportDir }); // per-core load, NODE_PROFILE
  const progress = setInterval(() => {
    log(
      `${name}: ${Math.round((Math.min(w.end, Date.now()) - w.start) / 1000)} s of ${Math.round((w.end - w.start) / 1000)} s`,
    );
  }, 10000);
  try {
    m.endEdge = await readEdge(stack, w.end, signal);
  } catch (err) {
    await m.sampler.done;
    m.keepPartial(err);
  } finally {
    clearInterval(progress);
    if (!m.endEdge) hooks.cancel();
  }
  m.genEnd = group ? group.cpu() : null;
  m.stealEnd = m.stealCpus === undefined ? null : readSteal(m.stealCpus);
  m.explained = await hooks.stop();
  await m.sampler.done;
}

/** The generator's result and samples; a generator that failed, recorded nothing or started late fails the window. */
async function collectSamples(m, { reportDir, name, startupS }) {
  const { w } = m;
  const result = await m.artillery.catch(m.keepPartial);
  copyScrubbed(result.rawFile, path.join(reportDir, name === 'measure' ? 'artillery.json' : `artillery-${name}.json`));
  if (result.code !== 0)
    throw new Error(`the load generator exited with status ${result.code}; see ${path.basename(result.logFile)}`);
  const snapshots = readSamples(m.samplesDir);
  if (!snapshots.length) throw new Error('the load generator recorded nothing; see artillery.log');
  const samples = mergeSamples(snapshots);
  if (samples.first_request_at === null || samples.first_request_at > w.start + LATE_START_MS) {
    // artillery took longer than STARTUP_S to start its workers: the window's start had no load, its figures would mean
    // nothing.
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

/** The node's CPU over the window, with the span its requests are counted over; cAdvisor's resources when sampled. */
async function nodeCpuOver(m, stack, samples, signal) {
  const { w, startEdge, endEdge } = m;
  if (stack.cpu.sampled) {
    // The CPU window runs between the first and last cAdvisor samples inside the planned one; its requests are counted
    // between the same instants.
    const { a, b, samples: cpuSamples } = await stack.cpu.edgesInside(w.start, w.end, signal);
    m.sampler.ticks.push(...cpuSamples.map((x) => ({ t_ms: x.at_ms, total_s: x.total_s })));
    return {
      cpu: cpuDelta(a, b),
      cpuWindow: { start_ms: a.at_ms, end_ms: b.at_ms, requests_ok: samples.okBetween(a.at_ms, b.at_ms) },
      resources: stack.cpu.resources ? await stack.cpu.resources(a.at_ms, b.at_ms, signal) : null,
    };
  }
  // Read at the edges: the requests are counted between the instants of the two reads (a late read must not
  // leave the CPU and the requests over different spans). Attach reads refreshes at the planned edges.
  const cpuWindow =
    startEdge.at_ms !== undefined
      ? {
          start_ms: startEdge.at_ms,
          end_ms: endEdge.at_ms,
          requests_ok: samples.okBetween(startEdge.at_ms, endEdge.at_ms),
        }
      : null;
  return { cpu: cpuDelta(startEdge.cpu, endEdge.cpu), cpuWindow, resources: null };
}

/** The second CPU source over the same window; compared as rates when the first one is sampled. */
function addCpuCheck(node, m, stack, cpu, cpuWindow) {
  const { startEdge, endEdge } = m;
  if (!startEdge.check || !endEdge.check) return;
  node.cpu_check = {
    kind: stack.cpuCheck.kind,
    describe: stack.cpuCheck.describe,
    ...cpuDelta(startEdge.check, endEdge.check),
  };
  if (stack.cpu.sampled) {
    // Read at other instants than the cAdvisor samples: compared as CPU seconds per second.
    node.cpu_check.seconds = (endEdge.check.at_ms - startEdge.check.at_ms) / 1000;
    node.cpu_check.cpu_s_per_s = Number((node.cpu_check.total_s / node.cpu_check.seconds).toFixed(6));
    node.cpu_s_per_s = Number((cpu.total_s / ((cpuWindow.end_ms - cpuWindow.start_ms) / 1000)).toFixed(6));
  }
}

/** Disk, network, block I/O and memory of the node over the window. */
function addNodeResources(node, m, stack, samples, resources) {
  const { startEdge, endEdge, sampler } = m;
  if (resources) {
    for (const k of ['disk_read_bytes', 'disk_write_bytes', 'network_rx_bytes', 'network_tx_bytes'])
      node[k] = resources[k];
    sampler.memory.push(...resources.memory);
  }
  if (startEdge.io && endEdge.io) {
    node.disk_read_bytes = endEdge.io.read_bytes - startEdge.io.read_bytes;
    node.disk_write_bytes = endEdge.io.write_bytes - startEdge.io.write_bytes;
  }
  if (startEdge.cg && endEdge.cg)
    node.io = ioBetween(
      startEdge.cg,
      endEdge.cg,
      samples.okBetween(startEdge.cg.at_ms, endEdge.cg.at_ms),
      stack.ioCounters.describe,
    );
  if (sampler.memory.length) {
    const b = sampler.memory.map((x) => x.bytes);
    node.memory_peak_bytes = Math.max(...b);
    node.memory_mean_bytes = Math.round(b.reduce((x, y) => x + y, 0) / b.length);
  }
}

/** The node's request counters from Prometheus: only a cross-check, so a failure to read them is a warning. */
async function addPrometheusCheck(node, { stack, runId, w, signal, name, warnings }) {
  if (!stack.prometheus) return;
  try {
    Object.assign(node, await prometheusCrossCheck(stack, runId, w, signal));
  } catch (err) {
    if (signal.aborted) throw err;
    // Only a cross-check: the figures stand without it.
    node.rpc_requests = null;
    const warning = `the Prometheus cross-check is missing for ${name} (${err.message}): the figures come from the node's own counters and stand without it`;
    log(`warning: ${warning}`);
    if (warnings && !warnings.includes(warning)) warnings.push(warning);
  }
}

function nodeRecord(m, stack, { cpu, cpuWindow, resources }, samples) {
  const node = {
    cpu_source: {
      kind: stack.cpu.kind,
      describe: stack.cpu.describe,
      ...(stack.cpu.periodMs ? { refresh_ms: stack.cpu.periodMs } : {}),
    },
    cpu_user_s: cpu.user_s,
    cpu_system_s: cpu.system_s,
    cpu_total_s: cpu.total_s,
  };
  if (cpuWindow) node.cpu_window = cpuWindow;
  if (m.explained.per_core) node.per_core = m.explained.per_core;
  const steal = stealBetween(m.stealStart, m.stealEnd, m.stealCpus);
  if (steal) node.steal = steal;
  addCpuCheck(node, m, stack, cpu, cpuWindow);
  addNodeResources(node, m, stack, samples, resources);
  return node;
}

/** The load generator's own record: its workers, its CPU on its cores, replay misses, a stall. */
function generatorRecord(m, { stack, s }, samples, snapshots) {
  const { w, genStart, genEnd } = m;
  const genCpu = genStart && genEnd ? Number((cpuSum(genEnd) - cpuSum(genStart)).toFixed(6)) : null;
  const answered = samples.ok + samples.failed;
  const generator = {
    cpus: stack.generatorCpus,
    workers: samples.workers,
    before_window: samples.before_window,
    in_flight_at_end: samples.in_flight_at_end,
    skipped: samples.skipped,
    cores: cpuCount(stack.generatorCpus) || os.cpus().length,
    cpu_s: genCpu,
    cpu_us_per_request: genCpu !== null && answered ? Number(((genCpu * 1e6) / answered).toFixed(1)) : null,
  };
  const replay = mergeReplay(snapshots);
  if (replay) generator.replay = replay;
  const stall = findStall(samples, w, s.STALL_S);
  if (stall) generator.stall = stall;
  if (genCpu !== null)
    generator.cpu_utilization = Number((genCpu / ((w.end - w.start) / 1000) / generator.cores).toFixed(3));
  return generator;
}

/**
 * Runs the workload and measures one window of about DURATION_S.
 * @param {object} o
 * @param {object} o.s resolved scenario
 * @param {object} o.stack runtime stack (rpcUrl, cpu sources, generatorGroup, prometheus)
 * @param {object} o.chain chain module (its processor, its windowRecords hook)
 * @param {(over:object)=>object} o.spec builds the generator spec for a window
 * @returns {Promise<{window, cpu, node, samples, generator, series}>}
 */
async function measureWorkload(o) {
  const opts = {
    ...o,
    name: o.name === undefined ? 'measure' : o.name,
    startupS: o.startupS === undefined ? STARTUP_S : o.startupS,
  };
  const { stack, signal, runId, name, warnings } = opts;
  const m = startLoad(opts);
  const { w, shape } = m;
  const window = { start_ms: w.start, end_ms: w.end };
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
  if (shape) window.shape = shapeFigures(shape, w.start, samples);

  const measuredCpu = await nodeCpuOver(m, stack, samples, signal);
  const { cpu, cpuWindow, resources } = measuredCpu;
  const node = nodeRecord(m, stack, measuredCpu, samples);
  await addPrometheusCheck(node, { stack, runId, w, signal, name, warnings });
  const generator = generatorRecord(m, opts, samples, snapshots);
  const series = {
    requests: samples.series,
    cpu_per_request: stack.cpu.sampled
      ? cpuPerRequestBetween(m.sampler.ticks, samples)
      : cpuPerRequestSeries(m.sampler.ticks, samples.series),
    memory: m.sampler.memory,
    ...(resources ? { io: resources.io } : {}),
    ...(m.explained.per_core_series ? { per_core: m.explained.per_core_series } : {}),
  };
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
    ...(own ? { chainRecords: own.fields, chainWrites: own.writes } : {}),
    ...(writes ? { writes } : {}),
    ...(subscriptions ? { subscriptions } : {}),
  };
}

/** The node's own request counters through Prometheus over the window: a cross-check of the generator's counts. */
async function prometheusCrossCheck(stack, runId, w, signal) {
  const out = {};
  await sleep(1500, signal); // let the first scrape after the window land
  // A counter's rise over the window, as of the scrapes (1 s apart) before each edge; null when either is missing.
  const rise = async (counter) => {
    const q = `sum(${counter}{run_id="${runId}"})`;
    const [a, b] = [await stack.prometheus.valueAt(q, w.start), await stack.prometheus.valueAt(q, w.end)];
    return a !== null && b !== null ? b - a : null;
  };
  const metric = (stack.requestsMetric && stack.requestsMetric.requests) || 'rpc_requests';
  out.rpc_requests = await rise(metric);
  const gc = stack.requestsMetric && stack.requestsMetric.gcCycles;
  if (gc) {
    const cycles = await rise(gc); // Go GC cycles the node ran in the window
    if (cycles !== null) out.gc_cycles = cycles;
  }
  const label = stack.requestsMetric && stack.requestsMetric.requestsByLabel;
  if (label)
    out.rpc_requests_by_method = await requestsByLabel(
      stack.prometheus,
      `sum by (${label}) (${metric}{run_id="${runId}"})`,
      label,
      w,
    );
  return out;
}

/** Rise of a counter per label value over the window, from two instant queries at its edges. */
async function requestsByLabel(prometheus, query, label, w) {
  if (!prometheus.vectorAt) return null;
  const [a, b] = [await prometheus.vectorAt(query, w.start, label), await prometheus.vectorAt(query, w.end, label)];
  if (!b) return null;
  const out = {};
  for (const [key, value] of Object.entries(b)) {
    const rise = value - ((a && a[key]) || 0);
    if (rise > 0) out[key] = rise;
  }
  return out;
}

module.exports = { windowSeed, measureWorkload, measureIdle, planWindow, readEdge, cpuCount };
