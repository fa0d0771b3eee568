'use strict';
// The Prometheus cross-check of a window: the node's own request counter (and
// Go GC cycles, requests by method where the client labels them) as its
// Prometheus scraped them, beside the generator's count. With REPLICAS, each
// replica's counter apart: a replica with no scrape inside the window is named
// (its requests are missing from the sum) rather than silently counted as zero.

const { log } = require('../util/log');
const { sleepUntil } = require('../util/time');

/** The node's request counters from Prometheus: only a cross-check, so a failure to read them is a warning. */
async function addPrometheusCheck(node, { stack, runId, w, signal, name, warnings }) {
  if (!stack.prometheus) return;
  const warn = (warning) => {
    log(`warning: ${warning}`);
    if (warnings && !warnings.includes(warning)) warnings.push(warning);
  };
  try {
    Object.assign(node, await prometheusCrossCheck(stack, runId, w, signal));
  } catch (err) {
    if (signal.aborted) throw err;
    // Only a cross-check: the figures stand without it.
    node.rpc_requests = null;
    warn(
      `the Prometheus cross-check is missing for ${name} (${err.message}): the figures come from the node's own counters and stand without it`,
    );
    return;
  }
  if (node.rpc_requests_unscraped)
    warn(
      `the Prometheus cross-check of ${name} has no scrape of ${node.rpc_requests_unscraped.join(', ')} inside the window: its request counter (${node.rpc_requests ?? 'none'}) leaves out what they served`,
    );
}

/** The node's own request counters through Prometheus over the window: a cross-check of the generator's counts. */
async function prometheusCrossCheck(stack, runId, w, signal) {
  const out = {};
  // Let the first scrape after the window land: by 1.5 s after its end (scrapes 1 s apart). Counted from the end, not
  // from now: the window's samples, awaited before, took about that already.
  await sleepUntil(w.end + 1500, signal);
  const metric = (stack.requestsMetric && stack.requestsMetric.requests) || 'rpc_requests';
  if (stack.fleet) Object.assign(out, await fleetRequests(stack, metric, runId, w));
  else {
    out.rpc_requests = await rise(stack, metric, runId, w);
    if (out.rpc_requests !== null) {
      // the instants of the two scrapes the rise is between (one node: one series), so a reader sees how far each is
      // from its edge
      const stamp = async (ms) => stack.prometheus.valueAt(`max(timestamp(${metric}{run_id="${runId}"}))`, ms);
      const [a, b] = [await stamp(w.start), await stamp(w.end)];
      if (a !== null && b !== null) out.rpc_requests_span_ms = [Math.round(a * 1000), Math.round(b * 1000)];
    }
  }
  const gc = stack.requestsMetric && stack.requestsMetric.gcCycles;
  if (gc) {
    const cycles = await rise(stack, gc, runId, w); // Go GC cycles the node ran in the window
    if (cycles !== null) out.gc_cycles = cycles;
  }
  const label = stack.requestsMetric && stack.requestsMetric.requestsByLabel;
  if (label)
    out.rpc_requests_by_method = await requestsByLabel(
      stack.prometheus,
      `sum by (${label}) (${metric}{run_id="${runId}"})`,
      label,
      w,
    );
  return out;
}

/**
 * How far back from an edge a fleet's counter is looked for: a replica that died in the window has no sample at its
 * end (its series went stale), so each replica's last sample within the window's span counts, with what it served
 * before it died.
 */
const lookbackS = (w) => Math.ceil((w.end - w.start) / 1000) + 5;

/** A counter's rise over the window, as of the scrapes (1 s apart) before each edge; null when either is missing. */
async function rise(stack, counter, runId, w) {
  const q = stack.fleet
    ? `sum(last_over_time(${counter}{run_id="${runId}"}[${lookbackS(w)}s]))`
    : `sum(${counter}{run_id="${runId}"})`;
  const [a, b] = [await stack.prometheus.valueAt(q, w.start), await stack.prometheus.valueAt(q, w.end)];
  return a !== null && b !== null ? b - a : null;
}

/**
 * REPLICAS: the request counter's rise replica by replica (each series carries its `replica` label), their sum, and
 * the replicas without a scrape inside the window or at either edge: {rpc_requests, rpc_requests_by_replica,
 * rpc_requests_unscraped?}. A scrape config without the label (none of chainperf's) keeps the plain sum.
 */
async function fleetRequests(stack, metric, runId, w) {
  const p = stack.prometheus;
  const plain = async () => ({ rpc_requests: await rise(stack, metric, runId, w) });
  if (!p.vectorAt) return plain();
  // a replica gone before the window (an earlier window's FAULT) served none of it
  const goneBefore = new Set((stack.fleet.lost || []).filter((x) => x.at_ms <= w.start).map((x) => x.replica));
  const names = (stack.fleet.replicas || []).map((r) => r.name).filter((n) => !goneBefore.has(n));
  const sel = `${metric}{run_id="${runId}"}`;
  const q = `sum by (replica) (last_over_time(${sel}[${lookbackS(w)}s]))`;
  const [a, b] = [(await p.vectorAt(q, w.start, 'replica')) || {}, (await p.vectorAt(q, w.end, 'replica')) || {}];
  if (!names.some((n) => n in a || n in b)) return plain();
  const seconds = Math.max(1, Math.floor((w.end - w.start) / 1000));
  const inside = (await p.vectorAt(`sum by (replica) (count_over_time(${sel}[${seconds}s]))`, w.end, 'replica')) || {};
  const byReplica = {};
  const unscraped = [];
  for (const n of names) {
    const scraped = n in a && n in b && inside[n] > 0;
    byReplica[n] = scraped ? b[n] - a[n] : null;
    if (!scraped) unscraped.push(n);
  }
  const known = Object.values(byReplica).filter((v) => v !== null);
  return {
    rpc_requests: known.length ? known.reduce((t, v) => t + v, 0) : null,
    rpc_requests_by_replica: byReplica,
    ...(unscraped.length ? { rpc_requests_unscraped: unscraped } : {}),
  };
}

/** Rise of a counter per label value over the window, from two instant queries at its edges. */
async function requestsByLabel(prometheus, query, label, w) {
  if (!prometheus.vectorAt) return null;
  const [a, b] = [await prometheus.vectorAt(query, w.start, label), await prometheus.vectorAt(query, w.end, label)];
  if (!b) return null;
  const out = {};
  for (const [key, value] of Object.entries(b)) {
    const r = value - ((a && a[key]) || 0);
    if (r > 0) out[key] = r;
  }
  return out;
}

module.exports = { addPrometheusCheck, prometheusCrossCheck, fleetRequests, requestsByLabel };
