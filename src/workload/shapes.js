'use strict';
// Load shapes of an open loop (SHAPE): how the offered rate moves inside the
// measured window. The shape is laid on the window itself, so the window stays
// what it is for a steady load: [start, start + DURATION_S), counters read at
// its edges, every request that completes inside it counted. Before the window
// (warm-up, RAMP_S, generator start-up) the load runs at the shape's base rate.
//
//   steady  RATE from the first second to the last (today's shape).
//   step    SHAPE_STEPS equal steps across the window: RATE/n, 2*RATE/n, ... RATE.
//   spike   RATE, with SPIKE_FACTOR * RATE for SPIKE_S seconds in the middle of the window.
//
// A shape is plain data ({kind, base_rps, peak_rps, segments}) written into the
// generator's spec, so the ethers processor and the lean engine read the same
// one, keyed to the window's start instant rather than to when artillery began.

/**
 * @typedef {object} Shape
 * @property {'step'|'spike'} kind
 * @property {number} base_rps rate before the window opens
 * @property {number} peak_rps highest rate the shape asks for
 * @property {{from_s:number, to_s:number, rps:number}[]} segments inside the window, from its start
 */

/** The scenario's shape, or null for a steady load (or a closed loop, which has no rate to shape). */
function shapeOf(s) {
  if (!s.RATE || !s.SHAPE || s.SHAPE === 'steady') return null;
  const d = s.DURATION_S;
  if (s.SHAPE === 'step') {
    const n = s.SHAPE_STEPS;
    const segments = [];
    for (let k = 1; k <= n; k++) segments.push({ from_s: (d * (k - 1)) / n, to_s: (d * k) / n, rps: (s.RATE * k) / n });
    return { kind: 'step', base_rps: s.RATE / n, peak_rps: s.RATE, segments };
  }
  const peak = s.RATE * s.SPIKE_FACTOR;
  const from = (d - s.SPIKE_S) / 2;
  return {
    kind: 'spike',
    base_rps: s.RATE,
    peak_rps: peak,
    segments: [
      { from_s: 0, to_s: from, rps: s.RATE },
      { from_s: from, to_s: from + s.SPIKE_S, rps: peak },
      { from_s: from + s.SPIKE_S, to_s: d, rps: s.RATE },
    ],
  };
}

/** Offered rate (requests/s) at nowMs for a window opening at startMs. */
function rateAt(shape, startMs, nowMs) {
  if (nowMs < startMs) return shape.base_rps;
  const t = (nowMs - startMs) / 1000;
  for (const seg of shape.segments) if (t >= seg.from_s && t < seg.to_s) return seg.rps;
  return shape.segments[shape.segments.length - 1].rps;
}

/** Requests the shape offers between two instants inside the window (its integral). */
function expectedBetween(shape, startMs, fromMs, toMs) {
  let n = 0;
  for (const seg of shape.segments) {
    const a = Math.max(fromMs, startMs + seg.from_s * 1000);
    const b = Math.min(toMs, startMs + seg.to_s * 1000);
    if (b > a) n += (seg.rps * (b - a)) / 1000;
  }
  return n;
}

/**
 * A pacer that says how many requests are due at each instant (the lean
 * engine's open loop calls it every few ms). Before the window it runs at the
 * base rate, rising linearly over rampS from the first call; inside, it follows
 * the shape. It accumulates rate x elapsed time, so a late tick catches up.
 */
function shapedPacer(shape, startMs, rampS, t0) {
  let last = t0;
  let due = 0;
  return (now) => {
    const dt = (now - last) / 1000;
    if (dt > 0) {
      const sinceT0 = (now - t0) / 1000;
      const ramp = now < startMs && rampS > 0 && sinceT0 < rampS ? sinceT0 / rampS : 1;
      due += rateAt(shape, startMs, now) * ramp * dt;
      last = now;
    }
    return due;
  };
}

/**
 * The ethers processor's side of a shape: artillery offers arrivals at the
 * peak rate all along, and each worker lets through the share the shape asks
 * for at that instant (a credit that grows by rate/peak per arrival), so the
 * requests follow the window's clock whenever artillery started.
 */
function shapedGate(shape, startMs) {
  let credit = 0;
  return (now) => {
    credit += rateAt(shape, startMs, now) / shape.peak_rps;
    if (credit < 1) return false;
    credit -= 1;
    return true;
  };
}

/**
 * The shape as run.json keeps it: each segment with the requests that completed in it and their rate, and the requests
 * sent in it (the generator's record, when it kept one): a loaded node's late answers fall in the segment after the
 * one they were sent in, so a spike's served rate alone understates what was offered in it.
 */
function shapeFigures(shape, startMs, samples) {
  const rate = (n, seg) => Number((n / (seg.to_s - seg.from_s)).toFixed(3));
  return {
    kind: shape.kind,
    base_rps: shape.base_rps,
    peak_rps: shape.peak_rps,
    segments: shape.segments.map((seg) => {
      const [a, b] = [startMs + seg.from_s * 1000, startMs + seg.to_s * 1000];
      const ok = samples.okBetween(a, b);
      const sent = samples.sentBetween ? samples.sentBetween(a, b) : null;
      return {
        ...seg,
        requests_ok: ok,
        rps: seg.rps,
        achieved_rps: rate(ok, seg),
        ...(sent === null ? {} : { requests_sent: sent, sent_rps: rate(sent, seg) }),
      };
    }),
  };
}

/** One line for the log and the report. */
function describeShape(shape) {
  if (!shape) return null;
  if (shape.kind === 'step')
    return `${shape.segments.length} steps of ${(shape.segments[0].to_s - shape.segments[0].from_s).toFixed(1)} s: ${shape.segments.map((x) => x.rps.toFixed(0)).join(', ')} requests/s`;
  const spike = shape.segments[1];
  return `${shape.base_rps} requests/s with a spike to ${shape.peak_rps} requests/s from ${spike.from_s.toFixed(1)} s to ${spike.to_s.toFixed(1)} s of the window`;
}

module.exports = { shapeOf, rateAt, expectedBetween, shapedPacer, shapedGate, shapeFigures, describeShape };
