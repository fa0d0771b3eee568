'use strict';
// WORKLOAD=replay:FILE: the requests of a capture (./run.sh record) sent
// again. With REPLAY_SPEED > 0 they keep their original spacing (divided by
// the speed), as an open loop: the capture's first request is sent when the
// measured window opens, and the capture repeats end to end before and after
// it (a period is its span plus one mean gap), so the load is already flowing
// when the window opens and never stops before it closes. With REPLAY_SPEED=0
// CONCURRENCY users send the capture's requests in order, back to back (a
// closed loop). A batch's calls are sent one by one at the batch's instant.
//
// A call whose parameters do not exist on the target chain (a null result, or
// an error saying a block, transaction or state was not found) is an answer
// from the node: it counts as a request served, and is reported apart in
// generator.replay.missing_on_target, never as the node's error.

const fs = require('node:fs');
const { performance } = require('node:perf_hooks');

const MAX_IN_FLIGHT = 8192;
const TICK_MS = 5;
const NOT_FOUND =
  /not found|unknown block|missing trie node|state (is )?not available|pruned|no such|does not exist|unknown (transaction|hash)|header for/i;
const METHOD_NOT_FOUND = -32601;

/** The capture as a schedule: entries ms after its first request, and its period. */
function loadReplay(file) {
  const entries = [];
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!raw.trim()) continue;
    const l = JSON.parse(raw);
    if (typeof l.method === 'string' && typeof l.t === 'number')
      entries.push({
        t: l.t,
        method: l.method,
        params: Array.isArray(l.params) || (l.params && typeof l.params === 'object') ? l.params : [],
      });
  }
  if (!entries.length) throw new Error(`${file}: no requests to replay`);
  entries.sort((a, b) => a.t - b.t);
  const t0 = entries[0].t;
  for (const e of entries) e.at = e.t - t0;
  const span = entries[entries.length - 1].at;
  const gap = entries.length > 1 ? span / (entries.length - 1) : 1000;
  return { entries, span_ms: span, period_ms: Math.max(1, span + gap) };
}

/** The mix a capture stands for ({method: count}): the run's methods, for the report and the checks. */
function replayMix(file) {
  const mix = {};
  for (const e of loadReplay(file).entries) mix[e.method] = (mix[e.method] || 0) + 1;
  return mix;
}

/** True when an answer says the call's parameters do not exist on this chain. */
function isMissing(resultNull, failure) {
  if (resultNull) return true;
  if (!failure || failure.kind !== 'rpc') return false;
  if (failure.message.includes(`JSON-RPC ${METHOD_NOT_FOUND}:`)) return false;
  return NOT_FOUND.test(failure.message);
}

/** What a worker's replay did, written with its samples. */
function newReplayTally() {
  return { sent: 0, sent_by_method: {}, missing_on_target: {}, capture_requests: 0, period_ms: null, speed: null };
}

/** Sums the workers' tallies; null when no worker replayed. */
function mergeReplay(snapshots) {
  const parts = snapshots.map((x) => x.replay).filter(Boolean);
  if (!parts.length) return null;
  const missing = {};
  const sentBy = {};
  let sent = 0;
  for (const p of parts) {
    sent += p.sent;
    for (const [m, n] of Object.entries(p.missing_on_target)) missing[m] = (missing[m] || 0) + n;
    for (const [m, n] of Object.entries(p.sent_by_method || {})) sentBy[m] = (sentBy[m] || 0) + n;
  }
  const lead = parts.find((p) => p.capture_requests) || parts[0];
  return {
    capture_requests: lead.capture_requests,
    capture_sha256: lead.capture_sha256 || null,
    period_ms: lead.period_ms,
    speed: lead.speed,
    sent_in_window: sent,
    missing_on_target: Object.values(missing).reduce((a, b) => a + b, 0),
    missing_on_target_by_method: missing,
    sent_by_method: sentBy,
  };
}

/**
 * Sends the schedule until endAt.
 * @param {object} o
 * @param {{entries:object[], period_ms:number}} o.schedule
 * @param {number} o.speed REPLAY_SPEED (0: closed loop)
 * @param {number} o.concurrency users of the closed loop
 * @param {number} o.startAt the window's start: the capture's first request is due then
 * @param {number} o.endAt nothing is sent from then on
 * @param {(entry:object)=>Promise<void>} o.send sends and records one call
 * @param {()=>void} o.skipped an open-loop call not sent (too many unanswered)
 */
function runReplay({ schedule, speed, concurrency, startAt, endAt, send, skipped }) {
  if (!speed) return closedReplay(schedule, concurrency, endAt, send);
  return new Promise((resolve) => {
    const { entries } = schedule;
    const period = schedule.period_ms / speed;
    const now0 = Date.now();
    let k = Math.floor((now0 - startAt) / period); // the cycle now runs in (negative before the window)
    let i = entries.findIndex((e) => startAt + k * period + e.at / speed >= now0);
    if (i < 0) {
      k++;
      i = 0;
    }
    let inFlight = 0;
    const finish = () => {
      if (inFlight === 0 && Date.now() >= endAt) resolve();
    };
    const tick = () => {
      const now = Date.now();
      if (now >= endAt) return finish();
      for (;;) {
        const due = startAt + k * period + entries[i].at / speed;
        if (due > now || due >= endAt) break;
        if (inFlight >= MAX_IN_FLIGHT) skipped();
        else {
          inFlight++;
          send(entries[i]).finally(() => {
            inFlight--;
            finish();
          });
        }
        i++;
        if (i === entries.length) {
          i = 0;
          k++;
        }
      }
      setTimeout(tick, TICK_MS);
    };
    tick();
  });
}

/** REPLAY_SPEED=0: `concurrency` users take the capture's next call in turn, back to back. */
async function closedReplay(schedule, concurrency, endAt, send) {
  let next = 0;
  const user = async () => {
    while (Date.now() < endAt) {
      const e = schedule.entries[next];
      next = (next + 1) % schedule.entries.length;
      await send(e);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, user));
}

/**
 * A generator's replay: g is the worker's generator state (generator.js);
 * call(method, params) sends one call and resolves with {failure, resultNull}
 * (never rejects); counted(outcome, method, failure) mirrors it into artillery's counters.
 */
async function replayWith(g, call, counted) {
  const { file, speed, concurrency } = g.spec.replay;
  const schedule = loadReplay(file);
  const tally = newReplayTally();
  Object.assign(tally, {
    capture_requests: schedule.entries.length,
    capture_sha256: g.spec.replay.sha256 || null,
    period_ms: schedule.period_ms,
    speed,
  });
  g.extras.replay = tally;
  const send = async (e) => {
    g.recorder.started();
    const now = Date.now();
    // counted as the call leaves: what the replay sent follows the capture; what completes depends on the node
    if (now >= g.spec.start_at && now < g.spec.end_at)
      tally.sent_by_method[e.method] = (tally.sent_by_method[e.method] || 0) + 1;
    const t0 = performance.now();
    const r = await call(e.method, e.params);
    const missing = isMissing(r.resultNull, r.failure);
    const failure = missing ? null : r.failure;
    const outcome = g.recorder.completed(e.method, performance.now() - t0, failure, Date.now());
    if (outcome === 'window') {
      tally.sent++;
      if (missing) tally.missing_on_target[e.method] = (tally.missing_on_target[e.method] || 0) + 1;
    }
    counted(outcome, e.method, failure);
  };
  await runReplay({
    schedule,
    speed,
    concurrency,
    startAt: g.spec.start_at,
    endAt: g.spec.end_at,
    send,
    skipped: () => g.recorder.skipped(),
  });
}

/** What the generator's spec carries for WORKLOAD=replay:FILE; null for other workloads. */
function replaySpec(s) {
  if (!isReplay(s.WORKLOAD)) return null;
  const file = require('node:path').resolve(s.WORKLOAD.slice('replay:'.length));
  // which capture, in the report
  const sha256 = require('node:crypto').createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  return { file, sha256, speed: s.REPLAY_SPEED, concurrency: s.CONCURRENCY };
}

const isReplay = (workload) => typeof workload === 'string' && workload.startsWith('replay:');

module.exports = {
  replaySpec,
  isReplay,
  replayWith,
  loadReplay,
  replayMix,
  isMissing,
  newReplayTally,
  mergeReplay,
  runReplay,
};
