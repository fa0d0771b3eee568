// @ts-check
'use strict';
// RUNTIME=attach with REPLICA_METRICS: a fleet that already runs behind the
// user's own balancer (RPC_URL), measured without starting anything. Each
// replica is read through its metrics endpoint only (an HTTP GET, nothing
// sent to its RPC): its CPU counter and its own request counter, from the
// same answer, at the refresh of the CPU counter nearest each window edge
// (geth refreshes it every 3 s, each replica at its own phase). The fleet's
// CPU is their sum; each replica's share and CPU per request come from its
// own counters over its own span, as long as the window and within half a
// refresh of its edges.

const { metricsSource } = require('../measure/cpu');
const { redactUrl } = require('../util/scrub');

/**
 * The replicas of REPLICA_METRICS, each with its metrics source.
 * @param {string} list comma-separated metrics endpoints
 * @param {{cpu: string, requests?: string}} metrics the client's metric names
 */
function attachedReplicas(list, metrics) {
  const urls = list
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  return urls.map((url, i) => {
    const name = `replica-${i + 1}`;
    return {
      name,
      url,
      source: metricsSource(url, metrics.cpu, {
        also: metrics.requests ? [metrics.requests] : [],
        label: `${name}'s metrics endpoint (REPLICA_METRICS)`,
      }),
    };
  });
}

/**
 * The fleet's CPU source: every replica's counter, summed at each edge. The window is planned on replica 1's
 * refreshes; the others are read at their own refresh nearest each edge. The last edge's readings stay on `last`
 * (null for a replica lost). A replica whose metrics endpoint stops answering is lost for the rest of the run
 * (`lost`: which, when, why): the others are still read, and the fleet's CPU is not measured from then on (total_s
 * null), since the lost one's is not. Only when every replica fails does the edge fail.
 * @returns {import('../contracts').CpuSource & {last: any[]|null, lost: any[]}} lost: {replica, at_ms, reason}
 */
function fleetCpuSource(replicas) {
  const first = replicas[0].source;
  /** @type {import('../contracts').CpuSource & {last: any[]|null, lost: any[]}} */
  const src = {
    kind: 'metrics',
    describe: `${replicas.length} replicas' CPU counters (${replicas.length === 1 ? 'its' : 'each'} metrics endpoint, REPLICA_METRICS), summed; the window on replica-1's refreshes, each other replica read at its own refresh nearest each edge (within half a refresh period)`,
    split: false,
    last: null,
    lost: [],
    async calibrate(signal) {
      const periods = await Promise.all(replicas.map((r) => r.source.calibrate(signal)));
      if (new Set(periods).size > 1)
        throw new Error(
          `REPLICA_METRICS: the replicas refresh their CPU counters at different periods (${replicas.map((r, i) => `${r.name} ${periods[i]} ms`).join(', ')}); a fleet of one client and version refreshes them alike`,
        );
      return periods[0];
    },
    get periodMs() {
      return first.periodMs;
    },
    align: (t) => first.align(t),
    async readEdge(edgeMs, signal) {
      const isLost = (r) => src.lost.some((x) => x.replica === r.name);
      const settled = await Promise.allSettled(
        replicas.map((r) => (isLost(r) ? Promise.resolve(null) : r.source.readEdge(edgeMs, signal))),
      );
      if (signal && signal.aborted) throw signal.reason;
      // every replica failed here or was lost before: nothing of the fleet is read
      if (!settled.some((x) => x.status === 'fulfilled' && x.value !== null)) {
        const failed = settled.find((x) => x.status === 'rejected');
        throw failed
          ? failed.reason
          : new Error('REPLICA_METRICS: every replica was lost: no metrics endpoint answers');
      }
      const reads = settled.map((x, i) => {
        if (x.status === 'fulfilled') return x.value;
        const reason = x.reason && x.reason.message ? x.reason.message : String(x.reason);
        src.lost.push({ replica: replicas[i].name, at_ms: edgeMs, reason });
        return null;
      });
      src.last = reads;
      const total = reads.some((r) => r === null) ? null : reads.reduce((t, r) => t + r.total_s, 0);
      const seen = reads.find((r) => r !== null).seen_ms;
      return { user_s: null, system_s: null, total_s: total, at_ms: edgeMs, seen_ms: seen };
    },
  };
  return src;
}

/** One replica's part of a window, from its readings at the window's two edges (null: it was lost by then). */
function replicaRow(r, a, b, requestsMetric) {
  if (!a || !b)
    return {
      name: r.name,
      requests: null,
      share: null,
      cpu_s: null,
      cpu_ms_per_request: null,
      latency_ms: null,
      memory_bytes: null,
      errors: null,
      up_at_end: false, // its metrics endpoint did not answer: not up as far as chainperf can tell
      span_ms: null,
    };
  const cpu = Number((b.total_s - a.total_s).toFixed(6));
  const [qa, qb] = requestsMetric ? [a.also[requestsMetric], b.also[requestsMetric]] : [null, null];
  const requests = qa !== null && qb !== null ? qb - qa : null;
  return {
    name: r.name,
    requests,
    share: null,
    cpu_s: cpu,
    cpu_ms_per_request: requests ? Number(((cpu * 1000) / requests).toFixed(4)) : null,
    latency_ms: null,
    memory_bytes: null,
    errors: null,
    up_at_end: true,
    span_ms: [a.seen_ms, b.seen_ms],
  };
}

/**
 * stack.fleet for an attached fleet: the window hook (each replica's part of it, from the CPU source's edge
 * readings), its warnings and the run's record.
 */
function attachFleetHooks(replicas, source, { requestsMetric, cpuMetric }) {
  return {
    replicas,
    windowHook(window) {
      const start = source.last; // the start edge was read just before the hook began
      return {
        cancel() {},
        async stop() {
          const end = source.last;
          // an edge that failed leaves another edge's readings: no per-replica figures then
          const at = (reads) => reads.find((x) => x !== null).at_ms;
          if (!start || !end || at(start) !== window.start || at(end) !== window.end) return null;
          const rows = replicas.map((r, i) => replicaRow(r, start[i], end[i], requestsMetric));
          const total = rows.reduce((t, x) => t + (x.requests || 0), 0);
          for (const x of rows) x.share = total && x.requests !== null ? Number((x.requests / total).toFixed(4)) : null;
          const ratio = (xs) =>
            xs.length > 1 && Math.min(...xs) > 0 ? Number((Math.max(...xs) / Math.min(...xs)).toFixed(3)) : null;
          return {
            replicas: rows,
            requests: total,
            source: `requests: each replica's own ${requestsMetric} counter; CPU: its ${cpuMetric}; both from one answer of its metrics endpoint at its refresh nearest each edge (span_ms: when each was seen)`,
            balancer: { cpu_s: null, cpu_ms_per_request: null },
            spread: {
              share_max_over_min: ratio(rows.map((x) => x.share).filter((x) => x !== null)),
              cpu_per_request_max_over_min: ratio(rows.map((x) => x.cpu_ms_per_request).filter((x) => x !== null)),
            },
            replicas_lost: source.lost.filter((x) => x.at_ms <= window.end),
          };
        },
      };
    },
    problems: () =>
      source.lost.map(
        (x) =>
          `replica ${x.replica}'s metrics endpoint stopped answering at ${new Date(x.at_ms).toISOString()} (${x.reason}): its CPU and requests, and the fleet's CPU, were not measured from then on`,
      ),
    record: () => ({
      replicas: replicas.length,
      algorithm: null,
      balancer: "the user's (RPC_URL), not started by chainperf",
      balancer_cpus: null,
      config: null,
      health_check: null,
      per_replica: `attached: each replica's metrics endpoint (${replicas.map((r) => `${r.name} ${redactUrl(r.url)}`).join(', ')})`,
    }),
  };
}

module.exports = { attachedReplicas, fleetCpuSource, attachFleetHooks };
