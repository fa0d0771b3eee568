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

const { sleep } = require('../util/time');

/** Raw samples [{t_ms, v}] of the first series a selector matches, over [fromMs - 5 s, toMs]. */
async function rawSamples(promUrl, selector, fromMs, toMs, signal) {
  const spanS = Math.ceil((toMs - fromMs) / 1000) + 5;
  const q = new URLSearchParams({ query: `${selector}[${spanS}s]`, time: (toMs / 1000).toFixed(3) });
  const res = await fetch(`${promUrl}/api/v1/query?${q}`, { signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(10000)]) : AbortSignal.timeout(10000) });
  const body = await res.json();
  if (body.status !== 'success') throw new Error(`Prometheus: ${selector}: ${body.error || res.status}`);
  const r = body.data.result[0];
  return r ? r.values.map(([t, v]) => ({ t_ms: Math.round(t * 1000), v: Number(v) })) : [];
}

/**
 * @param {string} promUrl Prometheus base URL
 * @param {string} container the node container's name
 * @param {{lagMs?: number, waitMs?: number}} opts how long after an instant its sample takes to reach
 *   Prometheus, and how much longer to wait for one before giving up
 */
function cadvisorSource(promUrl, container, { lagMs = 2500, waitMs = 15000 } = {}) {
  const sel = (metric, extra = '') => `${metric}{name="${container}"${extra}}`;
  /** Waits until Prometheus holds a CPU sample stamped after toMs, then returns every sample in [fromMs, toMs]. */
  const samplesBetween = async (fromMs, toMs, signal) => {
    await sleep(toMs + lagMs - Date.now(), signal);
    const deadline = Date.now() + waitMs;
    let total;
    for (;;) {
      total = await rawSamples(promUrl, sel('container_cpu_usage_seconds_total'), fromMs, toMs + 15000, signal);
      if (total.some((x) => x.t_ms > toMs)) break;
      if (Date.now() > deadline) throw new Error(`cAdvisor has no sample of container ${container} after the window's end in Prometheus; is cAdvisor running?`);
      await sleep(500, signal);
    }
    const [user, system] = await Promise.all([
      rawSamples(promUrl, sel('container_cpu_user_seconds_total'), fromMs, toMs + 15000, signal),
      rawSamples(promUrl, sel('container_cpu_system_seconds_total'), fromMs, toMs + 15000, signal),
    ]);
    const at = (xs, t) => {
      const hit = xs.find((x) => x.t_ms === t);
      return hit ? hit.v : null;
    };
    return total.filter((x) => x.t_ms >= fromMs && x.t_ms <= toMs).map((x) => ({
      at_ms: x.t_ms, total_s: x.v, user_s: at(user, x.t_ms), system_s: at(system, x.t_ms),
    }));
  };
  return {
    kind: 'cadvisor',
    describe: `cAdvisor counters of container ${container} through Prometheus, raw samples at cAdvisor's own timestamps (total: container_cpu_usage_seconds_total, ns; user and system: container_cpu_{user,system}_seconds_total, 10 ms ticks)`,
    split: true,
    sampled: true,
    samplesBetween,
    /** The samples that open and close the window, inside [startMs, endMs], and all between. */
    async edgesInside(startMs, endMs, signal) {
      const xs = await samplesBetween(startMs, endMs, signal);
      if (xs.length < 2) throw new Error(`cAdvisor has fewer than two samples of container ${container} inside the window`);
      return { a: xs[0], b: xs[xs.length - 1], samples: xs };
    },
    /** Memory, disk and network of the container between two sample instants. */
    async resources(aMs, bMs, signal) {
      const span = async (metric, extra) => {
        const xs = await rawSamples(promUrl, sel(metric, extra), aMs, bMs, signal);
        return xs.filter((x) => x.t_ms >= aMs && x.t_ms <= bMs);
      };
      const delta = (xs) => (xs.length >= 2 ? xs[xs.length - 1].v - xs[0].v : null);
      const sumDelta = async (metric, extra) => {
        // a counter per device or interface: sum the changes of every series
        const q = new URLSearchParams({ query: `${sel(metric, extra)}[${Math.ceil((bMs - aMs) / 1000) + 5}s]`, time: (bMs / 1000).toFixed(3) });
        const body = await (await fetch(`${promUrl}/api/v1/query?${q}`, { signal })).json();
        if (body.status !== 'success' || !body.data.result.length) return null;
        let sum = 0;
        for (const r of body.data.result) {
          const xs = r.values.map(([t, v]) => ({ t_ms: Math.round(t * 1000), v: Number(v) })).filter((x) => x.t_ms >= aMs && x.t_ms <= bMs);
          sum += delta(xs) || 0;
        }
        return sum;
      };
      const memory = await span('container_memory_working_set_bytes');
      return {
        memory: memory.map((x) => ({ t_ms: x.t_ms, bytes: x.v })),
        disk_read_bytes: await sumDelta('container_blkio_device_usage_total', ',operation="Read"'),
        disk_write_bytes: await sumDelta('container_blkio_device_usage_total', ',operation="Write"'),
        network_rx_bytes: await sumDelta('container_network_receive_bytes_total'),
        network_tx_bytes: await sumDelta('container_network_transmit_bytes_total'),
      };
    },
  };
}

module.exports = { cadvisorSource, rawSamples };
