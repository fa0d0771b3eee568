'use strict';
// inferno (crates.io): the Rust port of Brendan Gregg's FlameGraph tools.
// chainperf uses three of its programs: inferno-collapse-perf (perf script
// output to folded stacks), inferno-flamegraph (folded stacks to an SVG that
// opens in a browser and in git web views) and inferno-diff-folded (two
// folded profiles to a differential one). Built with cargo into the cache on
// first use, like geth from the Go module proxy.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('./cache');
const { runWithProgress } = require('./progress');
const { withCacheLock } = require('./lock');
const { onPath } = require('./debian');

const INFERNO_VERSION = '0.12.8';
const PROGRAMS = ['inferno-flamegraph', 'inferno-collapse-perf', 'inferno-diff-folded'];

/** The folder holding the programs: INFERNO_DIR, or the cache's. */
function infernoDir() {
  return process.env.INFERNO_DIR || cacheDir('inferno', INFERNO_VERSION, 'bin');
}

/** Paths of the programs when all are there, else null. */
function infernoPrograms() {
  const dir = infernoDir();
  const paths = Object.fromEntries(PROGRAMS.map((p) => [p, path.join(dir, p)]));
  return Object.values(paths).every((p) => fs.existsSync(p)) ? paths : null;
}

/** The programs, built with `cargo install` into the cache when missing. */
async function ensureInferno(log) {
  const found = infernoPrograms();
  if (found) return found;
  if (process.env.INFERNO_DIR) throw new Error(`INFERNO_DIR: ${process.env.INFERNO_DIR} lacks ${PROGRAMS.join(', ')}`);
  if (!onPath('cargo'))
    throw new Error(
      `inferno ${INFERNO_VERSION} (flame graphs) is not built yet and cargo is not installed: install Rust (cargo), or set INFERNO_DIR to a folder with ${PROGRAMS.join(', ')}`,
    );
  const root = path.dirname(infernoDir());
  await withCacheLock(
    `inferno-${INFERNO_VERSION}`,
    async () => {
      if (infernoPrograms()) return; // built by another run while this one waited
      fs.mkdirSync(root, { recursive: true });
      await runWithProgress('cargo', ['install', `inferno@${INFERNO_VERSION}`, '--locked', '--root', root], {
        label: `building inferno ${INFERNO_VERSION} into ${root}`,
        step: `inferno-${INFERNO_VERSION}`,
        usual: 180,
        note: 'from crates.io, once',
        log,
      });
    },
    { log, what: `building inferno ${INFERNO_VERSION}` },
  );
  const built = infernoPrograms();
  if (!built) throw new Error(`cargo install finished but ${PROGRAMS.join(', ')} are not all in ${infernoDir()}`);
  return built;
}

/** Runs one program with input on stdin; returns its stdout. */
function runInferno(programs, name, args, input) {
  return execFileSync(programs[name], args, {
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

module.exports = { ensureInferno, infernoPrograms, runInferno, INFERNO_VERSION };
