'use strict';
// Counts of requests in 10 ms slots of the clock, so that the requests between
// any two instants can be counted afterwards, to 10 ms: the successes a
// generator's worker saw complete (okBetween: the window's requests, the CPU
// window's, a SHAPE segment's) and, with a SHAPE, the requests it sent in the
// window (a segment's offered load as sent, against what was answered in it).
// A Map: a slot number is above 2^32, and as an object's key it would be
// turned into a string on every request.

const SLOT_MS = 10;

class Slots {
  constructor() {
    this.counts = new Map();
    this.drainedSlots = new Set();
  }

  /** One request at instant now, in its slot, or in the first whole slot after edgeMs when it fell before. */
  add(now, edgeMs = 0) {
    const slot = Math.max(Math.floor(now / SLOT_MS), Math.ceil(edgeMs / SLOT_MS));
    this.counts.set(slot, (this.counts.get(slot) || 0) + 1);
  }

  /** Adds a record's slots ({slot: n}, as toJSON gives them). */
  addRecord(record) {
    for (const [slot, n] of Object.entries(record || {}))
      this.counts.set(Number(slot), (this.counts.get(Number(slot)) || 0) + n);
  }

  /** The slots before uptoMs that earlier drains did not return ({slot: n}). */
  drain(uptoMs) {
    const out = {};
    for (const [slot, n] of this.counts)
      if (slot * SLOT_MS < uptoMs && !this.drainedSlots.has(slot)) {
        out[slot] = n;
        this.drainedSlots.add(slot);
      }
    return out;
  }

  /** Requests counted in [fromMs, toMs), to 10 ms. */
  between(fromMs, toMs) {
    let n = 0;
    for (const [slot, k] of this.counts) if (slot * SLOT_MS >= fromMs && slot * SLOT_MS < toMs) n += k;
    return n;
  }

  toJSON() {
    return Object.fromEntries(this.counts);
  }
}

module.exports = { Slots, SLOT_MS };
