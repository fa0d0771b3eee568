'use strict';
// Steal time: on a virtual machine, the time the hypervisor ran something else
// on a vCPU that had work to do (the 8th column of a cpu line in /proc/stat).
// The kernel charges it to no process, so it does not inflate a node's CPU
// time; but a window in which the host took much of the node's cores is one
// whose throughput and latency were not the node's alone. Read on this
// machine, so only for a node that runs on it (host and compose runtimes).

const fs = require('node:fs');

const CLK_TCK = 100; // USER_HZ on Linux

/** Cpu numbers in a list such as "1", "2-3" or "0,2-3". */
function cpusOf(list) {
  const out = [];
  for (const part of String(list).split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b === undefined ? a : b); c++) out.push(c);
  }
  return out;
}

/**
 * Steal and total time of the cpus in `list` (every cpu when null), in seconds,
 * from /proc/stat text.
 */
function parseStat(text, list) {
  const wanted = list ? new Set(cpusOf(list)) : null;
  let steal = 0;
  let total = 0;
  let found = 0;
  for (const line of text.split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m || (wanted && !wanted.has(Number(m[1])))) continue;
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already in user.
    const v = m[2].trim().split(/\s+/).slice(0, 8).map(Number);
    steal += v[7] || 0;
    total += v.reduce((x, y) => x + y, 0);
    found++;
  }
  if (wanted && found !== wanted.size) return null;
  return { steal_s: steal / CLK_TCK, total_s: total / CLK_TCK };
}

/** Reads steal and total time of the cpus in `list` now, or null when /proc/stat has not got them. */
function readSteal(list) {
  try {
    return parseStat(fs.readFileSync('/proc/stat', 'utf8'), list);
  } catch {
    return null;
  }
}

/** Steal over a window from two reads: {cpus, steal_s, share} (share of the cpus' time), or null. */
function stealBetween(a, b, list) {
  if (!a || !b) return null;
  const total = b.total_s - a.total_s;
  const steal = b.steal_s - a.steal_s;
  if (!(total > 0)) return null;
  return { cpus: list || 'all', steal_s: Number(steal.toFixed(2)), share: Number((steal / total).toFixed(4)) };
}

module.exports = { parseStat, readSteal, stealBetween, cpusOf };
