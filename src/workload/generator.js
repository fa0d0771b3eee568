'use strict';
// What every load generator path shares inside an artillery worker: the spec
// the toolkit wrote for this pass (CHAINPERF_GENERATOR_SPEC), the parameter
// pool, the seeded choice of methods, and the recorder whose samples are
// written once the measured window is over.
//
// A generator kept across windows (kept-generator.js: A/B sessions, REPEAT,
// saturation steps) gets a spec with session_dir and no window: its workers
// register there, wait for each window's file (window-<k>.json: its
// instants, seed and samples folder, and an open loop's rate where the window
// sets one), send from the window's send_from until its stop_at with a
// recorder of that window's own, write its samples (and a quiet file once
// the window's requests are all answered), and wait for the next, until the
// session's end file appears. Its workers read the parameter pool when the
// first window opens: the generator may start while the node's history is
// still being created and the pool harvested (measure/run-generator.js).

const fs = require('node:fs');
const path = require('node:path');
const { threadId } = require('node:worker_threads');
const { seededRandom, weightedPicker } = require('../util/random');
const { newRecorder } = require('./samples');
const { shareOf } = require('./split');

/**
 * Calls fn once Date.now() has reached atMs. A timer may fire a millisecond before Date.now() reaches its instant:
 * samples written then would miss requests still completing inside the window. Does not keep the process alive.
 */
function when(atMs, fn) {
  const left = atMs - Date.now();
  if (left > 0) setTimeout(() => when(atMs, fn), left).unref();
  else fn();
}

/** Resolves once Date.now() has reached atMs (a timer alone may fire a millisecond early); keeps the process alive. */
function at(atMs) {
  return new Promise((resolve) => {
    const check = () => {
      const left = atMs - Date.now();
      if (left > 0) setTimeout(check, left);
      else resolve();
    };
    check();
  });
}

/** How often a kept generator's worker looks for the next window's file. */
const POLL_MS = 25;

/**
 * The sending times of a window made of slices ([from, to) pairs in time order, an interleaved A/B pair's): whether a
 * user may send now, and when the next slice begins. A cursor, not a search: asked before every request.
 */
function sliceClock(slices) {
  let i = 0;
  const skipPast = (now) => {
    while (i < slices.length && now >= slices[i][1]) i++;
  };
  return {
    sendingAt(now) {
      skipPast(now);
      return i < slices.length && now >= slices[i][0];
    },
    /** When the slice that is on now or comes next began or begins; null after the last. */
    nextFrom(now) {
      skipPast(now);
      return i < slices.length ? slices[i][0] : null;
    },
  };
}

/**
 * A window's recording: its samples written at stop_at (or by the first user to finish after it), its partial record
 * every second inside it (a window that fails before its end keeps it). Returns the flush. With the native sender
 * (spec.native_sender) the window's end and stop_at are taken on its records' clock (native.js), not on timers here,
 * and clock.now() is that clock.
 */
function armWindow(spec, recorder, extras, clock) {
  /** Writes this worker's samples once. */
  const flush = () => {
    if (!spec.samples_dir) return;
    const file = path.join(spec.samples_dir, `worker-${recorder.worker}.json`);
    const generator = spec.generator_index || 0; // which of GENERATORS processes this worker belongs to
    if (fs.existsSync(file)) return;
    fs.mkdirSync(spec.samples_dir, { recursive: true }); // made by chainperf, but not where an agent runs it (agent.js)
    // Written whole, then renamed: a generator kept across windows is read while it runs (kept-generator.js).
    const part = path.join(spec.samples_dir, `.worker-${recorder.worker}.json.part`);
    fs.writeFileSync(part, JSON.stringify({ ...recorder.snapshot(), ...extras, generator }));
    fs.renameSync(part, file);
  };
  if (!spec.samples_dir) return flush;
  if (!spec.native_sender) {
    when(spec.end_at, () => recorder.windowClosed());
    when(spec.stop_at, flush);
  }
  const partialDir = `${spec.samples_dir}.partial`; // beside the final samples, which stay one file per worker
  const partial = path.join(partialDir, `partial-${recorder.worker}.jsonl`);
  const drain = () => {
    if (Date.now() > spec.end_at + 1000) return clearInterval(timer);
    if (Date.now() < spec.start_at + 1000) return;
    fs.mkdirSync(partialDir, { recursive: true });
    fs.appendFileSync(partial, `${JSON.stringify(recorder.drain(Math.min(clock.now(), spec.end_at)))}\n`);
  };
  const timer = setInterval(drain, 1000).unref();
  return flush;
}

/**
 * A kept generator's window is over for this worker once the requests it sent are all answered (or failed): their
 * answers still load the node after stop_at. Writes `file` then, so that the orchestrator measures nothing (an idle
 * baseline, the other side's window) while they are out. Checked every 20 ms; does not keep the process alive.
 */
function markQuiet(recorder, file) {
  if (recorder.inFlight <= 0) return fs.writeFileSync(file, '');
  return setTimeout(() => markQuiet(recorder, file), 20).unref();
}

/** The seed a worker draws with: the pass's, this generator's share of it, and the worker's thread. */
const workerSeed = (spec) => (spec.seed || 0) + threadId * 7919;

const readPool = (spec) => JSON.parse(fs.readFileSync(spec.pool_file, 'utf8'));

function loadGenerator() {
  const spec = JSON.parse(fs.readFileSync(process.env.CHAINPERF_GENERATOR_SPEC, 'utf8'));
  // GENERATORS in containers of their own (SWARM_GENERATOR_NODES) may have the same process ids: their index tells
  // them apart
  const worker = `${spec.generator_index ? `g${spec.generator_index}-` : ''}${process.pid}-${threadId}`;
  if (spec.session_dir) return keptGenerator(spec, worker);
  const pool = readPool(spec);
  // Users keep sending until stop_at (a little after the window's end), so the load does not drop before the
  // node's CPU is read at the end edge; completions after end_at count only for requests up to that read.
  if (!(spec.stop_at >= spec.end_at)) spec.stop_at = spec.end_at;
  const random = seededRandom(workerSeed(spec));
  const pickMethod = weightedPicker(spec.mix);
  const recorder = newRecorder(spec, worker);
  const extras = {}; // what a workload adds to the samples (replay: its tally)
  const clock = { now: Date.now }; // the native sender sets its records' clock here
  const flush = armWindow(spec, recorder, extras, clock);
  return { spec, pool, random, pickMethod, recorder, flush, extras, clock, kept: false };
}

/**
 * A kept generator's worker registers in the session folder: the orchestrator waits for every registered worker. The
 * folder is made by chainperf, but not where an agent runs the generator (agent.js).
 */
function register(dir, worker) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `worker-${worker}`), '');
}

/**
 * A kept generator's g.sending() (inside the current window's sending time, and in one of its slices where it has
 * them: a user back from a late answer may find the next window loaded) and g.nextWindow() (poll: the wait for the
 * next window's file).
 */
function addWaits(g, poll) {
  g.sending = () => {
    const now = Date.now();
    return now >= g.spec.send_from && now < g.spec.stop_at && (!g.slices || g.slices.sendingAt(now));
  };
  let waiting = null;
  g.nextWindow = () => {
    const now = Date.now();
    const left = g.spec.stop_at - now;
    if (g.window > 0 && left > 0 && g.slices) {
      // between two slices: the next one; after the last, the window's end (its samples), then the next window
      const from = g.slices.nextFrom(now);
      return from === null ? at(g.spec.stop_at).then(() => g.nextWindow()) : at(from).then(() => true);
    }
    // A user that comes back while a window is loaded (its last answer came late) joins it rather than wait past it.
    if (g.window > 0 && left > 0) return at(g.spec.send_from).then(() => true);
    if (!waiting) waiting = poll().finally(() => (waiting = null));
    return waiting;
  };
}

/**
 * A worker of a generator kept across windows. g.spec, g.recorder, g.random, g.pickMethod and g.flush are the current
 * window's (read them at each use); g.nextWindow() resolves true at the next window's send_from, false at the
 * session's end (g.ended). g.onWindow hooks run as each window is loaded (the lean engine prepares its requests).
 * g.pool is null until the first window opens (the pool file is written by then).
 */
function keptGenerator(base, worker) {
  const g = {
    spec: { ...base, send_from: Infinity, start_at: Infinity, end_at: Infinity, stop_at: 0 }, // no window yet
    pool: null,
    random: null,
    pickMethod: null,
    recorder: null,
    flush: () => {},
    extras: {},
    kept: true,
    slices: null, // the current window's slices (an interleaved A/B pair), or null: it sends throughout
    ended: false,
    window: 0,
    onWindow: [],
    clock: { now: Date.now }, // the native sender sets its records' clock here
    quietFile: null, // the current window's quiet file (the native sender writes it once its requests are answered)
  };
  register(base.session_dir, worker);
  const open = (win) => {
    if (!g.pool) g.pool = readPool(base);
    const spec = { ...base, ...win };
    spec.seed = ((win.seed || 0) + 104729 * (base.generator_index || 0)) % 2147483647; // as split.js shares a seed
    // A window with a rate of its own (a saturation step): this generator's share of it, as split.js shares RATE.
    if (win.rate) spec.open_loop_rate = shareOf(win.rate, base.generators || 1, base.generator_index || 0);
    g.spec = spec;
    g.slices = Array.isArray(win.slices) && win.slices.length ? sliceClock(win.slices) : null;
    g.random = seededRandom(workerSeed(spec));
    g.pickMethod = weightedPicker(spec.mix);
    g.recorder = newRecorder(spec, worker);
    g.extras = {};
    g.flush = armWindow(spec, g.recorder, g.extras, g.clock);
    g.quietFile = spec.samples_dir ? path.join(spec.samples_dir, `quiet-${worker}`) : null;
    const { recorder, quietFile } = g;
    if (quietFile && !spec.native_sender) when(spec.stop_at, () => markQuiet(recorder, quietFile));
    for (const hook of g.onWindow) hook(g);
  };
  const poll = () =>
    new Promise((resolve) => {
      const look = () => {
        if (fs.existsSync(path.join(base.session_dir, 'end'))) {
          g.ended = true;
          return resolve(false);
        }
        const file = path.join(base.session_dir, `window-${g.window + 1}.json`);
        if (!fs.existsSync(file)) return setTimeout(look, POLL_MS);
        g.window++;
        const win = JSON.parse(fs.readFileSync(file, 'utf8'));
        open(win);
        // A window this worker came to after its end (a late start): its samples say it sent nothing.
        if (Date.now() >= win.stop_at) {
          g.flush();
          return setImmediate(look);
        }
        at(win.send_from).then(() => resolve(true));
      };
      look();
    });
  addWaits(g, poll);
  return g;
}

module.exports = { loadGenerator, at, sliceClock, POLL_MS };
