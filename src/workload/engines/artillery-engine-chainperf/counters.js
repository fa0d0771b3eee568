'use strict';
// The lean engine's counters for artillery (chainperf.ok.<method>,
// chainperf.failed.<kind>, chainperf.before_window), per worker state g.

/**
 * artillery's counters are fed in batches (every 200 ms and when a user
 * finishes) rather than one event per request: the totals are the same, the
 * generator's CPU per request is lower.
 */
function count(g, ee, name) {
  g.counts.set(name, (g.counts.get(name) || 0) + 1);
  g.ee = ee;
  if (!g.timer) g.timer = setTimeout(() => emitCounts(g), 200);
}

function emitCounts(g) {
  clearTimeout(g.timer);
  g.timer = null;
  for (const [name, n] of g.counts) g.ee.emit('counter', name, n);
  g.counts.clear();
}

/** Counts a completion by where it fell (the recorder's answer): okName for a result in the window, else its kind. */
function countOutcome(g, ee, where, okName, failure) {
  if (where === 'window') count(g, ee, failure ? `chainperf.failed.${failure.kind}` : okName);
  else if (where === 'before') count(g, ee, 'chainperf.before_window');
}

module.exports = { count, emitCounts, countOutcome };
