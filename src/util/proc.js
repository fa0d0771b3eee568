// @ts-check
'use strict';
// Processes by identity: a PID alone may be reused by another program after
// the first one is gone, so a process is recorded as its PID and its start
// time (field 22 of /proc/PID/stat, in clock ticks since boot) and is the same
// process only while both match.

const fs = require('node:fs');

/** @typedef {{pid: number, start: string}} ProcessId */

/**
 * The start time of pid, or null when there is no such process.
 * @param {number} pid
 * @returns {string|null}
 */
function processStart(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return null;
  }
}

/**
 * This process or another, as a ProcessId.
 * @param {number} [pid]
 * @returns {ProcessId}
 */
function processId(pid = process.pid) {
  return { pid, start: processStart(pid) || '' };
}

/**
 * Whether the process a ProcessId names is still running (a zombie counts as gone).
 * @param {ProcessId} id
 */
function isRunning(id) {
  const start = processStart(id.pid);
  if (start === null || start !== id.start) return false;
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${id.pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Sends SIGKILL to the process a ProcessId names, if it is still that process.
 * @param {ProcessId} id
 * @returns {boolean} whether a signal was sent
 */
function killIfSame(id) {
  if (!isRunning(id)) return false;
  try {
    process.kill(id.pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * Processes whose command line holds text (a folder only they use), as ProcessIds.
 * @param {string} text
 * @returns {ProcessId[]}
 */
function processesMentioning(text) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(text)) out.push(processId(Number(d)));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

module.exports = { processStart, processId, isRunning, killIfSame, processesMentioning };
