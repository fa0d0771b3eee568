'use strict';
// A node that stops answering (frozen by SIGSTOP, a long stop-the-world
// pause, a deadlock) leaves no trace in the latency of the requests that
// succeeded: the requests it holds never complete inside the window. A stall
// is a stretch of at least STALL_S seconds of the window in which no request
// completed (successfully or not) while the load was running. One that lasts until the window's end, with
// requests waiting there, fails the run: its figures describe a node that
// was not serving. One that ended inside the window is a warning.

/**
 * The longest stretch of the window without a completed request.
 * @param {{series: {t_ms:number, ok:number, failed:number}[], in_flight_at_end:number}} samples merged samples
 * @param {{start:number, end:number}} w the window (ms)
 * @param {number} stallS seconds without a completion that make a stall (0: never)
 * @returns {null|{seconds:number, from_ms:number, to_ms:number, at_end:boolean, requests_waiting:number}}
 */
function findStall(samples, w, stallS) {
  if (!stallS) return null;
  const busy = new Set(samples.series.filter((p) => p.ok + p.failed > 0).map((p) => p.t_ms));
  const gaps = [];
  let from = null;
  const close = (to) => {
    if (from !== null) gaps.push({ from_ms: from, to_ms: to });
    from = null;
  };
  for (let sec = Math.floor(w.start / 1000) * 1000; sec < w.end; sec += 1000) {
    if (busy.has(sec)) close(Math.max(w.start, sec));
    else if (from === null) from = Math.max(w.start, sec);
  }
  close(w.end);
  // The node held requests through the gap: it counts from the generator's first request (a generator that
  // started late is no stall of the node), and a gap lasting to the end had requests waiting there.
  const first = samples.first_request_at;
  if (first === null || first === undefined) return null;
  const held = gaps
    .map((g) => ({ from_ms: Math.max(g.from_ms, first), to_ms: g.to_ms }))
    .filter((g) => g.to_ms > g.from_ms && (g.to_ms < w.end || samples.in_flight_at_end > 0));
  const best = held.sort((a, b) => b.to_ms - b.from_ms - (a.to_ms - a.from_ms))[0];
  if (!best) return null;
  const seconds = (best.to_ms - best.from_ms) / 1000;
  if (seconds < stallS) return null;
  return {
    seconds,
    from_ms: best.from_ms,
    to_ms: best.to_ms,
    at_end: best.to_ms === w.end,
    requests_waiting: samples.in_flight_at_end,
  };
}

/** The stall's description for a reader, with the window's start as its time origin. */
function describeStall(stall, w) {
  const at = ((stall.from_ms - w.start) / 1000).toFixed(0);
  return stall.at_end
    ? `the node stalled: no request completed in the last ${stall.seconds.toFixed(0)} s of the window (from ${at} s in), ${stall.requests_waiting} requests were waiting at its end`
    : `no request completed for ${stall.seconds.toFixed(0)} s of the window (from ${at} s in): the node paused, then answered again`;
}

/**
 * Judges the stalls of a run's windows (the chosen one and any repetitions):
 * returns the reason the run fails, or null; pauses become warnings.
 */
function judgeStalls(windows, warnings, stallS) {
  let failure = null;
  for (const x of windows) {
    const stall = x && x.generator && x.generator.stall;
    if (!stall) continue;
    const text = `${describeStall(stall, { start: x.window.start_ms })} (STALL_S=${stallS})`;
    if (stall.at_end) failure = failure || text;
    else if (!warnings.includes(text)) warnings.push(text);
  }
  return failure;
}

module.exports = { findStall, describeStall, judgeStalls };
