'use strict';
// A load generator kept running across the windows of an A/B session
// (AB_GENERATOR=kept). artillery takes about six seconds to start its workers,
// and a pass per window paid that in every window: a quarter of a pair's time
// with 10 s windows. Here each side's generator starts once, with its warm-up;
// for each window the toolkit writes the window's file (its instants, seed and
// samples folder) into the session folder, the generator's workers
// (workload/generator.js) pick it up within POLL_MS, send from send_from to
// stop_at with a recorder of that window's own, write their samples and idle
// until the next. The window is measured exactly as with a pass of its own:
// the same instants, edges, samples and late-start check.

const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { STARTUP_S } = require('../workload/artillery');
const { generatorPasses } = require('./generators');
const { shareOf } = require('../workload/split');
const { isReplay } = require('../workload/replay');
const { shapeOf } = require('../workload/shapes');
const { isWrite } = require('../workload/writes');
const { isSubscription } = require('../workload/subscriptions');

/** Seconds of load before a window opens: the generator runs already, only its users resume. */
const KEPT_LEAD_S = 1;
/** From writing a window's file to its send_from: the workers look for it every 25 ms. */
const PICKUP_MS = 250;
/** How long after a window's stop_at every registered worker has to write its samples. */
const SAMPLES_WAIT_MS = 10000;

/**
 * Why scenario s's workload cannot keep its generator across windows (null when it can). Both sides of a session must
 * be able to, or neither does: the two sides' load is made the same way. AB_GENERATOR, a session key read from A, is
 * the caller's (ab/sides.js generatorMode).
 */
function keptRefusal(s, mix) {
  if (s.CHAIN !== 'ethereum') return `the ${s.CHAIN} processor runs a pass per window`;
  if (isReplay(s.WORKLOAD)) return 'a replay runs a pass per window';
  if (shapeOf(s)) return 'a SHAPE runs a pass per window';
  if (s.COLD === 'yes') return 'COLD=yes restarts the node before each window';
  if (s.RATE && s.GENERATOR !== 'lean')
    return "an open loop through ethers is artillery's arrivals, which would go on between windows";
  const kinds = Object.keys(mix || {});
  if (kinds.some((m) => isWrite(m) || isSubscription(m))) return 'writes and subscriptions run a pass per window';
  return null;
}

/**
 * The scenario a run's kept generator starts with: a saturation search's open loop at its first rate (each step's
 * window file then carries the step's rate, which the workers take as theirs).
 */
const keptScenario = (s) => (s.SATURATE === 'yes' ? { ...s, RATE: s.SATURATE_START_RPS, RAMP_S: 0 } : s);

/** Writes file so that a reader never sees it half written. */
function writeWhole(file, doc) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(doc));
  fs.renameSync(`${file}.tmp`, file);
}

const registered = (dir) => fs.readdirSync(dir).filter((f) => /^worker-[^.]+$/.test(f));

/** A side's generator for the session: one artillery pass (GENERATORS of them) whose users wait for windows. */
class KeptGenerator {
  /**
   * @param {object} ctx the side's measuring context (s, stack, chain, spec, workDir)
   * @param {string} name the pass's name (its files in the work folder)
   * @param {AbortSignal} signal stops it
   */
  constructor(ctx, name, signal) {
    this.ctx = ctx;
    this.signal = signal;
    this.dir = path.join(ctx.workDir, `${name}.session`);
    this.count = 0;
    this.exit = null;
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(this.dir, { recursive: true });
    this.own = new AbortController();
    this.abort = () => this.own.abort(signal.reason);
    if (signal) signal.addEventListener('abort', this.abort, { once: true });
    this.passes = generatorPasses({
      scenario: ctx.s,
      stack: ctx.stack,
      spec: ctx.spec({ session_dir: this.dir, start_at: 0, end_at: 0, stop_at: 0 }),
      dir: ctx.workDir,
      name,
      processor: ctx.chain.processor,
      signal: this.own.signal,
    });
    this.ended = Promise.all(this.passes.map((p) => p.run.then((r) => ({ ...r, ...p.meta })))).then(
      (r) => (this.exit = { results: r }),
      (err) => (this.exit = { error: err }),
    );
    this.logName = path.basename(this.passes[0].meta.logFile);
  }

  exited() {
    if (this.exit.error) return this.exit.error;
    const bad = this.exit.results.find((r) => r.code !== 0) || this.exit.results[0];
    return new Error(
      `the load generator kept for the session exited (status ${bad.code}) before the window's samples were written; see ${path.basename(bad.logFile)}`,
    );
  }

  /** Waits until every registered worker (at least one) has written its samples into samplesDir. */
  async samplesOf(samplesDir, deadline) {
    for (;;) {
      if (this.signal && this.signal.aborted) throw this.signal.reason;
      if (this.exit) throw this.exited();
      const workers = registered(this.dir);
      const missing = workers.filter((w) => !fs.existsSync(path.join(samplesDir, `${w}.json`)));
      if (workers.length && !missing.length) return workers;
      if (Date.now() > deadline)
        throw new Error(
          workers.length
            ? `the load generator kept for the session did not write the window's samples (${missing.join(', ')}) within ${SAMPLES_WAIT_MS / 1000} s of its end; see ${this.logName}`
            : `the load generator kept for the session had not started a worker by the window's end; see ${this.logName}`,
        );
      await sleep(50);
    }
  }

  /**
   * Waits until every worker that wrote samples into samplesDir has its requests of that window answered (its quiet
   * file): requests still out after stop_at (a slow node answers in seconds) would load the node during what comes
   * next, an idle baseline or the other side's window, as a pass of its own does not (artillery exits only once they
   * are answered). A request times out after the scenario's REQUEST_TIMEOUT_MS, so the wait ends by then.
   */
  async quietOf(samplesDir, workers) {
    const deadline = Date.now() + (this.ctx.s.REQUEST_TIMEOUT_MS || 30000) + 2000;
    const quiet = (w) => fs.existsSync(path.join(samplesDir, w.replace(/^worker-/, 'quiet-'))); // worker-<id>: quiet-<id>
    while (workers.some((w) => !quiet(w)) && Date.now() < deadline) {
      if (this.signal && this.signal.aborted) throw this.signal.reason;
      if (this.exit) throw this.exited();
      await sleep(20);
    }
  }

  /** Waits until a worker has registered (it waits for windows), for up to timeoutMs; false when none did. */
  async ready(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    while (!registered(this.dir).length) {
      if (this.signal && this.signal.aborted) throw this.signal.reason;
      if (this.exit) throw this.exited();
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  /**
   * One window: its file written, its samples awaited. Resolves to what a pass of runGenerators resolves to (each
   * generator's index, cgroup, cores, offered load, status 0; no raw artillery output, which comes at the end).
   */
  async window(win, { waitMs = SAMPLES_WAIT_MS } = {}) {
    if (this.exit) throw this.exited();
    this.count++;
    writeWhole(path.join(this.dir, `window-${this.count}.json`), win);
    const left = win.stop_at - Date.now();
    if (left > 0) await sleep(left, null, { signal: this.signal });
    const workers = await this.samplesOf(win.samples_dir, win.stop_at + waitMs);
    await this.quietOf(win.samples_dir, workers);
    const n = this.passes.length;
    // A window with its own rate (a saturation step) offers each generator its share of it, as split.js shares RATE.
    const offered = (p) => (win.rate ? { rate: shareOf(win.rate, n, p.meta.index) } : p.meta.offered);
    return this.passes.map((p) => ({ ...p.meta, offered: offered(p), code: 0, rawFile: null }));
  }

  /**
   * The warm-up, as warmUp in session/prepare.js does it with a pass of its own, and the proof that the generator
   * runs: its workers sent requests. A generator slower to start than the warm-up is given a second one.
   */
  async warm(warmupS, samplesRoot) {
    const { s } = this.ctx;
    // The warm-up is handed over once a worker is up, so that both sides' nodes are warmed as long: the second side's
    // generator, started with the first's, is up at once, and a warm-up counted from the hand-over would load its node
    // longer than the first's by artillery's start-up (6 s more of 9 with a 3 s warm-up).
    const up = await this.ready(STARTUP_S * 3000);
    for (let attempt = 1; attempt <= 2; attempt++) {
      const from = Date.now();
      const lead = up ? PICKUP_MS / 1000 : attempt === 1 ? STARTUP_S : 0;
      const due = from + (lead + s.RAMP_S + Math.max(1, warmupS)) * 1000;
      const samplesDir = `${samplesRoot}-${attempt}`;
      fs.mkdirSync(samplesDir, { recursive: true });
      const win = { send_from: from, start_at: due, end_at: due, stop_at: due, samples_dir: samplesDir, seed: s.SEED };
      await this.window(win, { waitMs: STARTUP_S * 3000 });
      const sent = fs
        .readdirSync(samplesDir)
        .filter((f) => /^worker-.*\.json$/.test(f))
        .map((f) => JSON.parse(fs.readFileSync(path.join(samplesDir, f), 'utf8')))
        .some((x) => x.first_request_at !== null);
      if (sent) return attempt;
    }
    throw new Error('the load generator kept for the session sent no request during its warm-up');
  }

  /**
   * Asks the users to stop without waiting for artillery to exit: after a run's last window, artillery's exit (1-2 s)
   * then overlaps what the window's figures still wait for. stop() waits for it.
   */
  finish() {
    if (!this.exit) fs.writeFileSync(path.join(this.dir, 'end'), '');
  }

  /** Ends the session: the users stop, artillery exits and writes its output; killed if it has not in 10 s. */
  async stop() {
    if (!this.exit) {
      this.finish();
      await Promise.race([this.ended, sleep(10000)]);
    }
    if (!this.exit) this.own.abort(new Error('the load generator kept for the session did not exit when asked'));
    if (this.signal) this.signal.removeEventListener('abort', this.abort);
    await this.ended;
    return this.exit.results || [];
  }
}

module.exports = { KeptGenerator, keptRefusal, keptScenario, KEPT_LEAD_S, PICKUP_MS };
