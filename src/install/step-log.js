'use strict';
// The files behind a quiet install step (progress.js): its whole output in a
// log of its own in the cache's logs/ folder (~/.cache/chainperf/logs/<step>-
// <date>-<time>-<ms>-<pid>.log, the newest five of a step kept), the time it last
// took there (<step>.seconds: the "usual" of its next run), and a copy of the
// log in the run's report folder (installs/) when a run is logging into one.

const fs = require('node:fs');
const path = require('node:path');
const { cacheDir } = require('./cache');
const { logFileNow } = require('../util/log');

const KEEP = 5;

/** A step's name in file names: lower case letters, digits, dots and dashes. */
function stepName(s) {
  return (
    String(s)
      .toLowerCase()
      .replace(/[^a-z0-9.]+/g, '-')
      .replace(/^[-.]+|-+$/g, '')
      .slice(0, 60) || 'step'
  );
}

const logsDir = () => cacheDir('logs');

/** "1 min 32 s", "45 s". */
function fmtDuration(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
}

/** The seconds the step took the last time it finished on this machine, or null. */
function lastSeconds(step) {
  try {
    const v = Number(fs.readFileSync(path.join(logsDir(), `${step}.seconds`), 'utf8').trim());
    return Number.isFinite(v) && v >= 0 ? v : null;
  } catch {
    return null;
  }
}

/** Keeps the seconds a step took, for its next run's usual (written whole: two runs at once never mix it). */
function recordSeconds(step, seconds) {
  const file = path.join(logsDir(), `${step}.seconds`);
  try {
    fs.writeFileSync(`${file}.${process.pid}`, `${Math.round(seconds)}\n`);
    fs.renameSync(`${file}.${process.pid}`, file);
  } catch {
    // only the next run's estimate is lost
  }
}

/** The step's usual time and where it comes from: its last run here, else the typical time given, else null. */
function usualOf(step, typical) {
  const last = lastSeconds(step);
  if (last !== null) return { seconds: last, from: 'its last run on this machine' };
  if (typical) return { seconds: typical, from: 'typical on 2 cores' };
  return null;
}

/** 20261126-101500-123: the date, time and millisecond (UTC) a log is started; its name's order. */
const stamp = (d) => d.toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '-').slice(0, 19);

/**
 * Opens a new log file for the step (older ones beyond the newest five removed). Returns null when the cache's
 * logs/ folder cannot be written; write(text) never throws (a full disk stops the file, not the step).
 * @returns {{file: string, write: (text: string) => void, close: () => void} | null}
 */
function openStepLog(step, header) {
  let fd;
  let file;
  try {
    fs.mkdirSync(logsDir(), { recursive: true });
    file = path.join(logsDir(), `${step}-${stamp(new Date())}-${process.pid}.log`);
    fd = fs.openSync(file, 'a');
    fs.writeSync(fd, header);
  } catch {
    return null;
  }
  pruneStepLogs(step);
  return {
    file,
    write(text) {
      if (fd === null) return;
      try {
        fs.writeSync(fd, text);
      } catch {
        fs.closeSync(fd);
        fd = null;
      }
    },
    close() {
      if (fd !== null) fs.closeSync(fd);
      fd = null;
    },
  };
}

/** Removes a step's logs beyond the newest KEEP (their names sort by date). */
function pruneStepLogs(step) {
  const mine = new RegExp(`^${step.replace(/\./g, '\\.')}-\\d{8}-\\d{6}-\\d{3}-\\d+\\.log$`);
  try {
    const old = fs
      .readdirSync(logsDir())
      .filter((f) => mine.test(f))
      .sort()
      .slice(0, -KEEP);
    for (const f of old) fs.rmSync(path.join(logsDir(), f), { force: true });
  } catch {
    // a log more than needed stays
  }
}

/** A copy of the step's log in the report folder of the run logging now (installs/), if any; its path or null. */
function keepInReport(file) {
  const runLog = logFileNow();
  if (!runLog || !file) return null;
  const dest = path.join(path.dirname(runLog), 'installs', path.basename(file));
  try {
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(file, dest);
    return dest;
  } catch {
    return null;
  }
}

module.exports = { stepName, fmtDuration, usualOf, recordSeconds, openStepLog, keepInReport, logsDir, KEEP };
