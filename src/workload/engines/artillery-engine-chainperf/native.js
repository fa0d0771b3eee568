'use strict';
// LEAN_SENDER=native: the lean engine's closed loops sent and timed by a
// program in C (native-sender.c, one thread, epoll), the rest kept here.
//
// A Node.js client spends more CPU per request in its event loop and socket
// calls than a C client spends in all (docs/results.md: Node.js's own floor
// over WebSocket is 1.28x the C client's), so the lean engine's own paths
// (http.js, ws.js) cannot come within 1.1x of wrk. Here the engine still
// draws each window's requests (the same ring, seed and parameters), hands
// them to the sender with the window's instants and slices, and records every
// request with the window's recorder as the other paths do, from the sender's
// records: when each was sent and answered (the sender's clock is Date.now()'s),
// its latency, and its outcome; an answer that is not a plain result comes
// back whole and is judged here by the same functions (responseFailure,
// parseWhole). The records are applied in their own time order, so the
// window's edges (its end, its samples at stop_at, a kept window's quiet
// file) are taken on the records' clock, never on a timer that could run
// ahead of records still in the pipe.

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { senderArgs, ringBytes } = require('./native-wire');
const { countOutcome } = require('./counters');

const TIMEOUT = Object.freeze({ kind: 'timeout', message: 'timeout' });
const HEAD_BYTES = 16;

/**
 * The sender of one worker. window() hands it a window; lane() adds a closed-loop user; done(k) resolves once window
 * k's stop_at has passed and its requests are all answered (or failed). judge(status, body) is the engine's test of
 * an answer the sender did not find to be a plain result (null for a result); outcome(where, request, failure) is told
 * where each completion fell ('before', 'window', 'after'), for the engine's counters (request: its ring entry).
 */
class NativeSender {
  constructor(bin, rpcUrl, { connections, timeoutMs, judge, outcome }) {
    this.judge = judge;
    this.outcome = outcome;
    this.windows = new Map(); // k -> {recorder, ring, spec, flush, quiet, closed, flushed, done, waiters}
    this.clock = 0; // the sender's clock as of its last record
    this.nextEdge = Infinity; // the next instant at which a window's end or stop_at falls
    this.lastK = -1; // windowOf's last lookup
    this.lastWindow = undefined;
    this.rest = null; // the bytes of a record not yet whole
    this.failed = null;
    this.lanes = 0;
    this.released = 0;
    this.stderr = '';
    this.child = spawn(bin, senderArgs(rpcUrl, { connections, timeoutMs }), { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk) => this.read(chunk));
    this.child.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-2000);
      process.stderr.write(d);
    });
    this.child.stdin.on('error', () => {}); // a sender that died: its exit says why
    this.child.on('error', (err) => this.fail(new Error(`the native sender (${bin}) did not start: ${err.message}`)));
    this.child.on('exit', (code, signal) => {
      if (this.closing) return;
      const how = signal ? `signal ${signal}` : `status ${code}`;
      const said = this.stderr.trim().split('\n').pop() || '';
      this.fail(new Error(`the native sender exited (${how}) before the pass was over${said ? `: ${said}` : ''}`));
    });
  }

  /**
   * Window k: its spec's instants (a single pass sends from the first lane on: send_from 0), slices, recorder, ring
   * and the functions that write its samples and (a kept generator's) its quiet file.
   */
  window(k, { spec, recorder, ring, flush, quiet = null }) {
    const slices = Array.isArray(spec.slices) ? spec.slices : [];
    const from = spec.send_from === undefined ? 0 : spec.send_from;
    const head = `W ${k} ${from} ${spec.stop_at} ${slices.length} ${slices.flat().join(' ')} `;
    const bytes = ringBytes(ring);
    this.nextEdge = -Infinity; // its edges are looked at with the next record
    this.lastK = -1;
    this.windows.set(k, {
      recorder,
      ring,
      spec,
      flush,
      quiet,
      closed: false,
      flushed: false,
      done: false,
      waiters: [],
    });
    this.send(Buffer.concat([Buffer.from(`${head.replace(/ +$/, '')} ${bytes.length}\n`), bytes]));
  }

  /** One more closed-loop user. */
  lane() {
    this.lanes++;
    this.send(Buffer.from('L\n'));
  }

  /** A user is done; once every user is, the sender is told to exit. */
  release() {
    if (++this.released >= this.lanes) this.close();
  }

  /** Resolves once window k is done; rejects if the sender fails first. */
  done(k) {
    const w = this.windows.get(k);
    if (this.failed) return Promise.reject(this.failed);
    if (!w || w.done) return Promise.resolve();
    return new Promise((resolve, reject) => w.waiters.push({ resolve, reject }));
  }

  send(buf) {
    if (!this.failed && !this.closing) this.child.stdin.write(buf);
  }

  fail(err) {
    if (this.failed) return;
    this.failed = err;
    for (const w of this.windows.values()) for (const x of w.waiters.splice(0)) x.reject(err);
  }

  close() {
    if (this.closing) return;
    this.closing = true;
    this.child.stdin.end();
  }

  kill() {
    this.closing = true;
    this.child.kill('SIGKILL');
  }

  /**
   * The window's edges the clock has passed: its end (those in flight then), then its samples at stop_at. Called for
   * every record: the windows are looked at only once the clock reaches the next edge.
   */
  advance(t) {
    this.clock = t;
    if (t < this.nextEdge) return;
    this.nextEdge = Infinity;
    for (const w of this.windows.values()) {
      if (!w.closed && t >= w.spec.end_at) {
        w.closed = true;
        w.recorder.windowClosed();
      }
      if (!w.flushed && t >= w.spec.stop_at) {
        w.flushed = true;
        w.flush();
      }
      if (!w.closed) this.nextEdge = Math.min(this.nextEdge, w.spec.end_at);
      else if (!w.flushed) this.nextEdge = Math.min(this.nextEdge, w.spec.stop_at);
    }
  }

  /** Applies the records in chunk (and the piece of one the last chunk ended with). */
  read(chunk) {
    const buf = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    let at = 0;
    for (;;) {
      const used = this.record(buf, at);
      if (!used) break;
      at += used;
    }
    this.rest = at < buf.length ? Buffer.from(buf.subarray(at)) : null;
  }

  /** The record at `at`: applied, and its length; 0 when it is not whole yet. */
  record(buf, at) {
    if (buf.length - at < HEAD_BYTES) return 0;
    const type = buf[at];
    const kind = buf[at + 1];
    const k = buf.readUInt16LE(at + 2);
    const idx = buf.readUInt32LE(at + 4);
    const t = buf.readDoubleLE(at + 8);
    let used = HEAD_BYTES;
    if (type === 0x43 /* C */) {
      if (buf.length - at < used + 8) return 0;
      const latency = buf.readDoubleLE(at + used);
      used += 8;
      let failure = null;
      if (kind === 1) failure = TIMEOUT;
      else if (kind === 2 || kind === 3) {
        const extra = kind === 3 ? 8 : 4;
        if (buf.length - at < used + extra) return 0;
        const len = buf.readUInt32LE(at + used + extra - 4);
        if (buf.length - at < used + extra + len) return 0;
        const body = buf.subarray(at + used + extra, at + used + extra + len);
        failure =
          kind === 2 ? { kind: 'other', message: body.toString() } : this.judge(buf.readUInt32LE(at + used), body);
        used += extra + len;
      }
      this.advance(t);
      const w = this.windowOf(k);
      if (w) {
        const request = w.ring[idx];
        this.outcome(w.recorder.completed(request.method, latency, failure, Math.floor(t)), request, failure);
      }
      return used;
    }
    this.advance(t);
    const w = this.windowOf(k);
    if (type === 0x53 /* S */ && w) w.recorder.started(Math.floor(t));
    else if (type === 0x44 /* D */ && w) {
      w.done = true;
      if (w.quiet) w.quiet();
      for (const x of w.waiters.splice(0)) x.resolve();
      this.windows.delete(k);
      this.lastK = -1;
    }
    return used;
  }

  /** Window k's entry (the last one looked up is kept: records come window by window). */
  windowOf(k) {
    if (k !== this.lastK) {
      this.lastK = k;
      this.lastWindow = this.windows.get(k);
    }
    return this.lastWindow;
  }
}

/**
 * The engine's side of LEAN_SENDER=native for worker state g (generator.js): the sender started, and each window's
 * ring (drawn by the engine's buildRing), recorder and samples handed over; its records feed the window's recorder
 * and the engine's counters (counters.js). A single pass is window 1, sent from the first user on; a
 * kept generator hands over each window as it is loaded. judge(status, body): the engine's test of an answer.
 */
function startNative(g, { overWs, buildRing, judge }) {
  const native = new NativeSender(g.spec.native_sender, g.spec.rpc_url, {
    connections: g.spec.ws_connections || 4,
    timeoutMs: g.spec.timeout_ms,
    judge,
    outcome: (where, request, failure) => countOutcome(g, g.ee, where, request.ok, failure),
  });
  g.clock.now = () => native.clock;
  const handOver = (k) => {
    const file = g.quietFile;
    native.window(k, {
      spec: g.spec,
      recorder: g.recorder,
      ring: buildRing(g, overWs),
      flush: g.flush,
      quiet: file ? () => fs.writeFileSync(file, '') : null,
    });
  };
  if (g.kept) g.onWindow.push(() => handOver(g.window));
  else handOver(1);
  return native;
}

/**
 * A closed-loop user with the native sender: one more lane, until the pass's window is done, or, kept, until the
 * session's end (one of the users walks the windows: each is handed over as it loads, and done once its requests are
 * answered after its stop_at).
 */
async function nativeUser(g, ee, { closed, rate, replay }) {
  if (!closed || rate || replay) throw new Error('LEAN_SENDER=native sends closed loops (CONCURRENCY) only');
  g.ee = ee;
  g.native.lane();
  try {
    if (!g.kept) await g.native.done(1);
    else {
      if (!g.nativeWindows)
        g.nativeWindows = (async () => {
          while (await g.nextWindow()) await g.native.done(g.window);
        })();
      await g.nativeWindows;
    }
  } finally {
    g.native.release();
  }
}

module.exports = { NativeSender, startNative, nativeUser };
