// @ts-check
'use strict';
// Node CPU (and memory, disk, network) from cAdvisor's counters for the node
// container, read through Prometheus' HTTP API as raw samples.
//
// cAdvisor reads a container's cgroup every housekeeping interval (1 s, with
// jitter) and stamps each sample with the instant it read it; Prometheus keeps
// that timestamp. A range selector returns those samples unchanged, so the
// values used here are counters at known instants, never `increase()` or
// `rate()`. The edges of the CPU window are the first sample at or after the
// planned start and the last at or before the planned end; the requests it is
// divided by are those completed between the same two instants.

const { sleep, timeoutSignal } = require('../util/time');
const { whyNoSample } = require('./prometheus-health');

/** @typedef {import('../contracts').CpuReading} CpuReading a cAdvisor sample of the container's CPU */

/**
 * Every series a selector matches, as Prometheus returns a range query over [fromMs - 5 s, toMs]: [{metric, values:
 * [[t_s, v]]}].
 */
async function rangeQuery(promUrl, selector, fromMs, toMs, signal) {
  const spanS = Math.ceil((toMs - fromMs) / 1000) + 5;
  const q = new URLSearchParams({ query: `${selector}[${spanS}s]`, time: (toMs / 1000).toFixed(3) });
  const res = await fetch(`${promUrl}/api/v1/query?${q}`, {
    signal: timeoutSignal(10000, signal),
  });
  const body = await res.json();
  if (body.status !== 'success')
    throw Object.assign(new Error(`Prometheus: ${selector}: ${body.error || res.status}`), { prometheusRefused: true });
  return body.data.result;
}

/**
 * Raw samples [{t_ms, v}] of a selector over [fromMs - 5 s, toMs], its series summed at each instant: cAdvisor with
 * per-CPU metrics gives a container's CPU counter as one series per core (`cpu` label), all stamped with the instant
 * of the read, and their sum is the container's counter.
 */
async function rawSamples(promUrl, selector, fromMs, toMs, signal) {
  const byT = new Map();
  for (const r of await rangeQuery(promUrl, selector, fromMs, toMs, signal))
    for (const [t, v] of r.values) {
      const tMs = Math.round(t * 1000);
      byT.set(tMs, (byT.get(tMs) || 0) + Number(v));
    }
  return [...byT].sort((a, b) => a[0] - b[0]).map(([tMs, v]) => ({ t_ms: tMs, v }));
}

/** The selector of a metric of the container named container. */
const selector =
  (container) =>
  (metric, extra = '') =>
    `${metric}{name="${container}"${extra}}`;

/**
 * The samples of series selectorText from fromMs on, once one stamped after toMs has reached Prometheus: looked for
 * lagMs after toMs (cAdvisor's samples take that long to be scraped), then every 500 ms for up to waitMs more.
 * `after` is false when none came (the container stopped, or cAdvisor did).
 */
async function samplesPast(promUrl, selectorText, fromMs, toMs, { lagMs, waitMs, signal }) {
  await sleep(toMs + lagMs - Date.now(), signal);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const xs = await rawSamples(promUrl, selectorText, fromMs, toMs + 15000, signal);
    const after = xs.some((x) => x.t_ms > toMs);
    if (after || Date.now() > deadline) return { xs, after };
    await sleep(500, signal);
  }
}

/**
 * Waits until Prometheus holds a CPU sample of the container stamped after toMs, then returns every sample in
 * [fromMs, toMs], with its user and system parts.
 */
async function cpuSamplesBetween(promUrl, container, { fromMs, toMs, lagMs, waitMs, signal }) {
  const sel = selector(container);
  const past = await samplesPast(promUrl, sel('container_cpu_usage_seconds_total'), fromMs, toMs, {
    lagMs,
    waitMs,
    signal,
  });
  if (!past.after)
    throw new Error(
      `cAdvisor has no sample of container ${container} after the window's end in Prometheus (${await whyNoSample(promUrl, past.xs, toMs, { query: rangeQuery, signal })}); is cAdvisor running?`,
    );
  const total = past.xs;
  const [user, system] = await Promise.all([
    rawSamples(promUrl, sel('container_cpu_user_seconds_total'), fromMs, toMs + 15000, signal),
    rawSamples(promUrl, sel('container_cpu_system_seconds_total'), fromMs, toMs + 15000, signal),
  ]);
  const at = (xs, t) => {
    const hit = xs.find((x) => x.t_ms === t);
    return hit ? hit.v : null;
  };
  return total
    .filter((x) => x.t_ms >= fromMs && x.t_ms <= toMs)
    .map((x) => ({ at_ms: x.t_ms, total_s: x.v, user_s: at(user, x.t_ms), system_s: at(system, x.t_ms) }));
}

/** A counter per device or interface, summed at each of cAdvisor's sample instants in [aMs, bMs]; null when absent. */
async function summedSamples(promUrl, selectorText, aMs, bMs, signal) {
  // A query Prometheus refuses leaves that resource unmeasured (null); a failed request still fails the window.
  const xs = await rawSamples(promUrl, selectorText, aMs, bMs, signal).catch((err) => {
    if (err.prometheusRefused) return [];
    throw err;
  });
  const inside = xs.filter((x) => x.t_ms >= aMs && x.t_ms <= bMs);
  return xs.length ? inside : null;
}

/** Memory, disk and network of the container between two sample instants: totals, and the samples behind the charts. */
async function containerResources(promUrl, container, aMs, bMs, signal) {
  const sel = selector(container);
  const summed = (metric, extra) => summedSamples(promUrl, sel(metric, extra), aMs, bMs, signal);
  const delta = (xs) => (xs && xs.length >= 2 ? xs[xs.length - 1].v - xs[0].v : null);
  const [memory, swap, read, write, rx, tx] = await Promise.all([
    summed('container_memory_working_set_bytes'),
    summed('container_memory_swap'),
    summed('container_blkio_device_usage_total', ',operation="Read"'),
    summed('container_blkio_device_usage_total', ',operation="Write"'),
    summed('container_network_receive_bytes_total'),
    summed('container_network_transmit_bytes_total'),
  ]);
  return {
    memory: (memory || []).map((x) => ({ t_ms: x.t_ms, bytes: x.v })),
    swap_peak_bytes: swap && swap.length ? Math.max(...swap.map((x) => x.v)) : null,
    disk_read_bytes: delta(read),
    disk_write_bytes: delta(write),
    network_rx_bytes: delta(rx),
    network_tx_bytes: delta(tx),
    io: { disk_read: read || [], disk_write: write || [], network_rx: rx || [], network_tx: tx || [] },
  };
}

/**
 * @param {string} promUrl Prometheus base URL
 * @param {string} container the node container's name
 * @param {{lagMs?: number, waitMs?: number}} [opts] how long after an instant its sample takes to reach
 *   Prometheus, and how much longer to wait for one before giving up
 * @returns {import('../contracts').CpuSource}
 */
function cadvisorSource(promUrl, container, { lagMs = 2500, waitMs = 15000 } = {}) {
  const samplesBetween = (fromMs, toMs, signal) =>
    cpuSamplesBetween(promUrl, container, { fromMs, toMs, lagMs, waitMs, signal });
  return {
    kind: 'cadvisor',
    describe: `cAdvisor counters of container ${container} through Prometheus, raw samples at cAdvisor's own timestamps (total: container_cpu_usage_seconds_total, ns; user and system: container_cpu_{user,system}_seconds_total, 10 ms ticks)`,
    split: true,
    sampled: true,
    samplesBetween,
    /** The samples that open and close the window, inside [startMs, endMs], and all between. */
    async edgesInside(startMs, endMs, signal) {
      const xs = await samplesBetween(startMs, endMs, signal);
      if (xs.length < 2)
        throw new Error(`cAdvisor has fewer than two samples of container ${container} inside the window`);
      return { a: xs[0], b: xs[xs.length - 1], samples: xs };
    },
    resources: (aMs, bMs, signal) => containerResources(promUrl, container, aMs, bMs, signal),
  };
}

/** A counter's value at instant t, linearly between the samples on each side of it; null without one on each side. */
function interpolateAt(xs, t) {
  let before = null;
  for (const x of xs) {
    if (x.t_ms === t) return x.v;
    if (x.t_ms > t) return before ? before.v + ((x.v - before.v) * (t - before.t_ms)) / (x.t_ms - before.t_ms) : null;
    before = x;
  }
  return null;
}

/**
 * A container's CPU counter samples from fromMs - 10 s on, once one after toMs has reached Prometheus; a container
 * with none after toMs when waitMs has passed (after lagMs) has stopped (`stopped`: its counter keeps its last value).
 * @param {string} promUrl
 * @param {string} container
 * @param {number} fromMs
 * @param {number} toMs
 * @param {{lagMs?: number, waitMs?: number, signal?: AbortSignal}} [o]
 */
async function counterAround(promUrl, container, fromMs, toMs, { lagMs = 2500, waitMs = 15000, signal } = {}) {
  const sel = selector(container)('container_cpu_usage_seconds_total');
  const { xs, after } = await samplesPast(promUrl, sel, fromMs - 10000, toMs, { lagMs, waitMs, signal });
  return { container, xs, stopped: !after };
}

/**
 * counterAround's reads, each made once per container and window: a placed fleet's window reads every replica's
 * counter for the fleet's CPU (containersCadvisorSource) and again for the replica's own row (edgesIn).
 * @param {string} promUrl
 * @param {{lagMs?: number, waitMs?: number}} [opts]
 */
function sharedCounters(promUrl, opts = {}) {
  const reads = new Map();
  const around = (container, fromMs, toMs, signal) => {
    const key = `${container} ${fromMs} ${toMs}`;
    if (!reads.has(key)) {
      reads.set(key, counterAround(promUrl, container, fromMs, toMs, { ...opts, signal }));
      if (reads.size > 64) reads.delete(reads.keys().next().value); // a window's reads are done with by the next
    }
    return reads.get(key);
  };
  return {
    around,
    /**
     * A container's first and last samples inside [startMs, endMs] ({at_ms, total_s}), and the instant of the last
     * one its counter rose at (lastRiseMs: it still ran then; a container killed in the window is sampled a while
     * after); fewer than two throw.
     */
    async edgesIn(container, startMs, endMs, signal) {
      const xs = (await around(container, startMs, endMs, signal)).xs.filter(
        (x) => x.t_ms >= startMs && x.t_ms <= endMs,
      );
      if (xs.length < 2)
        throw new Error(`cAdvisor has fewer than two samples of container ${container} inside the window`);
      const at = (x) => ({ at_ms: x.t_ms, total_s: x.v });
      const rose = xs.filter((x, i) => i > 0 && x.v > xs[i - 1].v);
      return { a: at(xs[0]), b: at(xs[xs.length - 1]), lastRiseMs: rose.length ? rose[rose.length - 1].t_ms : null };
    },
  };
}

/**
 * The CPU of several containers together (a fleet's replicas on swarm nodes whose engines chainperf does not reach),
 * from their cAdvisors through Prometheus. Their samples are taken at different instants: the fleet's CPU window runs
 * from the latest of their first samples inside the planned window to the earliest of their last ones (so that every
 * counter is interpolated between two of its own samples taken while the load ran), each counter interpolated
 * linearly at those two instants, summed; the requests are counted between the same instants. A container whose
 * samples stopped (it exited) keeps its last value and does not shorten the window.
 * @param {string} promUrl
 * @param {string[]} containers the containers' names, as cAdvisor labels their series
 * @param {ReturnType<typeof sharedCounters>} [counters] where the counters are read (shared with the replicas' rows)
 */
function containersCadvisorSource(promUrl, containers, counters = sharedCounters(promUrl)) {
  return {
    kind: 'cadvisor',
    describe: `cAdvisor counters of containers ${containers.join(', ')} through Prometheus (container_cpu_usage_seconds_total), each interpolated linearly between its own samples at two instants inside the window (the latest first sample of any of them, the earliest last one), summed`,
    split: false,
    sampled: true,
    /** The two instants and every whole second between them (for the charts), each the containers' counters summed. */
    async edgesInside(startMs, endMs, signal) {
      const each = await Promise.all(containers.map((c) => counters.around(c, startMs, endMs, signal)));
      const inside = (e) => e.xs.filter((x) => x.t_ms >= startMs && x.t_ms <= endMs);
      for (const e of each)
        if (inside(e).length < (e.stopped ? 1 : 2))
          throw new Error(`cAdvisor has fewer than two samples of container ${e.container} inside the window`);
      const from = Math.max(...each.map((e) => inside(e)[0].t_ms));
      const running = each.filter((e) => !e.stopped);
      const to = running.length ? Math.min(...running.map((e) => inside(e).pop().t_ms)) : endMs;
      if (!(to > from)) throw new Error("cAdvisor's samples of the containers leave no span inside the window");
      const valueAt = (e, t) => {
        const v = interpolateAt(e.xs, t);
        return v !== null ? v : e.xs.filter((x) => x.t_ms <= t).pop().v; // stopped: its last value
      };
      const instants = [from];
      for (let t = Math.ceil(from / 1000) * 1000; t < to; t += 1000) if (t > from) instants.push(t);
      instants.push(to);
      const samples = instants.map((t) => ({
        at_ms: t,
        total_s: each.reduce((sum, e) => sum + valueAt(e, t), 0),
        user_s: null,
        system_s: null,
      }));
      return { a: samples[0], b: samples[samples.length - 1], samples };
    },
  };
}

module.exports = { cadvisorSource, containersCadvisorSource, sharedCounters, interpolateAt, rawSamples };
