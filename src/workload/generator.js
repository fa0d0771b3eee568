'use strict';
// What every load generator path shares inside an artillery worker: the spec
// the toolkit wrote for this pass (CHAINPERF_GENERATOR_SPEC), the parameter
// pool, the seeded choice of methods, and the recorder whose samples are
// written once the measured window is over.

const fs = require('node:fs');
const path = require('node:path');
const { threadId } = require('node:worker_threads');
const { seededRandom, weightedPicker } = require('../util/random');
const { newRecorder } = require('./samples');

/**
 * Calls fn once Date.now() has reached atMs. A timer may fire a millisecond before Date.now() reaches its instant:
 * samples written then would miss requests still completing inside the window. Does not keep the process alive.
 */
function when(atMs, fn) {
  const left = atMs - Date.now();
  if (left > 0) setTimeout(() => when(atMs, fn), left).unref();
  else fn();
}

function loadGenerator() {
  const spec = JSON.parse(fs.readFileSync(process.env.CHAINPERF_GENERATOR_SPEC, 'utf8'));
  // Users keep sending until stop_at (a little after the window's end), so the load does not drop before the
  // node's CPU is read at the end edge; completions after end_at count only for requests up to that read.
  if (!(spec.stop_at >= spec.end_at)) spec.stop_at = spec.end_at;
  const pool = JSON.parse(fs.readFileSync(spec.pool_file, 'utf8'));
  const random = seededRandom(spec.seed + threadId * 7919);
  const pickMethod = weightedPicker(spec.mix);
  const recorder = newRecorder(spec, `${process.pid}-${threadId}`);
  const extras = {}; // what a workload adds to the samples (replay: its tally)
  /** Writes this worker's samples once (at the window's end, or by the first user to finish after it). */
  const flush = () => {
    if (!spec.samples_dir) return;
    const file = path.join(spec.samples_dir, `worker-${recorder.worker}.json`);
    const generator = spec.generator_index || 0; // which of GENERATORS processes this worker belongs to
    if (!fs.existsSync(file)) fs.writeFileSync(file, JSON.stringify({ ...recorder.snapshot(), ...extras, generator }));
  };
  if (spec.samples_dir) {
    when(spec.end_at, () => recorder.windowClosed());
    when(spec.stop_at, flush);
    // Every second inside the window, what completed since: a window that fails before its end keeps it.
    const partialDir = `${spec.samples_dir}.partial`; // beside the final samples, which stay one file per worker
    const partial = path.join(partialDir, `partial-${recorder.worker}.jsonl`);
    const drain = () => {
      if (Date.now() < spec.start_at + 1000 || Date.now() > spec.end_at + 1000) return;
      fs.mkdirSync(partialDir, { recursive: true });
      fs.appendFileSync(partial, `${JSON.stringify(recorder.drain(Math.min(Date.now(), spec.end_at)))}\n`);
    };
    setInterval(drain, 1000).unref();
  }
  return { spec, pool, random, pickMethod, recorder, flush, extras };
}

module.exports = { loadGenerator };
