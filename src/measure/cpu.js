// @ts-check
'use strict';
// Sources of a node's CPU time, all read as cumulative counters at the edges
// of a window (never as rates). Each source says how it measures:
//   cgroup  - the node's cgroup, nanosecond counters, user and system apart
//   pid     - /proc/PID/stat of one process, clock ticks (10 ms), user and system apart
//   metrics - a counter in the node's Prometheus endpoint (geth:
//             system_cpu_procload_total, seconds, user+system together). geth
//             refreshes it every 3 s, so windows are aligned to its refreshes.

const fs = require('node:fs');
const { sleep, timeoutSignal } = require('../util/time');
const { splitAuth } = require('../util/url-auth');

const CLK_TCK = 100; // USER_HZ on Linux

/** utime and stime of a process in seconds (fields 14 and 15 of /proc/PID/stat). */
function readProcStat(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') throw new Error(`process ${pid} is gone (no /proc/${pid}/stat): the node exited`);
    throw err;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // A process that exited stays a zombie (state Z) until its parent reaps it: gone too, its counters frozen.
  if (fields[0] === 'Z' || fields[0] === 'X') throw new Error(`process ${pid} is gone (a zombie): the node exited`);
  return { user_s: Number(fields[11]) / CLK_TCK, system_s: Number(fields[12]) / CLK_TCK };
}

/** Bytes read from and written to storage by a process (/proc/PID/io), or null when not readable. */
function readProcIo(pid) {
  try {
    const kv = Object.fromEntries(
      fs
        .readFileSync(`/proc/${pid}/io`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(': ')),
    );
    return { read_bytes: Number(kv.read_bytes), write_bytes: Number(kv.write_bytes) };
  } catch {
    return null;
  }
}

/** Value of the first sample of name in Prometheus text format whose labels hold every one given (`a="b"`), or null. */
function metricValue(text, name, labels = []) {
  const re = new RegExp(`^${name}(\\{[^}]*\\})?\\s+(\\S+)`, 'gm');
  for (const m of text.matchAll(re)) if (labels.every((l) => (m[1] || '').includes(l))) return Number(m[2]);
  return null;
}

/**
 * The node's cgroup: CPU of its whole process tree, split in user and system.
 * @param {{name: string, version: number, cpu: () => {user_s: number, system_s: number, total_s?: number}}} cgroup
 * @returns {import('../contracts').CpuSource}
 */
function cgroupSource(cgroup) {
  return {
    kind: 'cgroup',
    describe: `cgroup ${cgroup.name} (cgroup v${cgroup.version}, total ${cgroup.version === 1 ? 'cpuacct.usage, ns; split by cpuacct.usage_user/usage_sys' : 'cpu.stat usage_usec; split by user_usec/system_usec'})`,
    split: true,
    /** @returns {Promise<import('../contracts').CpuReading>} */
    async read() {
      const c = cgroup.cpu();
      return { ...c, total_s: Number.isFinite(c.total_s) ? c.total_s : c.user_s + c.system_s, at_ms: Date.now() };
    },
  };
}

/**
 * One process's CPU from /proc/PID/stat.
 * @param {number} pid
 * @returns {import('../contracts').CpuSource}
 */
function pidSource(pid) {
  return {
    kind: 'pid',
    describe: `/proc/${pid}/stat utime and stime (1/${CLK_TCK} s ticks)`,
    split: true,
    async read() {
      const c = readProcStat(pid);
      return { ...c, total_s: c.user_s + c.system_s, at_ms: Date.now() };
    },
  };
}

/** A metrics endpoint's text (5 s at most); named is the endpoint's name in errors. */
async function fetchMetrics(target, named, signal) {
  let res;
  try {
    res = await fetch(target.url, {
      headers: target.headers,
      signal: timeoutSignal(5000, signal),
    });
  } catch (err) {
    if (signal && signal.aborted) throw err;
    throw new Error(
      `${named} did not answer: ${err.name === 'TimeoutError' ? 'no answer in 5 s' : (err.cause && err.cause.code) || err.message}`,
    );
  }
  if (!res.ok) throw new Error(`${named}: HTTP ${res.status}`);
  return res.text();
}

/**
 * A counter in a metrics endpoint that the node refreshes every few seconds.
 * calibrate() learns the refresh period and phase; align() moves a planned
 * edge onto a refresh; readEdge() returns the value published at that refresh.
 * @param {string} url
 * @param {string} [metric]
 * @param {{pollMs?: number, also?: string[], label?: string}} [opts] also: metrics read from the same answer as the
 *   refreshed counter at each edge (a fleet's replica: its request counter); label: the endpoint's name in errors
 * @returns {import('../contracts').CpuSource}
 */
function metricsSource(url, metric = 'system_cpu_procload_total', { pollMs = 25, also = [], label = null } = {}) {
  const named = label || "the node's metrics endpoint (METRICS_URL)";
  let period = null;
  let phase = null; // a time (ms) at which a refresh was seen
  const target = splitAuth(url); // basic auth from the URL goes as a header
  let fetched = ''; // the last answer's text, for the metrics read with the CPU's (`also`)
  const fetchValue = async (signal) => {
    const text = await fetchMetrics(target, named, signal);
    const v = metricValue(text, metric);
    if (v === null) throw new Error(`${named} has no ${metric}`);
    fetched = text;
    return v;
  };
  /** Polls until the value changes; returns the new value and when the change was seen. */
  const nextChange = async (signal, timeoutMs = 20000) => {
    const first = await fetchValue(signal);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      await sleep(pollMs, signal);
      // the refresh happened before this request was answered; its send time is the closer bound
      const sent = Date.now();
      const v = await fetchValue(signal);
      if (v !== first) return { value: v, seen_ms: sent };
    }
    throw new Error(`${metric} did not change in ${timeoutMs / 1000} s; is the node running with metrics enabled?`);
  };
  return {
    kind: 'metrics',
    describe: `${metric} from the node's metrics endpoint (user+system, seconds; windows aligned to its refreshes)`,
    split: false,
    async calibrate(signal) {
      // Three periods, so the detection jitter (a poll interval plus a fetch) is divided by three before rounding to
      // 0.1 s.
      const a = await nextChange(signal);
      await nextChange(signal);
      await nextChange(signal);
      const d = await nextChange(signal);
      period = Math.round((d.seen_ms - a.seen_ms) / 3 / 100) * 100;
      phase = d.seen_ms;
      return period;
    },
    get periodMs() {
      return period;
    },
    /** The first refresh at or after t. */
    align(t) {
      return phase + Math.ceil((t - phase) / period) * period;
    },
    /** The value published at the refresh planned for edgeMs (waits for it). */
    async readEdge(edgeMs, signal) {
      await sleep(edgeMs - period / 2 - Date.now(), signal);
      const { value, seen_ms: seen } = await nextChange(signal, period * 2);
      const read = { user_s: null, system_s: null, total_s: value, at_ms: edgeMs, seen_ms: seen };
      // the other metrics asked for, from the same answer as the refreshed CPU counter
      return also.length ? { ...read, also: Object.fromEntries(also.map((m) => [m, metricValue(fetched, m)])) } : read;
    },
  };
}

module.exports = { readProcStat, readProcIo, metricValue, cgroupSource, pidSource, metricsSource };
