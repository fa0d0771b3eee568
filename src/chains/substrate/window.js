'use strict';
// The Substrate processor's records beside the requests, merged over the
// workers of one window: operations (one makes one or more JSON-RPC calls),
// their failures, new-head notifications, and the transfer workload's
// transactions with their inclusion latency. Kept in run.json as `substrate`;
// the transfers are also the chain-neutral figures.writes.

const { latencySummary } = require('../../stats');

/** The workers' Substrate tallies merged; null when the processor was not Substrate's. */
function mergeSubstrate(snapshots, seconds) {
  const parts = snapshots.map((x) => x.substrate).filter(Boolean);
  if (!parts.length) return null;
  const ops = {};
  const opErrors = {};
  const tx = { submitted: 0, included: 0, failed: 0, errors: {} };
  const inclusion = [];
  let notifications = 0;
  const add = (into, from) => {
    for (const [k, n] of Object.entries(from)) into[k] = (into[k] || 0) + n;
  };
  for (const p of parts) {
    for (const [op, c] of Object.entries(p.ops)) {
      const o = ops[op] || (ops[op] = { ok: 0, failed: 0 });
      o.ok += c.ok;
      o.failed += c.failed;
    }
    add(opErrors, p.op_errors);
    add(tx.errors, p.tx.errors);
    tx.submitted += p.tx.submitted;
    tx.included += p.tx.included;
    tx.failed += p.tx.failed;
    inclusion.push(...p.tx.inclusion_ms);
    notifications += p.notifications;
  }
  const opsOk = Object.values(ops).reduce((s, o) => s + o.ok, 0);
  const out = { operations: ops, operations_ok: opsOk, operation_errors: opErrors, notifications };
  if (tx.submitted || tx.included || tx.failed) {
    out.transactions = {
      ...tx,
      tps: Number((tx.included / seconds).toFixed(3)),
      inclusion_latency_ms: latencySummary(inclusion),
    };
  }
  return out;
}

/** The transfers as figures.writes (the shape Ethereum's writers give). */
function transferFigures(t, seconds) {
  return {
    tps: t.tps,
    submitted_tps: Number((t.submitted / seconds).toFixed(3)),
    submitted: t.submitted,
    included: t.included,
    failed: t.failed,
    inclusion_ms: t.inclusion_latency_ms,
    errors: t.errors,
  };
}

/**
 * Chain hook: this family's records of a window (run.json fields) and its
 * transactions as figures.writes.
 * @returns {{fields: {substrate: object}, writes: object|null}|null}
 */
function windowRecords(snapshots, seconds) {
  const x = mergeSubstrate(snapshots, seconds);
  if (!x) return null;
  return { fields: { substrate: x }, writes: x.transactions ? transferFigures(x.transactions, seconds) : null };
}

/** Chain hook: what a reader of the figures must know (failed operations). */
function runWarnings(run) {
  const x = run.substrate;
  if (!x) return [];
  const failedOps = Object.values(x.operations).reduce((n, o) => n + o.failed, 0);
  return failedOps > 0 ? [`${failedOps} operations failed in the window (see substrate.operation_errors)`] : [];
}

/** Chain hook: summary.md lines for "How it was measured". */
function reportLines(run) {
  const x = run.substrate;
  if (!x) return [];
  const lines = [
    `- Requests are the JSON-RPC calls @polkadot/api made (over one WebSocket per generator worker): ${x.operations_ok} operations of the mix completed in the window; ${x.notifications} new-head notifications reached the users' subscriptions.`,
  ];
  if (run.node && run.node.rpc_requests_by_method)
    lines.push(
      `- The node's substrate_rpc_calls_finished by method: ${Object.entries(run.node.rpc_requests_by_method)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
    );
  return lines;
}

module.exports = { mergeSubstrate, windowRecords, runWarnings, reportLines };
