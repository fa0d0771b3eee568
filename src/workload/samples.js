'use strict';
// What the load generator records about each request, and how the records of
// several workers are merged. The recorder runs inside artillery workers;
// mergeSamples runs in the toolkit after the run.

const { percentile, latencySummary } = require('../stats');

const FAILURE_KINDS = ['rpc', 'http', 'timeout', 'other'];
const MAX_ERROR_MESSAGES = 20;
const SLOT_MS = 10; // resolution of okBetween()

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
function newRecorder(spec, worker) {
  const seconds = {}; // epoch second -> method -> {lat: number[], failed: {kind: n}}
  const okSlots = {}; // 10 ms slot -> successful completions, to count requests between any two instants
  const errors = {};
  let inFlight = 0;
  let inFlightAtEnd = null;
  let before = 0;
  let skipped = 0;
  let firstRequestAt = null;
  const drained = new Set();
  const drainedSlots = new Set();
  return {
    worker,
    /** An open-loop request the generator could not start (too many unanswered). */
    skipped() {
      const now = Date.now();
      if (now >= spec.start_at && now < spec.end_at) skipped++;
    },
    started() {
      inFlight++;
      if (firstRequestAt === null) firstRequestAt = Date.now();
    },
    /** @returns {'before'|'window'|'after'} where the completion fell */
    completed(method, latencyMs, failure, now) {
      inFlight--;
      if (now < spec.start_at) {
        before++;
        return 'before';
      }
      if (now >= spec.end_at) {
        // After the window: only counted for okBetween(), up to the instant the node's CPU was read.
        if (!failure && now < (spec.stop_at || spec.end_at)) {
          // Never in the slot that holds end_at: okBetween(x, end_at) must count the window's requests only.
          const slot = Math.max(Math.floor(now / SLOT_MS), Math.ceil(spec.end_at / SLOT_MS));
          okSlots[slot] = (okSlots[slot] || 0) + 1;
        }
        return 'after';
      }
      const sec = Math.floor(now / 1000);
      const bySec = seconds[sec] || (seconds[sec] = {});
      const m = bySec[method] || (bySec[method] = { lat: [], failed: {} });
      if (failure) {
        m.failed[failure.kind] = (m.failed[failure.kind] || 0) + 1;
        if (errors[failure.message] !== undefined || Object.keys(errors).length < MAX_ERROR_MESSAGES) {
          errors[failure.message] = (errors[failure.message] || 0) + 1;
        }
      } else {
        m.lat.push(Math.round(latencyMs * 1000) / 1000);
        // Never in the slot that holds start_at either: okBetween(start_at, end_at) is exactly the window's requests.
        const slot = Math.max(Math.floor(now / SLOT_MS), Math.ceil(spec.start_at / SLOT_MS));
        okSlots[slot] = (okSlots[slot] || 0) + 1;
      }
      return 'window';
    },
    /** The window's end has come: the requests in flight now are those it did not see complete. */
    windowClosed() {
      if (inFlightAtEnd === null) inFlightAtEnd = inFlight;
    },
    /**
     * What completed in the whole seconds before nowMs that earlier drains did
     * not return, with the counters as of now: one line of the partial record
     * a failed window keeps (see partialSnapshots).
     */
    drain(nowMs) {
      const upto = Math.floor(nowMs / 1000) * 1000;
      const out = { upto_ms: upto, seconds: {}, ok_slots: {} };
      for (const sec of Object.keys(seconds))
        if (Number(sec) * 1000 < upto && !drained.has(sec)) {
          out.seconds[sec] = seconds[sec];
          drained.add(sec);
        }
      for (const slot of Object.keys(okSlots))
        if (Number(slot) * SLOT_MS < upto && !drainedSlots.has(slot)) {
          out.ok_slots[slot] = okSlots[slot];
          drainedSlots.add(slot);
        }
      return {
        ...out,
        before_window: before,
        in_flight_at_end: inFlight,
        skipped,
        first_request_at: firstRequestAt,
        errors,
      };
    },
    snapshot() {
      return {
        worker,
        start_at: spec.start_at,
        end_at: spec.end_at,
        before_window: before,
        in_flight_at_end: inFlightAtEnd === null ? inFlight : inFlightAtEnd,
        skipped,
        first_request_at: firstRequestAt,
        seconds,
        ok_slots: okSlots,
        errors,
      };
    },
  };
}

/**
 * A worker's partial record (the lines its drains wrote) as a snapshot cut
 * at cutMs: what a window that failed before its end keeps.
 */
function partialSnapshot(lines, spec, cutMs) {
  const snap = {
    worker: null,
    start_at: spec.start_at,
    end_at: cutMs,
    before_window: 0,
    in_flight_at_end: 0,
    skipped: 0,
    first_request_at: null,
    seconds: {},
    ok_slots: {},
    errors: {},
  };
  for (const l of lines) {
    for (const [sec, v] of Object.entries(l.seconds)) if (Number(sec) * 1000 < cutMs) snap.seconds[sec] = v;
    for (const [slot, n] of Object.entries(l.ok_slots)) if (Number(slot) * SLOT_MS < cutMs) snap.ok_slots[slot] = n;
    Object.assign(snap, {
      before_window: l.before_window,
      in_flight_at_end: l.in_flight_at_end,
      skipped: l.skipped,
      first_request_at: l.first_request_at,
      errors: l.errors,
    });
  }
  return snap;
}

const emptyFailures = () => Object.fromEntries(FAILURE_KINDS.map((k) => [k, 0]));

/**
 * Merges worker snapshots into totals, per-method figures and a per-second series.
 * @returns {{ok:number, failed:number, failures:object, latency_ms:object, methods:object, series:object[],
 *   before_window:number, in_flight_at_end:number, first_request_at:number|null, errors:object, workers:number}}
 */
function mergeSamples(snapshots) {
  const methods = {};
  const perSecond = {};
  const all = [];
  const failures = emptyFailures();
  const errors = {};
  let before = 0;
  let inFlight = 0;
  let skipped = 0;
  let first = null;
  const okSlots = new Map();
  for (const snap of snapshots) {
    for (const [slot, n] of Object.entries(snap.ok_slots || {}))
      okSlots.set(Number(slot), (okSlots.get(Number(slot)) || 0) + n);
    before += snap.before_window;
    skipped += snap.skipped || 0;
    inFlight += snap.in_flight_at_end;
    if (snap.first_request_at !== null && (first === null || snap.first_request_at < first))
      first = snap.first_request_at;
    for (const [msg, n] of Object.entries(snap.errors)) errors[msg] = (errors[msg] || 0) + n;
    for (const [sec, byMethod] of Object.entries(snap.seconds)) {
      const ps = perSecond[sec] || (perSecond[sec] = { ok: 0, failed: 0, lat: [] });
      for (const [method, rec] of Object.entries(byMethod)) {
        const m = methods[method] || (methods[method] = { lat: [], failures: emptyFailures() });
        for (const x of rec.lat) {
          m.lat.push(x);
          ps.lat.push(x);
          all.push(x);
        }
        ps.ok += rec.lat.length;
        for (const [kind, n] of Object.entries(rec.failed)) {
          m.failures[kind] += n;
          failures[kind] += n;
          ps.failed += n;
        }
      }
    }
  }
  const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
  const methodFigures = {};
  for (const [name, m] of Object.entries(methods).sort()) {
    methodFigures[name] = {
      requests_ok: m.lat.length,
      requests_failed: sum(m.failures),
      failures: m.failures,
      latency_ms: latencySummary(m.lat),
    };
  }
  // The first and last seconds are cut by the window's edges: span_ms says how much of each was measured.
  const { start_at: start, end_at: end } = snapshots[0] || {};
  const series = Object.keys(perSecond)
    .map(Number)
    .sort((a, b) => a - b)
    .map((sec) => {
      const ps = perSecond[sec];
      const span = Math.min(end, (sec + 1) * 1000) - Math.max(start, sec * 1000);
      return { t_ms: sec * 1000, span_ms: span, ok: ps.ok, failed: ps.failed, latency_ms: latencySummary(ps.lat) };
    });
  return {
    ok: all.length,
    failed: sum(failures),
    failures,
    latency_ms: latencySummary(all),
    methods: methodFigures,
    series,
    before_window: before,
    in_flight_at_end: inFlight,
    skipped,
    first_request_at: first,
    errors,
    workers: snapshots.length,
    /** Successful requests completed in [fromMs, toMs), to 10 ms. */
    okBetween(fromMs, toMs) {
      let n = 0;
      for (const [slot, k] of okSlots) if (slot * SLOT_MS >= fromMs && slot * SLOT_MS < toMs) n += k;
      return n;
    },
  };
}

module.exports = {
  classifyError,
  newRecorder,
  partialSnapshot,
  mergeSamples,
  percentile,
  latencySummary,
  FAILURE_KINDS,
};
