// @ts-check
'use strict';
// One process at a time for each thing built or installed into the cache (a
// client binary, an npm package, a Debian package, an image, a STATE): two
// runs that need the same one wait for each other instead of writing into the
// same folder at once (two npm installs into one folder corrupted it). A lock
// is a file created exclusively, naming its holder's process; a holder that is
// gone (killed mid-install) left its work half done, which the next holder is
// told about so that it redoes it.

const fs = require('node:fs');
const path = require('node:path');
const { cacheDir } = require('./cache');
const { processId, isRunning } = require('../util/proc');
const { sleep } = require('../util/time');

const POLL_MS = 500;
const SAY_EVERY_MS = 30000;

/** @param {string} name */
const lockFile = (name) => cacheDir('locks', `${name.replace(/[^A-Za-z0-9_.-]+/g, '_')}.lock`);

function readHolder(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null; // being written, or just removed
  }
}

/** Creates the lock file, or returns false when another process holds it. */
function tryTake(file, what) {
  try {
    const fd = fs.openSync(file, 'wx');
    fs.writeSync(fd, JSON.stringify({ process: processId(), what, since: new Date().toISOString() }));
    fs.closeSync(fd);
    return true;
  } catch (err) {
    if (err.code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Runs fn holding the named lock; waits, saying so, while another process holds it.
 * @template T
 * @param {string} name what is built or installed, e.g. "geth-1.16.7" (one lock per name)
 * @param {(o: {abandoned: boolean}) => Promise<T>} fn abandoned: a holder before this one died holding the lock
 * @param {{log: (line: string) => void, signal?: AbortSignal, what?: string}} o
 * @returns {Promise<T>}
 */
async function withCacheLock(name, fn, { log, signal, what = name }) {
  const file = lockFile(name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let abandoned = false;
  let said = 0;
  while (!tryTake(file, what)) {
    const holder = readHolder(file);
    if (holder && holder.process && !isRunning(holder.process)) {
      log(`${what}: an earlier run (PID ${holder.process.pid}) died while it held this; its half-done work is redone`);
      fs.rmSync(file, { force: true });
      abandoned = true;
      continue;
    }
    if (Date.now() - said >= SAY_EVERY_MS) {
      const who = holder && holder.process ? `PID ${holder.process.pid}, since ${holder.since}` : 'another process';
      log(`${what}: waiting for another chainperf run (${who}) that is doing it now`);
      said = Date.now();
    }
    await sleep(POLL_MS, signal);
  }
  try {
    return await fn({ abandoned });
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * A folder filled by an install: complete once its marker exists. A folder without it was left by an install that
 * did not finish, and is removed so that the install starts over.
 */
const MARKER = '.chainperf-complete';
const isComplete = (dir) => fs.existsSync(path.join(dir, MARKER));
function markComplete(dir) {
  fs.writeFileSync(path.join(dir, MARKER), `${new Date().toISOString()}\n`);
}

/**
 * The install of dir under its lock, skipped when dir is complete, redone from an empty folder when it is not.
 * @template T
 * @param {string} name lock name
 * @param {string} dir the folder the install fills
 * @param {() => Promise<T>} install fills dir
 * @param {{log: (line: string) => void, signal?: AbortSignal, what?: string}} o
 */
async function installOnce(name, dir, install, o) {
  if (isComplete(dir)) return null;
  return withCacheLock(
    name,
    async () => {
      if (isComplete(dir)) return null; // another run finished it while this one waited
      if (fs.existsSync(dir)) {
        o.log(`${o.what || name}: ${dir} holds an install that did not finish: starting it over`);
        fs.rmSync(dir, { recursive: true, force: true });
      }
      const r = await install();
      markComplete(dir);
      return r;
    },
    o,
  );
}

module.exports = { withCacheLock, installOnce, isComplete, markComplete, lockFile };
