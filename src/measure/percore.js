'use strict';
// Per-core load: the node's CPU time on each core, from its cgroup's per-CPU
// counter (cgroup v1 cpuacct.usage_percpu, nanoseconds, one field a CPU),
// read at the window's edges like the node's CPU. The node's cgroup is found
// from its process (/proc/PID/cgroup): the host runtime's node group, or the
// container's own cgroup with the compose runtime. cgroup v2 keeps no
// per-CPU counter: there the figure is absent.

const fs = require('node:fs');
const path = require('node:path');
const { cpusOf } = require('./steal');

const ROOT = '/sys/fs/cgroup';

/** The cpuacct.usage_percpu file of the cgroup process pid is in, or null. */
function perCpuFile(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.trim().split('\n')) {
    const [, ctrls, p] = line.split(':');
    if (!ctrls.split(',').includes('cpuacct') || p === '/') continue; // the root group is the whole machine's
    for (const mount of ['cpuacct', 'cpu,cpuacct', 'cpuacct,cpu']) {
      const file = path.join(ROOT, mount, p, 'cpuacct.usage_percpu');
      if (fs.existsSync(file)) return file;
    }
  }
  return null;
}

/** Nanoseconds per CPU, index = CPU number. */
function parsePerCpu(text) {
  return text.trim().split(/\s+/).map(Number);
}

/** The reads of cpuacct.usage around the per-CPU one may be this far apart (ns) before they are made again. */
const READ_GAP_NS = 2e6;
const READ_TRIES = 5;

/**
 * The per-CPU counter and, beside it, the cgroup's exact total (cpuacct.usage), which the per-core figures are checked
 * against. The two files are read one after the other, and a busy node goes on using CPU between the reads: the total
 * is read just before and just after the per-CPU counter and the two averaged, again (up to READ_TRIES times) while
 * they are more than READ_GAP_NS apart (chainperf's process held off a loaded core between its reads: 23 ms on a CI
 * run's window of 2.1 s).
 */
function readPerCpu(file, read = (f) => fs.readFileSync(f, 'utf8')) {
  const usageFile = path.join(path.dirname(file), 'cpuacct.usage');
  for (let k = 1; ; k++) {
    const before = Number(read(usageFile));
    const ns = parsePerCpu(read(file));
    const after = Number(read(usageFile));
    if (after - before <= READ_GAP_NS || k >= READ_TRIES)
      return { ns, usage_ns: Math.round((before + after) / 2), at_ms: Date.now() };
  }
}

/**
 * The node's CPU on each core between two reads.
 * @param {{ns:number[], at_ms:number}} a
 * @param {{ns:number[], at_ms:number}} b
 * @param {{cpus?:string|null, source:string}} o cpus: the node's cpuset ("0-1"); its cores are the ones the mean is
 * over
 */
function perCoreBetween(a, b, { cpus = null, source }) {
  const seconds = (b.at_ms - a.at_ms) / 1000;
  const all = b.ns.map((x, i) => ({ cpu: i, cpu_s: Math.max(0, x - (a.ns[i] || 0)) / 1e9 }));
  const mine = cpus ? new Set(cpusOf(cpus)) : null;
  const cores = all.filter((c) => (mine ? mine.has(c.cpu) : true));
  const total = all.reduce((s, c) => s + c.cpu_s, 0);
  const mean = cores.length ? cores.reduce((s, c) => s + c.cpu_s, 0) / cores.length : 0;
  const busiest = cores.reduce((m, c) => (m && m.cpu_s >= c.cpu_s ? m : c), null);
  const round = (x, d = 6) => Number(x.toFixed(d));
  return {
    source,
    cpus: cpus || null,
    seconds: round(seconds, 3),
    total_s: round(total),
    // The cgroup's own total over the same reads: the per-core figures must add up to it.
    ...(a.usage_ns !== undefined && b.usage_ns !== undefined
      ? { usage_s: round((b.usage_ns - a.usage_ns) / 1e9) }
      : {}),
    cores: all.map((c) => ({
      cpu: c.cpu,
      cpu_s: round(c.cpu_s),
      utilization: seconds > 0 ? round(c.cpu_s / seconds, 4) : null,
      share: total > 0 ? round(c.cpu_s / total, 4) : null,
      node_core: mine ? mine.has(c.cpu) : true,
    })),
    busiest_cpu: busiest ? busiest.cpu : null,
    // The busiest of the node's cores against their mean: 1 is even, the number of cores is all on one.
    imbalance: mean > 0 ? round(busiest.cpu_s / mean, 3) : null,
  };
}

/** Per-second CPU of each core from consecutive reads: [{t_ms, cpu_s: [per core]}], t_ms the second's start. */
function perSecond(reads) {
  return reads.slice(1).map((b, i) => {
    const a = reads[i];
    const span = (b.at_ms - a.at_ms) / 1000;
    return {
      t_ms: a.at_ms,
      span_s: Number(span.toFixed(3)),
      cpu_s: b.ns.map((x, k) => Number((Math.max(0, x - (a.ns[k] || 0)) / 1e9).toFixed(6))),
    };
  });
}

module.exports = { perCpuFile, parsePerCpu, readPerCpu, perCoreBetween, perSecond };
