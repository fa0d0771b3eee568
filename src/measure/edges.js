'use strict';
// The node read at a window's edges: its CPU (with the cross-check, disk and
// memory counters) at a planned instant, the window planned on the CPU
// source's refreshes where it has them, the idle baseline, and the per-second
// samples behind the charts.

const { cpuDelta } = require('../figures');
const { readProcIo } = require('./cpu');
const { log } = require('../util/log');
const { sleepUntil } = require('../util/time');

/**
 * Reads the node's CPU (with its cross-check and disk counters) at a planned edge. onEdge() runs at the edge too, right
 * after the node's CPU and before the cross-check: what else belongs to the edge (the generator's CPU, the window's
 * hooks) must not wait for the Docker engine's stats, which took about a second on a loaded machine and put a fleet's
 * counters that much into the window. With a source read at its refreshes, onEdge() runs once that reading lands.
 */
async function readEdge(stack, edgeMs, signal, onEdge = () => {}) {
  if (stack.cpu.readEdge) {
    // A source with refreshes (attach): its edge is the refresh it reads, and the hooks take that same reading
    // (an attached fleet's replicas: attach-fleet.js), so they begin once it has landed.
    const cpu = await stack.cpu.readEdge(edgeMs, signal);
    onEdge();
    return { cpu, check: null, io: null };
  }
  await sleepUntil(edgeMs, signal);
  // The instant of the read, which a busy event loop can put later than planned.
  const atMs = Date.now();
  // A sampled source (cAdvisor) is read after the window, at its own sample instants; only the cross-check is read now.
  const cpu = stack.cpu.sampled ? null : await stack.cpu.read();
  onEdge();
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

/**
 * One idle baseline: node CPU over a quiet window of about `seconds`. A source readable at any instant is read at the
 * middle too: `halves`, the rate (cores) over each half.
 */
async function idleOnce(stack, seconds, signal, what = 'the idle baseline') {
  const w = planWindow(stack, Date.now() + 200, seconds);
  log(`measuring ${what} over ${((w.end - w.start) / 1000).toFixed(1)} s`);
  if (stack.cpu.sampled) {
    const { a, b } = await stack.cpu.edgesInside(w.start, w.end, signal);
    return { cpu_s: cpuDelta(a, b).total_s, seconds: (b.at_ms - a.at_ms) / 1000, start_ms: a.at_ms, end_ms: b.at_ms };
  }
  const a = await readEdge(stack, w.start, signal);
  const mid = stack.cpu.readEdge ? null : await readEdge(stack, (w.start + w.end) / 2, signal);
  const b = await readEdge(stack, w.end, signal);
  const [start, end] = [a.at_ms ?? w.start, b.at_ms ?? w.end]; // attach: the planned refreshes
  const idle = { cpu_s: cpuDelta(a.cpu, b.cpu).total_s, seconds: (end - start) / 1000, start_ms: start, end_ms: end };
  if (!mid) return idle;
  const rate = (x, y) => cpuDelta(x.cpu, y.cpu).total_s / Math.max(0.001, (y.at_ms - x.at_ms) / 1000);
  return { ...idle, halves: [rate(a, mid), rate(mid, b)].map((x) => Number(x.toFixed(4))) };
}

/** A node using this many cores or more with no load is busy with work of its own. */
const BUSY_CORES = 0.2;
/** A rate below this share of the one before it (the baseline's first half, or the last baseline) is falling... */
const FALLING = 0.75;
/** ...when it fell by this many cores at least (an idle node's own noise: a block sealed, a timer). */
const FALL_CORES = 0.02;
/** At most this many idle baselines measured again after the first. */
const MAX_AGAIN = 4;

/** An idle baseline's CPU in cores (CPU-s per s), null where its CPU was not read. */
const cpuRateOf = (idle) => (idle.cpu_s === null ? null : idle.cpu_s / Math.max(0.001, idle.seconds));
const coresOf = (idle) => cpuRateOf(idle) ?? 0;
const fell = (from, to) => from - to >= FALL_CORES && to < FALLING * from;

/**
 * Whether the node may still be settling over this baseline: its second half below its first; or busy (BUSY_CORES or
 * more) over the whole of it, and it the first, or below the one before (work that runs at a steady rate for a while,
 * such as geth's KZG initialisation on a loaded machine, falls between two baselines rather than inside one).
 */
function stillFalling(idle, before) {
  if (idle.halves && fell(idle.halves[0], idle.halves[1])) return true;
  if (coresOf(idle) < BUSY_CORES) return false;
  return !before || fell(coresOf(before), coresOf(idle));
}

/**
 * The idle baseline: node CPU over a quiet window of about `seconds`. A node that has just started may still be busy
 * with work of its own (geth initialises its KZG library in the background, a few CPU-seconds; a database opens and
 * compacts), and a baseline over its end would be subtracted from the window as if it were idle. So a baseline whose
 * second half fell below its first, or of BUSY_CORES or more (then for as long as each falls below the one before), is
 * measured again, up to MAX_AGAIN times; the last is the baseline. Those set aside are
 * kept (`settling`: their rates); `settled: false` when the last was still falling.
 */
async function measureIdle(stack, seconds, signal, what = 'the idle baseline') {
  return (await measureIdleTogether([{ stack, seconds }], signal, what))[0];
}

/**
 * measureIdle for several nodes at once (an interleaved A/B pair's two), each {stack, seconds, label} (label: the
 * node's name in the log): while any of them is still settling, all are measured again, so that each baseline ends
 * where the others do (those of one length), right before the window that follows. A node measured again only for
 * another's sake keeps no `settling` entry for it.
 */
async function measureIdleTogether(nodes, signal, what = 'the idle baseline') {
  const once = () => Promise.all(nodes.map((x) => idleOnce(x.stack, x.seconds, signal, what)));
  let idles = await once();
  const settling = nodes.map(() => []);
  let falling = idles.map((idle) => stillFalling(idle));
  for (let again = 0; falling.some(Boolean) && again < MAX_AGAIN; again++) {
    idles.forEach((idle, i) => {
      if (!falling[i]) return;
      const whose = nodes[i].label ? `${nodes[i].label}: ` : '';
      log(`${whose}the node was still settling over ${what} (${describeRate(idle)}): measuring it again`);
      settling[i].push({ cpu_s_per_s: Number(coresOf(idle).toFixed(4)), start_ms: idle.start_ms });
    });
    const before = idles;
    idles = await once();
    falling = idles.map((idle, i) => stillFalling(idle, before[i]));
  }
  return idles.map((idle, i) => (settling[i].length ? { ...idle, settling: settling[i], settled: !falling[i] } : idle));
}

const describeRate = (idle) =>
  idle.halves
    ? `${idle.halves[0].toFixed(3)} then ${idle.halves[1].toFixed(3)} cores`
    : `${coresOf(idle).toFixed(3)} cores`;

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

module.exports = { readEdge, planWindow, measureIdle, measureIdleTogether, startSampler, cpuRateOf, BUSY_CORES };
