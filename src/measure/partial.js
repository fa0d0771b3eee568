'use strict';
// A window that fails before its end (the node exits, Ctrl-C, the generator
// dies) keeps what was measured up to the failure: the load generator's
// workers append what completed every second (samples.js drain), and the
// node's CPU was sampled on every whole second. The partial window ends at
// the last CPU reading that all workers' records reach, so the CPU and the
// requests cover the same span. Sources read only at the edges (cAdvisor,
// a metrics endpoint) leave the CPU of a partial window unmeasured.

const fs = require('node:fs');
const path = require('node:path');
const { partialSnapshot, mergeSamples } = require('../workload/samples');
const { cpuPerRequestSeries, computeFigures, round } = require('../figures');

/** Each worker's partial record (its lines; a line cut by a kill is dropped). */
function readPartials(samplesDir) {
  const dir = `${samplesDir}.partial`;
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('partial-'))
    .map((f) =>
      fs
        .readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .flatMap((l) => {
          try {
            return l ? [JSON.parse(l)] : [];
          } catch {
            return [];
          }
        }),
    )
    .filter((lines) => lines.length);
}

/**
 * The generator's first request in the window so far, by its workers' partial records (written every second from a
 * second into the window): a time, null when none was sent yet, undefined when no worker has written a record yet.
 */
function firstRequestSoFar(samplesDir) {
  const records = readPartials(samplesDir);
  if (!records.length) return undefined;
  const firsts = records.map((lines) => lines[lines.length - 1].first_request_at).filter((t) => typeof t === 'number');
  return firsts.length ? Math.min(...firsts) : null;
}

/**
 * What a failed window measured, or null when nothing is usable.
 * @param {object} o
 * @param {object} o.stack the runtime stack (its CPU source)
 * @param {{start:number, end:number}} o.w the planned window
 * @param {string} o.samplesDir the window's samples folder (the partial records are in <it>.partial)
 * @param {object|null} o.startEdge the CPU read at the window's start, when it was
 * @param {{ticks:object[], memory:object[]}} o.sampler the per-second CPU and memory samples
 * @param {number} o.failedAtMs when the failure was seen
 */
function partialWindow({ stack, w, samplesDir, startEdge, sampler, failedAtMs }) {
  const records = readPartials(samplesDir);
  if (!records.length) return null;
  let cut = Math.min(failedAtMs, w.end, ...records.map((lines) => lines[lines.length - 1].upto_ms));
  const ticks = sampler.ticks.filter((t) => t.t_ms <= cut);
  let cpu = { user_s: null, system_s: null, total_s: null };
  const readable = startEdge && startEdge.cpu && startEdge.at_ms !== undefined && ticks.length;
  if (readable) {
    const last = ticks[ticks.length - 1];
    cut = last.t_ms;
    cpu = { user_s: null, system_s: null, total_s: round(last.total_s - startEdge.cpu.total_s, 6) };
  }
  if (cut <= w.start) return null;
  const samples = mergeSamples(records.map((lines) => partialSnapshot(lines, { start_at: w.start }, cut)));
  const cpuWindow = readable
    ? { start_ms: startEdge.at_ms, end_ms: cut, requests_ok: samples.okBetween(startEdge.at_ms, cut) }
    : null;
  const node = {
    cpu_source: { kind: stack.cpu.kind, describe: stack.cpu.describe },
    cpu_user_s: null,
    cpu_system_s: null,
    cpu_total_s: cpu.total_s,
    ...(cpuWindow ? { cpu_window: cpuWindow } : {}),
  };
  const memory = sampler.memory.filter((m) => m.t_ms <= cut);
  if (memory.length) {
    node.memory_peak_bytes = Math.max(...memory.map((m) => m.bytes));
    node.memory_mean_bytes = Math.round(memory.reduce((a, m) => a + m.bytes, 0) / memory.length);
  }
  return {
    window: { start_ms: w.start, end_ms: cut, partial: true },
    cpu,
    cpuWindow,
    node,
    samples,
    generator: {
      cpus: stack.generatorCpus || null,
      workers: samples.workers,
      before_window: samples.before_window,
      in_flight_at_start: samples.in_flight_at_start,
      in_flight_at_end: samples.in_flight_at_end,
      skipped: samples.skipped,
    },
    series: { requests: samples.series, cpu_per_request: cpuPerRequestSeries(ticks, samples.series), memory },
  };
}

/** Adds the figures of a partial window (with the idle baseline) to err.partialWindow. */
function partialFigures(err, idle) {
  const p = err && err.partialWindow;
  if (p && !p.figures)
    p.figures = computeFigures({ window: p.window, cpu: p.cpu, idle, samples: p.samples, cpuWindow: p.cpuWindow });
}

/** A failed run's report gets the partial window's figures and series (run.js). */
function applyPartialWindow(run, series, err) {
  const p = err && err.partialWindow;
  if (!p || !p.figures) return;
  run.window = p.window;
  run.figures = p.figures;
  run.node = { ...run.node, ...p.node };
  run.errors = p.samples.errors;
  run.generator = p.generator;
  Object.assign(series, p.series);
}

module.exports = { partialWindow, partialFigures, applyPartialWindow, readPartials, firstRequestSoFar };
