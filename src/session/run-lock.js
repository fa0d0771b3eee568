// @ts-check
'use strict';
// Every run (and A/B session) holds a lock file while it lives: its process
// (PID and start time), its report and work folders, what it started so far
// (the same leftovers a forced exit prints, with what it takes to remove
// each), and its record up to now. A later run, or ./run.sh clean, that finds
// a lock whose process is gone knows the run was killed (SIGKILL, the OOM
// killer, a CI timeout) and reclaims what it left (src/session/reclaim.js).
// Locks live in CHAINPERF_RUNS_DIR, by default the runs/ folder of the cache.

const fs = require('node:fs');
const path = require('node:path');
const { cacheDir } = require('../install/cache');
const { processId, isRunning } = require('../util/proc');

/** How often a live run rewrites its lock with its record and its leftovers. */
const CHECKPOINT_MS = 2000;

const runsDir = () => process.env.CHAINPERF_RUNS_DIR || cacheDir('runs');

/** Writes JSON so that a reader never sees half a file. */
function writeAtomic(file, doc) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(doc)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * Takes the lock of a new run and keeps it up to date until release().
 * @param {object} o
 * @param {string} o.runId
 * @param {'run'|'ab'} o.kind
 * @param {string} o.reportDir
 * @param {string[]} o.workDirs
 * @param {() => object[]} o.leftovers what the run would leave if it stopped now ({what, command, ...how to remove})
 * @param {() => object} o.record the run's record so far (run.json or ab.json as it stands)
 */
function holdRunLock({ runId, kind, reportDir, workDirs, leftovers, record }) {
  fs.mkdirSync(runsDir(), { recursive: true });
  const file = path.join(runsDir(), `${runId}.json`);
  const base = { run_id: runId, kind, process: processId(), report_dir: reportDir, work_dirs: workDirs };
  let last = '';
  const checkpoint = () => {
    let doc;
    try {
      doc = { ...base, checkpoint_at: new Date().toISOString(), leftovers: leftovers(), record: record() };
    } catch {
      return; // a record caught mid-change: the next checkpoint takes it
    }
    const text = JSON.stringify({ ...doc, checkpoint_at: null });
    if (text === last) return;
    last = text;
    try {
      writeAtomic(file, doc);
    } catch {
      // a full disk must not end the run; the lock keeps its last state
    }
  };
  checkpoint();
  const timer = setInterval(checkpoint, CHECKPOINT_MS);
  timer.unref();
  return {
    file,
    checkpoint,
    release() {
      clearInterval(timer);
      fs.rmSync(file, { force: true });
    },
  };
}

/**
 * Every lock in the runs folder, read, with whether its process still runs.
 * @returns {{file: string, lock: any, alive: boolean}[]}
 */
function listLocks() {
  const dir = runsDir();
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const file = path.join(dir, name);
    let lock;
    try {
      lock = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      continue; // being renamed into place, or not ours
    }
    out.push({ file, lock, alive: Boolean(lock.process && isRunning(lock.process)) });
  }
  return out;
}

module.exports = { holdRunLock, listLocks, runsDir, CHECKPOINT_MS };
