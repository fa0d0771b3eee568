'use strict';
// Turns a scenario's workload and load shape into an artillery script and
// runs artillery on it. The script's virtual users call the chain's processor
// (processors/<chain>.js), which sends each request through the chain's
// client library and records it.

const fs = require('node:fs');
const path = require('node:path');
const { spawnInGroup } = require('../platform/cgroup');
const yaml = require('js-yaml');
const { WORKLOADS_DIR } = require('../util/paths');
const { passCommand, leanRunnerOf } = require('./pass-command');
const { isReplay, replayMix } = require('./replay');
const generators = require('./generators');

/** Process groups of the artillery passes running now: teardown and exit kill them, whatever the path. */
const running = new Set();

/** Kills every artillery process group still running (synchronous: usable on exit). */
function killGenerators() {
  for (const pgid of running) {
    try {
      process.kill(-pgid, 'SIGKILL'); // the whole process group: artillery and its workers
    } catch {
      // already gone
    }
    running.delete(pgid);
  }
}
process.on('exit', killGenerators);

/** Seconds allowed for artillery to start its workers before the load is due. */
const STARTUP_S = 6;
/** The same for chainperf's lean runner (about 0.4 s to its first request: npm run bench:startup). */
const LEAN_STARTUP_S = 2;

/** The start-up allowance of scenario s's generator passes: the lean runner's, or artillery's. */
const startupSOf = (s) => (s && s.GENERATOR === 'lean' && leanRunnerOf(s) === 'chainperf' ? LEAN_STARTUP_S : STARTUP_S);

/**
 * The load goes on this long after a measured window's end, so that the node's CPU read at the end edge (a
 * little late on a busy machine) sees the load up to the read, and the requests completed up to that
 * instant are counted with it.
 */
const TAIL_MS = 1000;

/** The weighted mix {method: weight} a WORKLOAD names. */
function loadMix(workload) {
  if (workload.startsWith('method:')) return { [workload.slice(7)]: 1 };
  if (isReplay(workload)) return replayMix(workload.slice('replay:'.length)); // the capture's calls by method
  const file = path.join(WORKLOADS_DIR, `${workload}.yml`);
  const doc = yaml.load(fs.readFileSync(file, 'utf8'));
  const mix = doc && doc.mix;
  if (!mix || typeof mix !== 'object') throw new Error(`${file}: expected a "mix:" table of method: weight`);
  for (const [m, w] of Object.entries(mix)) {
    if (typeof w !== 'number' || !(w > 0)) throw new Error(`${file}: weight of ${m} must be a positive number`);
  }
  return mix;
}

/**
 * artillery requires a target; the script holds this word instead of the
 * node's URL (which may carry credentials or keys): the generator reads the
 * URL from its spec file (CHAINPERF_GENERATOR_SPEC) in the run's work folder.
 */
const TARGET = 'from-generator-spec';

/** The artillery script (as an object) for scenario s: the generator GENERATOR names writes it. */
function buildScript(s, { processor, totalS }) {
  /** @type {import('../contracts').Generator} */
  const generator = generators[s.GENERATOR] || generators.ethers;
  return generator.script(s, {
    target: TARGET,
    processor,
    totalS,
    replay: isReplay(s.WORKLOAD),
  });
}

/** The files of the artillery pass `name` in folder dir: its spec, script, raw output and log. */
function artilleryFiles(dir, name) {
  return {
    specFile: path.join(dir, `${name}.generator.json`),
    scriptFile: path.join(dir, `${name}.artillery.yml`),
    rawFile: path.join(dir, `${name}.artillery.json`),
    logFile: path.join(dir, `${name}.artillery.log`),
  };
}

/** Writes a pass's spec and script (processor: the chain's processor's path where artillery runs); its files. */
function writePassFiles({ scenario, spec, dir, name, processor }) {
  const totalS = Math.ceil(((spec.stop_at || spec.end_at) - Date.now()) / 1000) + 1;
  const files = artilleryFiles(dir, name);
  fs.writeFileSync(files.specFile, JSON.stringify(spec, null, 2), { mode: 0o600 });
  fs.writeFileSync(files.scriptFile, yaml.dump(buildScript(scenario, { processor, totalS })));
  return files;
}

/**
 * Runs one artillery pass.
 * @param {object} o
 * @param {object} o.scenario resolved scenario
 * @param {object} o.spec what the processor reads: rpc_url, pool_file, mix, start_at, end_at, timeout_ms, seed,
 * samples_dir
 * @param {string} o.dir folder for the script, the raw output and artillery's log
 * @param {string} o.name file name stem (warmup, measure)
 * @param {string} o.processor path of the chain's processor
 * @param {object|null} o.group cgroup for the generator (pins it and counts its CPU)
 * @param {AbortSignal} o.signal stops artillery when aborted
 * @returns {Promise<{code:number, rawFile:string, logFile:string}>}
 */
function runArtillery({ scenario, spec, dir, name, processor, group, signal }) {
  const { specFile, scriptFile, rawFile, logFile } = writePassFiles({ scenario, spec, dir, name, processor });
  const { argv, env } = passCommand(scriptFile, rawFile, specFile);
  const logFd = fs.openSync(logFile, 'a');
  const child = spawnInGroup(group, argv, { env, stdio: ['ignore', logFd, logFd], detached: true });
  fs.closeSync(logFd);
  if (child.pid) running.add(child.pid);
  const kill = () => {
    try {
      process.kill(-child.pid, 'SIGKILL'); // the whole process group: artillery and its workers
    } catch {
      // already gone
    }
    running.delete(child.pid);
  };
  if (signal) signal.addEventListener('abort', kill, { once: true });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, sig) => {
      kill(); // workers the main process left behind go with it
      if (signal) signal.removeEventListener('abort', kill);
      if (signal && signal.aborted) return reject(signal.reason);
      resolve({ code: code === null ? 128 : code, signal: sig, rawFile, logFile, specFile, scriptFile });
    });
  });
}

module.exports = {
  loadMix,
  buildScript,
  artilleryFiles,
  writePassFiles,
  runArtillery,
  killGenerators,
  STARTUP_S,
  LEAN_STARTUP_S,
  startupSOf,
  TAIL_MS,
  TARGET,
};
