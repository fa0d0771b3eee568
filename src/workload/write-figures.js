'use strict';
// figures.writes: the chain-neutral figures of a write workload, from the
// Ethereum writers' tallies (writes.js) or those a chain's windowRecords hook
// gives (Substrate's transfers); figures.subscriptions from the Ethereum
// subscription workload's (subscriptions.js).

const { latencySummary } = require('./samples');

/** The Ethereum writers' tallies of all workers; null when no worker wrote. */
function mergeWrites(snapshots) {
  const parts = snapshots.map((x) => x.writes).filter(Boolean);
  if (!parts.length) return null;
  const out = { submitted: 0, included: 0, failed: 0, inclusion_ms: [], included_blocks: {}, errors: {} };
  for (const p of parts) {
    out.submitted += p.submitted;
    out.included += p.included;
    out.failed += p.failed;
    out.inclusion_ms.push(...p.inclusion_ms);
    for (const [b, n] of Object.entries(p.included_blocks)) out.included_blocks[b] = (out.included_blocks[b] || 0) + n;
    for (const [m, n] of Object.entries(p.errors)) out.errors[m] = (out.errors[m] || 0) + n;
  }
  return out;
}

/**
 * figures.writes for a measured window, or null without writes.
 * @param {{writes?:object, chainWrites?:object|null, window:{start_ms:number, end_ms:number}}} m
 */
function writesFigures(m) {
  const seconds = (m.window.end_ms - m.window.start_ms) / 1000;
  const tps = (n) => Number((n / seconds).toFixed(3));
  if (m.writes) {
    const w = m.writes;
    return {
      tps: tps(w.included),
      submitted_tps: tps(w.submitted),
      submitted: w.submitted,
      included: w.included,
      failed: w.failed,
      inclusion_ms: latencySummary(w.inclusion_ms),
      included_by_block: w.included_blocks,
      errors: w.errors,
    };
  }
  return m.chainWrites || null;
}

/** figures.subscriptions from the workers' tallies; null when no worker subscribed. */
function subscriptionFigures(snapshots, window) {
  const parts = snapshots.map((x) => x.subscriptions).filter(Boolean);
  if (!parts.length) return null;
  const out = { subscriptions: {}, notifications: {}, heads_by_block: {}, errors: {} };
  const delay = [];
  const spread = [];
  const add = (into, from) => {
    for (const [k, n] of Object.entries(from)) into[k] = (into[k] || 0) + n;
  };
  for (const p of parts) {
    add(out.subscriptions, p.subscriptions);
    add(out.notifications, p.notifications);
    add(out.heads_by_block, p.heads_by_block);
    add(out.errors, p.errors);
    delay.push(...p.delay_ms);
    spread.push(...p.spread_ms);
  }
  const total = Object.values(out.notifications).reduce((a, b) => a + b, 0);
  return {
    ...out,
    notifications_per_s: Number((total / ((window.end_ms - window.start_ms) / 1000)).toFixed(3)),
    delay_from_block_timestamp_ms: latencySummary(delay),
    spread_ms: latencySummary(spread),
  };
}

module.exports = { mergeWrites, writesFigures, subscriptionFigures };
