'use strict';
// The test runner's extra lane: the integration files run JOBS at a time, and
// most of a file's time is a node starting, a sync, a window; when the files
// running wait at once (a teardown, a swarm deploying, a restart), the cores
// idle. Then one more file, the shortest one left, starts beside them, so
// that idle CPU does work; at most `extra` such files run at once, none while
// lint and the unit tests (which time things in milliseconds) still run.

const fs = require('node:fs');

/** The machine's busy and total CPU time so far (jiffies), from /proc/stat's first line; null where it is not read. */
function machineCpu() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - f[3] - f[4], total }; // idle and iowait are not busy
  } catch {
    return null;
  }
}

/**
 * Watches the cores every `everyMs`; when they were busy less than `belowShare` of the time over the last `lookS`,
 * and `canStart()` says so, calls `start()` (which returns the extra file's promise, or null when none is left).
 * Returns {stop(): Promise} that stops watching and waits for the extra files started.
 * @param {{extra: number, canStart: () => boolean, start: (busy: number) => Promise<void>|null,
 *   everyMs?: number, lookS?: number, belowShare?: number, read?: () => ({busy: number, total: number}|null)}} o
 */
function idleLane({ extra, canStart, start, everyMs = 5000, lookS = 15, belowShare = 0.7, read = machineCpu }) {
  const samples = [];
  const runningExtra = new Set();
  const look = Math.max(1, Math.round((lookS * 1000) / everyMs));
  const timer = setInterval(() => {
    const now = read();
    if (!now) return;
    samples.push(now);
    if (samples.length > look + 1) samples.shift();
    if (samples.length < look + 1 || runningExtra.size >= extra || !canStart()) return;
    const first = samples[0];
    const busy = (now.busy - first.busy) / Math.max(1, now.total - first.total);
    if (busy >= belowShare) return;
    const p = start(busy);
    if (!p) return;
    const tracked = p
      .catch((err) => process.stderr.write(`a file started while the cores idled did not run: ${err.message}\n`))
      .finally(() => runningExtra.delete(tracked));
    runningExtra.add(tracked);
    samples.length = 0; // the next look starts with this file running
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([...runningExtra]);
    },
  };
}

module.exports = { idleLane, machineCpu };
