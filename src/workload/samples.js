'use strict';
// What the load generator records about each request, and how the records of several workers are merged. The
// recorder runs inside artillery workers; mergeSamples runs in the toolkit after the run.

const { percentile, latencySummary } = require('../stats');
const { Slots, SLOT_MS } = require('./slots');
const { NamedBlocks } = require('./named-blocks');

const FAILURE_KINDS = ['rpc', 'http', 'timeout', 'other'];
const MAX_ERROR_MESSAGES = 20;

/**
 * Classifies an error thrown by a client library call:
 * rpc (a JSON-RPC error, also inside an HTTP 200), http (non-2xx status),
 * timeout, or other (connection refused, reset, ...).
 */
function classifyError(err) {
  const rpc = err && (err.error || (err.info && err.info.error));
  if (rpc && typeof rpc.code === 'number') return { kind: 'rpc', message: `JSON-RPC ${rpc.code}: ${rpc.message}` };
  if (err && err.code === 'TIMEOUT') return { kind: 'timeout', message: 'timeout' };
  const status = err && err.response && err.response.statusCode;
  if (status) return { kind: 'http', message: `HTTP ${status}` };
  return { kind: 'other', message: String((err && (err.shortMessage || err.message)) || err).slice(0, 200) };
}

/** Per-worker record of requests by the second they completed in, and by method. */
class Recorder {
  constructor(spec, worker) {
    this.spec = spec;
    this.worker = worker;
    this.seconds = {}; // epoch second -> method -> {lat: number[], failed: {kind: n}}
    this.okSlots = new Slots(); // successful completions, to count them between any two instants
    this.sentSlots = spec.shape ? new Slots() : null; // a SHAPE's: the requests sent in the window
    this.sec = -1; // the second of the last completion, and its entry in seconds (the next is most likely the same)
    this.bySec = null;
    this.errors = {};
    this.inFlight = 0;
    this.inFlightAtStart = null; // set by the first request started or answered from start_at on
    this.inFlightAtEnd = null;
    this.doneAfterEnd = 0; // sent before end_at, completed after it but before windowClosed() ran
    this.before = 0;
    this.skippedCount = 0;
    this.firstRequestAt = null;
    this.drained = new Set();
    this.named = spec.named_blocks ? new NamedBlocks(spec) : null; // on a network: answers that name the head
  }

  /** An open-loop request the generator could not start (too many unanswered). */
  skipped() {
    const now = Date.now();
    if (now >= this.spec.start_at && now < this.spec.end_at) this.skippedCount++;
  }

  /** A request sent; at: when (the native sender's records give it; otherwise the clock, read only as needed). */
  started(at = undefined) {
    if (this.inFlightAtStart === null) this.opened(at === undefined ? Date.now() : at); // until the window opened
    this.inFlight++;
    if (this.firstRequestAt === null) this.firstRequestAt = at === undefined ? Date.now() : at;
    if (this.sentSlots) {
      const now = at === undefined ? Date.now() : at;
      if (now >= this.spec.start_at && now < this.spec.end_at) this.sentSlots.add(now);
    }
  }

  /** Keeps how many requests were unanswered when the window opened: their answers may fall in it. */
  opened(now) {
    if (this.inFlightAtStart === null && now >= this.spec.start_at) this.inFlightAtStart = this.inFlight;
  }

  /** @returns {'before'|'window'|'after'} where the completion fell */
  completed(method, latencyMs, failure, now) {
    const { spec } = this;
    this.opened(now);
    this.inFlight--;
    if (now < spec.start_at) {
      this.before++;
      return 'before';
    }
    if (now >= spec.end_at) {
      // In flight at end_at though done by the time the end's timer fired (late on a busy machine): counted with those
      // still in flight then.
      if (this.inFlightAtEnd === null && now - latencyMs < spec.end_at) this.doneAfterEnd++;
      // After the window: only counted for okBetween(), up to the instant the node's CPU was read.
      // Never in the slot that holds end_at: okBetween(x, end_at) must count the window's requests only.
      if (!failure && now < (spec.stop_at || spec.end_at)) this.okSlots.add(now, spec.end_at);
      return 'after';
    }
    const sec = Math.floor(now / 1000);
    if (sec !== this.sec) {
      this.sec = sec;
      this.bySec = this.seconds[sec] || (this.seconds[sec] = {});
    }
    const { bySec } = this;
    const m = bySec[method] || (bySec[method] = { lat: [], failed: {} });
    if (failure) {
      m.failed[failure.kind] = (m.failed[failure.kind] || 0) + 1;
      if (this.errors[failure.message] !== undefined || Object.keys(this.errors).length < MAX_ERROR_MESSAGES)
        this.errors[failure.message] = (this.errors[failure.message] || 0) + 1;
    } else {
      m.lat.push(Math.round(latencyMs * 1000) / 1000);
      // Never in the slot that holds start_at either: okBetween(start_at, end_at) is exactly the window's requests.
      this.okSlots.add(now, spec.start_at);
    }
    return 'window';
  }

  /** The window's end has come: it did not see complete those in flight now and those done since its end. */
  windowClosed() {
    if (this.inFlightAtEnd === null) this.inFlightAtEnd = this.inFlight + this.doneAfterEnd;
  }

  /**
   * What completed in the whole seconds before nowMs that earlier drains did
   * not return, with the counters as of now: one line of the partial record
   * a failed window keeps (see partialSnapshots).
   */
  drain(nowMs) {
    const upto = Math.floor(nowMs / 1000) * 1000;
    const out = { upto_ms: upto, seconds: {}, ok_slots: this.okSlots.drain(upto) };
    for (const sec of Object.keys(this.seconds))
      if (Number(sec) * 1000 < upto && !this.drained.has(sec)) {
        out.seconds[sec] = this.seconds[sec];
        this.drained.add(sec);
      }
    return { ...out, ...this.counters(this.inFlight) };
  }

  /** The counters every record carries. */
  counters(inFlight) {
    const atStart = this.inFlightAtStart ?? (Date.now() >= this.spec.start_at ? this.inFlight : 0);
    return {
      before_window: this.before,
      in_flight_at_start: atStart,
      in_flight_at_end: inFlight,
      skipped: this.skippedCount,
      first_request_at: this.firstRequestAt,
      errors: this.errors,
    };
  }

  snapshot() {
    const { start_at: startAt, end_at: endAt } = this.spec;
    const inFlight = this.inFlightAtEnd === null ? this.inFlight + this.doneAfterEnd : this.inFlightAtEnd;
    const { errors, ...counters } = this.counters(inFlight);
    return {
      worker: this.worker,
      start_at: startAt,
      end_at: endAt,
      ...counters,
      seconds: this.seconds,
      ok_slots: this.okSlots.toJSON(),
      ...(this.sentSlots ? { sent_slots: this.sentSlots.toJSON() } : {}),
      ...(this.named ? { named_blocks: this.named.toJSON() } : {}),
      errors,
    };
  }
}

const newRecorder = (spec, worker) => new Recorder(spec, worker);
const EMPTY_COUNTERS = {
  before_window: 0,
  in_flight_at_start: 0,
  in_flight_at_end: 0,
  skipped: 0,
  first_request_at: null,
};

/**
 * A worker's partial record (the lines its drains wrote) as a snapshot cut
 * at cutMs: what a window that failed before its end keeps.
 */
function partialSnapshot(lines, spec, cutMs) {
  const snap = { worker: null, start_at: spec.start_at, end_at: cutMs, ...EMPTY_COUNTERS, errors: {}, seconds: {} };
  snap.ok_slots = {};
  for (const l of lines) {
    for (const [sec, v] of Object.entries(l.seconds)) if (Number(sec) * 1000 < cutMs) snap.seconds[sec] = v;
    for (const [slot, n] of Object.entries(l.ok_slots)) if (Number(slot) * SLOT_MS < cutMs) snap.ok_slots[slot] = n;
    // each line has the counters as of its drain
    for (const k of [...Object.keys(EMPTY_COUNTERS), 'errors']) if (l[k] !== undefined) snap[k] = l[k];
  }
  return snap;
}

const emptyFailures = () => Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0]));

/** Adds one worker's snapshot to the running totals of mergeSamples. */
function addSnapshot(acc, snap) {
  acc.okSlots.addRecord(snap.ok_slots);
  if (snap.sent_slots) (acc.sentSlots || (acc.sentSlots = new Slots())).addRecord(snap.sent_slots);
  acc.before += snap.before_window;
  acc.skipped += snap.skipped || 0;
  acc.inFlight += snap.in_flight_at_end;
  acc.inFlightAtStart += snap.in_flight_at_start || 0;
  if (snap.first_request_at !== null && (acc.first === null || snap.first_request_at < acc.first))
    acc.first = snap.first_request_at;
  for (const [msg, n] of Object.entries(snap.errors)) acc.errors[msg] = (acc.errors[msg] || 0) + n;
  for (const [sec, byMethod] of Object.entries(snap.seconds)) {
    const ps = acc.perSecond[sec] || (acc.perSecond[sec] = { ok: 0, failed: 0, lat: [] });
    for (const [method, rec] of Object.entries(byMethod)) {
      const m = acc.methods[method] || (acc.methods[method] = { lat: [], failures: emptyFailures() });
      for (const x of rec.lat) {
        m.lat.push(x);
        ps.lat.push(x);
        acc.all.push(x);
      }
      ps.ok += rec.lat.length;
      for (const [kind, n] of Object.entries(rec.failed)) {
        m.failures[kind] += n;
        acc.failures[kind] += n;
        ps.failed += n;
      }
    }
  }
}

const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);

/** Each method's counts and latency percentiles. */
function methodFigures(methods) {
  const out = {};
  for (const [name, m] of Object.entries(methods).sort()) {
    out[name] = {
      requests_ok: m.lat.length,
      requests_failed: sum(m.failures),
      failures: m.failures,
      latency_ms: latencySummary(m.lat),
    };
  }
  return out;
}

/**
 * The per-second series; the first and last seconds are cut by the window's edges: span_ms says how much was measured.
 */
function secondsSeries(perSecond, start, end) {
  return Object.keys(perSecond)
    .map(Number)
    .sort((a, b) => a - b)
    .map((sec) => {
      const ps = perSecond[sec];
      const span = Math.min(end, (sec + 1) * 1000) - Math.max(start, sec * 1000);
      return { t_ms: sec * 1000, span_ms: span, ok: ps.ok, failed: ps.failed, latency_ms: latencySummary(ps.lat) };
    });
}

/**
 * Merges worker snapshots into totals, per-method figures and a per-second series. Latencies are merged whole (every
 * worker's, of every generator process), so percentiles are exact, never averaged.
 * @returns {{ok:number, failed:number, failures:object, latency_ms:object, methods:object, series:object[],
 *   before_window:number, in_flight_at_start:number, in_flight_at_end:number, first_request_at:number|null,
 *   errors:object, workers:number}}
 */
function mergeSamples(snapshots) {
  const acc = {
    methods: {},
    perSecond: {},
    all: [],
    failures: emptyFailures(),
    errors: {},
    before: 0,
    inFlight: 0,
    inFlightAtStart: 0,
    skipped: 0,
    first: null,
    okSlots: new Slots(),
    sentSlots: null, // a SHAPE's
  };
  for (const snap of snapshots) addSnapshot(acc, snap);
  const { start_at: start, end_at: end } = snapshots[0] || {};
  return {
    ok: acc.all.length,
    failed: sum(acc.failures),
    failures: acc.failures,
    latency_ms: latencySummary(acc.all),
    methods: methodFigures(acc.methods),
    series: secondsSeries(acc.perSecond, start, end),
    before_window: acc.before,
    in_flight_at_start: acc.inFlightAtStart,
    in_flight_at_end: acc.inFlight,
    skipped: acc.skipped,
    first_request_at: acc.first,
    errors: acc.errors,
    workers: snapshots.length,
    /** Successful requests completed in [fromMs, toMs), to 10 ms. */
    okBetween: (fromMs, toMs) => acc.okSlots.between(fromMs, toMs),
    /** With a SHAPE: the requests sent in [fromMs, toMs) inside the window, to 10 ms; null without that record. */
    sentBetween: (fromMs, toMs) => (acc.sentSlots ? acc.sentSlots.between(fromMs, toMs) : null),
  };
}

module.exports = {
  classifyError,
  newRecorder,
  Recorder,
  partialSnapshot,
  mergeSamples,
  percentile,
  latencySummary,
  FAILURE_KINDS,
};
