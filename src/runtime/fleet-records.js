// @ts-check
'use strict';
// REPLICAS: what a window says about each replica, from what the balancer
// counted and logged and what each replica's cgroup read: requests, share, CPU
// per request, latency, the spread, each second's requests for the chart, and
// a fault's recovery (FAULT=kill-replica).

const { accessLog } = require('./haproxy');
const { latencySummary } = require('../stats');

/**
 * The window's per-replica record from the balancer's counters and the replicas' CPU read at its edges (their cgroups,
 * or on other swarm nodes their cAdvisors: replicaSource says which).
 */
function fleetRecord({
  replicas,
  a,
  b,
  lbCpu,
  lbSpan = null,
  logText,
  window,
  lost,
  replicaSource = "each replica's cgroup",
  spans = [],
}) {
  const served = replicas.map((r) => {
    const [ca, cb] = [a.counts[r.name], b.counts[r.name]];
    return ca && cb ? cb.responses - ca.responses : null;
  });
  const total = served.reduce((t, x) => t + (x || 0), 0);
  const latency = accessLog(logText, window.start, window.end);
  const rows = replicas.map((r, i) => {
    const cpu = Number((b.cpu[i] - a.cpu[i]).toFixed(6));
    const lat = latency[r.name] ? latencySummary(latency[r.name].ta_ms) : null;
    return {
      name: r.name,
      requests: served[i],
      share: total && served[i] !== null ? Number((served[i] / total).toFixed(4)) : null,
      cpu_s: cpu,
      cpu_ms_per_request: perRequest(cpu, spans[i] ? inSpan(logText, r.name, spans[i].span) : served[i]),
      ...(spans[i] ? { span_ms: spans[i].span } : {}),
      latency_ms: lat ? { p50: lat.p50, p99: lat.p99 } : null,
      memory_bytes: r.group ? r.group.memoryBytes() : spans[i] ? spans[i].memory : null,
      // SWARM_NODE: a placed replica's swap, which no engine chainperf reaches could limit (MEMORY_MB)
      ...(spans[i] && spans[i].swap !== null && spans[i].swap !== undefined ? { swap_peak_bytes: spans[i].swap } : {}),
      errors: b.counts[r.name] && a.counts[r.name] ? b.counts[r.name].errors - a.counts[r.name].errors : null,
      up_at_end: Boolean(b.counts[r.name] && b.counts[r.name].up),
    };
  });
  const ratio = (xs) =>
    xs.length > 1 && Math.min(...xs) > 0 ? Number((Math.max(...xs) / Math.min(...xs)).toFixed(3)) : null;
  return {
    replicas: rows,
    requests: total,
    source: `requests: HAProxy's own per-server response counters (Prometheus exporter) at the window's edges; CPU and memory: ${replicaSource}; latency: HAProxy's access log (Ta, the whole request)`,
    balancer: balancerRow(lbCpu, total, lbSpan),
    spread: {
      share_max_over_min: ratio(rows.map((r) => r.share).filter((x) => x !== null)),
      cpu_per_request_max_over_min: ratio(rows.map((r) => r.cpu_ms_per_request).filter((x) => x !== null)),
    },
    replicas_lost: lost.filter((x) => x.at_ms <= window.end),
  };
}

/**
 * The balancer's CPU per request: over the window's requests from its cgroup here, or over its own cAdvisor samples'
 * span on another swarm node (lbSpan: the requests it logged in that span).
 */
function balancerRow(lbCpu, total, lbSpan) {
  if (lbSpan)
    return {
      cpu_s: lbSpan.cpu_s,
      cpu_ms_per_request: perRequest(lbSpan.cpu_s, lbSpan.requests, 5),
      span_ms: lbSpan.span,
    };
  return { cpu_s: lbCpu, cpu_ms_per_request: perRequest(lbCpu, total, 5) };
}

/** CPU seconds over n requests, in ms per request (to `digits` places); null without requests. */
const perRequest = (cpu, n, digits = 4) => (n ? Number(((cpu * 1000) / n).toFixed(digits)) : null);

/** Requests HAProxy logged for a replica that completed inside a span (its CPU's, when that is not the window's). */
function inSpan(logText, name, [fromMs, toMs]) {
  const x = accessLog(logText, fromMs, toMs)[name];
  return x ? x.ta_ms.length : 0;
}

/** The access log's requests as {end_ms, server, ta_ms, status} (the format of src/runtime/haproxy.js). */
function logRequests(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const [ts, server, , ta, status] = line.trim().split(' ');
    if (!server || !Number.isFinite(Number(ts))) continue;
    out.push({ end_ms: Number(ts) * 1000 + Number(ta), server, ta_ms: Number(ta), status: Number(status) });
  }
  return out;
}

/** Each replica's 2xx responses in each whole second of the window, from the access log: the replicas chart. */
function perSecond(text, window, names) {
  const out = [];
  for (let t = Math.floor(window.start / 1000) * 1000; t < window.end; t += 1000)
    out.push({
      t_ms: t,
      span_ms: Math.min(window.end, t + 1000) - Math.max(window.start, t),
      ok: Object.fromEntries(names.map((n) => [n, 0])),
    });
  for (const r of logRequests(text)) {
    if (r.end_ms < window.start || r.end_ms >= window.end || !(r.status >= 200 && r.status < 300)) continue;
    const slot = out[Math.floor(r.end_ms / 1000) - Math.floor(window.start / 1000)];
    if (slot && r.server in slot.ok) slot.ok[r.server]++;
  }
  return out;
}

const ok = (r) => r.status >= 200 && r.status < 300;

/**
 * A kill carried out on another swarm node (its order at ordered_ms, its task reported stopped at reported_ms): its
 * node's report comes a moment after the container died, so the kill is placed at the last response the replica
 * served in between (it landed after that one), or at the order when it served none.
 */
function landedAt(kill, reqs) {
  const served = reqs.filter(
    (r) => r.server === kill.replica && ok(r) && r.end_ms > kill.ordered_ms && r.end_ms <= kill.reported_ms,
  );
  return served.reduce((t, r) => Math.max(t, r.end_ms), kill.ordered_ms);
}

/**
 * FAULT=kill-replica: the fleet's recovery from the access log: what clients got after the kill (errors, the last
 * one), latency before and after, and where the killed replica's traffic went.
 */
function faultRecord(kill, text, window) {
  const reqs = logRequests(text).filter((r) => r.end_ms >= window.start && r.end_ms < window.end);
  const fault = kill.ordered_ms === undefined ? kill : { ...kill, at_ms: landedAt(kill, reqs) };
  const after = reqs.filter((r) => r.end_ms >= fault.at_ms);
  const failed = after.filter((r) => !(r.status >= 200 && r.status < 300));
  const p99 = (xs) => (xs.length ? latencySummary(xs.map((r) => r.ta_ms)).p99 : null);
  const within = (from, to) => reqs.filter((r) => r.end_ms >= from && r.end_ms < to);
  const last = failed.length ? failed[failed.length - 1].end_ms : null;
  return {
    ...fault,
    errors_after: failed.length,
    last_error_after_s: last === null ? null : Number(((last - fault.at_ms) / 1000).toFixed(3)),
    p99_ms_5s_before: p99(within(fault.at_ms - 5000, fault.at_ms)),
    p99_ms_5s_after: p99(within(fault.at_ms, fault.at_ms + 5000)),
    // after the process was gone (HAProxy's log times are whole milliseconds)
    served_by_killed_after: after.filter(
      (r) =>
        r.server === fault.replica &&
        r.status >= 200 &&
        r.status < 300 &&
        r.end_ms > (fault.gone_ms || fault.at_ms) + 1,
    ).length,
    served_by_others_after: after.filter((r) => r.server !== fault.replica && r.status >= 200 && r.status < 300).length,
    // the fleet's 2xx in as long a span just before the kill: what the others' count after it compares with
    served_before: within(fault.at_ms - (window.end - fault.at_ms), fault.at_ms).filter(
      (r) => r.status >= 200 && r.status < 300,
    ).length,
    source: "HAProxy's access log (end of each request, its server, Ta and status)",
  };
}

module.exports = { fleetRecord, faultRecord, logRequests, perSecond };
