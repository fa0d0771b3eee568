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

module.exports = { readEdge, planWindow, measureIdle, startSampler };
