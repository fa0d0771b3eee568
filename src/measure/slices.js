'use strict';
// Windows made of slices: an interleaved A/B pair (AB_SLICE_S). The machine's
// speed moves over tens of seconds on a shared or virtual host, and a pair of
// back-to-back windows gives it that long to move between A's window and B's.
// Here the two sides take turns in slices of about a second over one span, so
// that both see the machine as it is in each few seconds. Each side's load
// runs only in its own slices, and its node's counters are read at every edge
// of every slice; a side's figure is the sum of its node's CPU over its slices
// divided by the requests answered in them.
//
// A slice ends with a short gap in which its side sends nothing new and its
// requests still out are answered, so that the next slice (the other side's)
// starts on a node that has stopped working for the first.

const { seededRandom } = require('../util/random');
const { readEdge } = require('./edges');
const { SLOT_MS } = require('../workload/slots');

/** A slice's length varies by this much either way around AB_SLICE_S (seeded), so none keeps step with a period. */
const JITTER = 0.25;

const align = (ms) => Math.round(ms / SLOT_MS) * SLOT_MS;

/**
 * The schedule of one interleaved pair: each side's slices ({from, to} in ms, to exclusive), tiling one span from
 * fromMs in turns, the side named first beginning (A B A B ...: the session alternates which side is first from pair to
 * pair, as it alternates AB and BA). Each side gets as many slices as perSideMs holds of sliceMs, each of the same
 * length as the other side's in its turn (so both are loaded for the same time), about sliceMs with a seeded jitter:
 * periodic work of a node (a block sealed every second) then falls into its own slices in proportion to their length,
 * not always in or always out of them. Edges are aligned to the generator's 10 ms slots.
 * @returns {{first: {from:number, to:number}[], second: {from:number, to:number}[], start:number, end:number}}
 */
function planSlices({ fromMs, perSideMs, sliceMs, seed = 1 }) {
  const n = Math.max(1, Math.round(perSideMs / sliceMs));
  const random = seededRandom(seed);
  const first = [];
  const second = [];
  let t = align(fromMs);
  const start = t;
  for (let i = 0; i < n; i++) {
    const len = Math.max(SLOT_MS, align(sliceMs * (1 - JITTER + 2 * JITTER * random())));
    for (const side of [first, second]) {
      side.push({ from: t, to: t + len });
      t += len;
    }
  }
  return { first, second, start, end: t };
}

/** A window made of slices: from its first slice to its last, with the time inside them (active_ms). */
const slicedWindow = ({ slices }) => ({
  start: slices[0].from,
  end: slices[slices.length - 1].to,
  slices,
  active_ms: slices.reduce((t, x) => t + x.to - x.from, 0),
});

/**
 * A slice's start is read this long before it begins: its node is idle then (the other side's load stopped
 * SLICE_GAP_MS before), and a read that a busy event loop makes a little late must not miss the slice's first
 * requests. Its end is read at its end, where its node is idle too (its own load stopped a gap before).
 */
const READ_AHEAD_MS = 20;

/** The readings at the edges between a window's slices: each slice's end and the next one's start, in order. */
async function readInnerEdges(stack, slices, signal) {
  const out = [];
  for (let i = 0; i + 1 < slices.length; i++) {
    out.push(await readEdge(stack, slices[i].to, signal));
    out.push(await readEdge(stack, slices[i + 1].from - READ_AHEAD_MS, signal));
  }
  return out;
}

/**
 * Edge readings in order (start, end, start, end, ...) as [start, end, slice] triples: the spans the figures sum
 * over. Requests are counted over each slice as planned ({from, to}, on the generator's 10 ms slots), CPU between the
 * readings around it.
 */
const spansOf = (edges, slices) => slices.map((slice, i) => [edges[2 * i], edges[2 * i + 1], slice]);

/** A side's sending times in its slices: each slice's sending stops gapMs before its end ([from, to] pairs). */
const sendingTimes = (slices, gapMs) => slices.map((x) => [x.from, Math.max(x.from, x.to - gapMs)]);

/**
 * The requests answered in a side's slices, and those it answered outside them (late answers, which the gap at each
 * slice's end is there to leave few of), from the merged samples' 10 ms slots.
 */
function answeredIn(spans, samples, span) {
  let inside = 0;
  for (const [, , x] of spans) inside += samples.okBetween(x.from, x.to);
  return { inside, outside: Math.max(0, samples.okBetween(span.start, span.end + 1000) - inside) };
}

/**
 * The longest run of a side's consecutive slices in which no request of its completed (a stall, in its own time: the
 * other side's slices between them are not its window): as findStall's record, or null below stallS.
 */
function sliceStall(samples, spans, stallS) {
  if (!stallS || samples.first_request_at === null) return null;
  let best = null;
  let run = null;
  spans.forEach(([, , x], i) => {
    const empty = samples.okBetween(x.from, x.to) === 0;
    if (empty && !run) run = { from_ms: x.from, to_ms: x.to, ms: 0, last: i };
    if (empty) Object.assign(run, { to_ms: x.to, ms: run.ms + (x.to - x.from), last: i });
    if (run && (!empty || i === spans.length - 1)) {
      if (!best || run.ms > best.ms) best = run;
      if (!empty) run = null;
    }
  });
  if (!best || best.ms / 1000 < stallS) return null;
  const atEnd = best.last === spans.length - 1 && samples.in_flight_at_end > 0;
  return {
    seconds: best.ms / 1000,
    from_ms: best.from_ms,
    to_ms: best.to_ms,
    at_end: atEnd,
    requests_waiting: samples.in_flight_at_end,
  };
}

/** The node's CPU between a window's slices (the other side's were on), and how long they lasted. */
function betweenSlices(spans) {
  let cpu = 0;
  let ms = 0;
  for (let i = 1; i < spans.length; i++) {
    cpu += spans[i][0].cpu.total_s - spans[i - 1][1].cpu.total_s;
    ms += spans[i][0].at_ms - spans[i - 1][1].at_ms;
  }
  return { cpu_s: Number(cpu.toFixed(6)), seconds: ms / 1000 };
}

/**
 * A window's CPU per request in its two halves (its first slices against its last), as window-length.js splits a
 * window at the CPU reading nearest its middle: the noise inside it.
 */
function sliceHalves(spans, samples) {
  if (spans.length < 2) return null;
  const half = (part) => {
    let cpu = 0;
    let ok = 0;
    for (const [a, b, x] of part) {
      cpu += b.cpu.total_s - a.cpu.total_s;
      ok += samples.okBetween(x.from, x.to);
    }
    return ok > 0 ? Number(((cpu * 1000) / ok).toFixed(6)) : null;
  };
  const mid = Math.floor(spans.length / 2);
  const first = half(spans.slice(0, mid));
  const second = half(spans.slice(mid));
  return first === null || second === null ? null : { first, second };
}

/** What a window of slices adds to its record: its halves (AB_WINDOW=auto) and its node between its slices. */
const sliceExtras = (spans, samples) => ({
  slice_halves: sliceHalves(spans, samples),
  between_slices: betweenSlices(spans),
});

module.exports = {
  sliceExtras,
  planSlices,
  slicedWindow,
  readInnerEdges,
  spansOf,
  sendingTimes,
  answeredIn,
  sliceStall,
  sliceHalves,
  betweenSlices,
  JITTER,
  READ_AHEAD_MS,
};
