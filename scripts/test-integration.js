#!/usr/bin/env node
'use strict';
// npm run test:integration: the integration test files, several at a time
// (TEST_JOBS, default 3: most of a test's time is a node syncing, blocks being
// mined, a window running; two cores serve three such tests. Four were faster
// but left tests that time a window on a saturated machine:
// docs/results.md#ci). Each file runs in its own mocha process; the longest
// files (by the last timings recorded in test/integration/timings.json) start
// first, so the run ends with short ones. While the cores idle, one more file
// (the shortest left) starts beside them (TEST_EXTRA_JOBS, default 1;
// scripts/lib/idle-lane.js).
// Each file runs in a cgroup of its own where it can, which counts its CPU on
// this host, and the unit tests weigh as ten processes on cgroup v1's cpu
// controller (file-cgroup.js; TEST_CGROUPS=no: neither).
// Each file's output is printed whole when it ends, then the slowest files,
// each failed file's failures again and the totals; the exit status is
// mocha's worst.
//
// `npm test` passes --with-lint-and-unit: lint and the unit tests then run
// beside the pool from its start (they take about a minute of CPU, when the
// integration tests are mostly starting nodes), rather than a minute before it.
//
// swarm.test.js needs the engine in a swarm: the runner makes it before the
// first file and leaves it after the last (test/integration/test-swarm.js:
// leaving while another file's compose run is up would break that run's DNS).
//
//   TEST_JOBS=3 TEST_EXTRA_JOBS=1 npm run test:integration [-- file ...]
//   UPDATE_TIMINGS=1 npm run test:integration    # writes the timings of this run

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { holdSwarm } = require('../test/integration/test-swarm');
const { taskGroups } = require('../test/integration/file-cgroup');
const { spawnInGroup } = require('../src/platform/cgroup');
const { idleLane } = require('./lib/idle-lane');

const ROOT = path.resolve(__dirname, '..');
const DIR = path.join(ROOT, 'test', 'integration');
const TIMINGS = path.join(DIR, 'timings.json');
const JOBS = Math.max(1, Number(process.env.TEST_JOBS || 3));
// files started beside the JOBS while the cores idle (scripts/lib/idle-lane.js); 0: none
const EXTRA = Math.max(0, Number(process.env.TEST_EXTRA_JOBS ?? 1));
const MOCHA = path.join(ROOT, 'node_modules', '.bin', 'mocha');
const REPORTER = path.join(DIR, 'timing-reporter.js');

const WITH_LINT_AND_UNIT = '--with-lint-and-unit';
const UNIT_SHARES = 10 * 1024; // the unit tests' weight on cgroup v1's cpu controller (lintAndUnit)
const args = process.argv.slice(2);
const withLintAndUnit = args.includes(WITH_LINT_AND_UNIT);
const given = args.filter((a) => a !== WITH_LINT_AND_UNIT);
const known = fs.existsSync(TIMINGS) ? JSON.parse(fs.readFileSync(TIMINGS, 'utf8')) : {};
const files = (given.length ? given : fs.readdirSync(DIR))
  .map((f) => path.basename(f))
  .filter((f) => f.endsWith('.test.js'))
  .sort((a, b) => (known[b] || 60) - (known[a] || 60) || a.localeCompare(b));

const running = new Set(); // the files' mocha processes (and lint's, the unit tests') now running
const groups = taskGroups(); // a cgroup per task, counting its CPU (file-cgroup.js)

/**
 * Runs a command, its output kept; resolves {file: name, code, seconds, cpu_s, out}: cpu_s the CPU its processes on
 * this host used (null without cgroups), and what it left running (killed) said at its output's end.
 */
function runTask(name, cmd, cmdArgs, { shares = 0 } = {}) {
  const t0 = Date.now();
  const group = groups && groups.group(name, { shares });
  return new Promise((resolve) => {
    const child = spawnInGroup(group, [cmd, ...cmdArgs], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.on('close', () => running.delete(child));
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const cpuS = group ? group.cpuSeconds() : null;
      const left = group ? group.remove() : [];
      if (left.length) out += `\n${name} left processes running once it ended (killed now):\n  ${left.join('\n  ')}\n`;
      resolve({ file: name, code: code === null ? 1 : code, seconds: (Date.now() - t0) / 1000, cpu_s: cpuS, out });
    });
  });
}

/** Runs one integration test file in its own mocha process. */
function runFile(file) {
  // --exit: a test whose `before` failed may leave a timer of its own (a CPU sampler) behind; the file is over
  const mochaArgs = ['--exit', '--timeout', '900000', '--slow', '60000', '--reporter', REPORTER, path.join(DIR, file)];
  return runTask(file, MOCHA, mochaArgs);
}

/** `npm run lint`, then `npm run test:unit`, beside the pool (not in one of its slots). */
async function lintAndUnit() {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const lint = await runTask('lint', npm, ['run', '--silent', 'lint']);
  if (process.exitCode) return [lint]; // stopped (Ctrl-C)
  // --exit: a handle a unit test leaves open (a socket nobody reads; one held a CI run's mocha for good) must not hold
  // the job until its time limit
  // UNIT_SHARES: the unit tests time things in milliseconds (an open loop's pace, a window's slices) and use about a
  // quarter of a core; beside the pool, two CI runs' paced loops got a tenth of their rate. Weighed as ten busy
  // processes, they get the CPU as they ask for it, which costs the others little.
  const unit = await runTask('unit tests', npm, ['run', '--silent', 'test:unit', '--', '--exit'], {
    shares: UNIT_SHARES,
  });
  return [lint, unit];
}

/** mocha's own closing counts in a file's output. */
function counts(out) {
  const n = (word) => Number((new RegExp(`^ +(\\d+) ${word}`, 'm').exec(out) || [0, 0])[1]);
  return { passing: n('passing'), failing: n('failing'), pending: n('pending') };
}

/** mocha's account of a file's failures (from its "N failing" on, at most 6,000 characters), or its output's end. */
function failureSection(out) {
  const at = out.search(/^ +\d+ failing/m);
  const text = at >= 0 ? out.slice(at) : out.slice(-2000);
  return text.length > 6000 ? `${text.slice(0, 6000)}\n[... cut]` : text;
}

/** The swarm swarm.test.js runs on, held for the whole run when it is among the files; {leave()}. */
async function holdSwarmFor(names) {
  const none = { leave: () => {} };
  if (!names.includes('swarm.test.js')) return none;
  try {
    const held = await holdSwarm();
    if (held.made)
      process.stdout.write('made a swarm of this engine for swarm.test.js; it is left after the last file\n');
    return held;
  } catch (err) {
    // swarm.test.js then fails with its own account of it
    process.stdout.write(`could not make a swarm for swarm.test.js: ${err.message}\n`);
    return none;
  }
}

/** The ten slowest files, and where there are cgroups the ten that used the most CPU. */
function printSlowest(done, wall) {
  const serial = done.reduce((n, r) => n + r.seconds, 0);
  process.stdout.write(
    `\n  Slowest test files (${(serial / 60).toFixed(1)} min of tests in ${(wall / 60).toFixed(1)} min, ${JOBS} at a time${EXTRA ? ` and up to ${EXTRA} more while the cores idled` : ''}):\n`,
  );
  for (const r of [...done].sort((a, b) => b.seconds - a.seconds).slice(0, 10))
    process.stdout.write(`    ${r.seconds.toFixed(0).padStart(5)} s  ${r.file}\n`);
  const counted = done.filter((r) => r.cpu_s !== null);
  if (!counted.length) return;
  // the suite is bound by CPU: where it goes (each file's host processes; its containers are in Docker's groups)
  const all = counted.reduce((n, r) => n + r.cpu_s, 0);
  process.stdout.write(
    `\n  Most CPU (${(all / 60).toFixed(1)} CPU-min on this host's ${os.cpus().length} cores, containers not counted):\n`,
  );
  for (const r of [...counted].sort((a, b) => b.cpu_s - a.cpu_s).slice(0, 10))
    process.stdout.write(`    ${r.cpu_s.toFixed(0).padStart(5)} CPU-s  ${r.file}\n`);
}

/** With --with-lint-and-unit, lint and the unit tests beside the pool: {promise, over()}. */
function startBeside(report) {
  if (!withLintAndUnit) return { promise: Promise.resolve(), over: () => true };
  let over = false;
  const promise = lintAndUnit().then((rs) => {
    rs.forEach(report);
    over = true;
  });
  return { promise, over: () => over };
}

/** Up to EXTRA more files, each the shortest left, started while the cores idle (lint and the unit tests over). */
function extraLane(queue, report, besideDone) {
  return idleLane({
    extra: EXTRA,
    canStart: () => besideDone() && queue.length > 0,
    start: (busy) => {
      const file = queue.pop();
      if (!file) return null;
      process.stdout.write(
        `\n  ${file}: started beside the ${JOBS} running, the cores ${Math.round(busy * 100)}% busy over the last 15 s\n`,
      );
      return runFile(file).then(report);
    },
  });
}

async function main() {
  const t0 = Date.now();
  process.stdout.write(
    `${withLintAndUnit ? 'lint and unit tests, beside them ' : ''}integration tests: ${files.length} files, ${JOBS} at a time${EXTRA ? ` (and up to ${EXTRA} more while the cores idle)` : ''}\n`,
  );
  const queue = [...files];
  // Ctrl-C (which the files' processes get too) or SIGTERM (passed on to them): no further file starts, and the
  // runner ends as usual once the running ones have torn down, the swarm it made left then, not under their runs
  const stop = (sig) => {
    queue.length = 0;
    if (sig === 'SIGTERM') for (const child of running) child.kill('SIGTERM');
    process.exitCode = sig === 'SIGINT' ? 130 : 143;
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
  const done = [];
  const report = (r) => {
    done.push(r);
    const c = counts(r.out);
    const cpu = r.cpu_s === null ? '' : ` (${r.cpu_s.toFixed(0)} CPU-s on this host)`;
    process.stdout.write(
      `\n===== ${r.file}: ${r.seconds.toFixed(0)} s${cpu}, ${c.passing} passing, ${c.failing} failing, ${c.pending} pending${r.code ? `, exit status ${r.code}` : ''}\n${r.out}`,
    );
  };
  const worker = async () => {
    while (queue.length) report(await runFile(queue.shift()));
  };
  const swarm = await holdSwarmFor(files);
  const beside = startBeside(report);
  const lane = extraLane(queue, report, beside.over);
  await Promise.all([beside.promise, ...Array.from({ length: Math.min(JOBS, files.length) }, worker)]);
  await lane.stop();
  try {
    swarm.leave();
  } catch (err) {
    process.stdout.write(`could not leave the swarm made for swarm.test.js: ${err.message}\n`);
  }
  const total = done.reduce(
    (a, r) => {
      const c = counts(r.out);
      return { passing: a.passing + c.passing, failing: a.failing + c.failing, pending: a.pending + c.pending };
    },
    { passing: 0, failing: 0, pending: 0 },
  );
  printSlowest(done, (Date.now() - t0) / 1000);
  if (groups) groups.removeAll();
  const failed = done.filter((r) => r.code !== 0).map((r) => r.file);
  // the failures again, last: a long log read from its end (or cut to its end) still shows which tests failed and why
  for (const r of done.filter((x) => x.code !== 0))
    process.stdout.write(`\n===== failed: ${r.file}\n${failureSection(r.out)}\n`);
  process.stdout.write(
    `\n${withLintAndUnit ? 'lint, unit and integration tests' : 'integration tests'}: ${total.passing} passed, ${total.failing} failed, ${total.pending} pending${failed.length ? `; failed: ${failed.join(', ')}` : ''}\n`,
  );
  if (process.env.UPDATE_TIMINGS) {
    const ran = done.filter((r) => r.file.endsWith('.test.js'));
    const timings = { ...known, ...Object.fromEntries(ran.map((r) => [r.file, Math.round(r.seconds)])) };
    fs.writeFileSync(TIMINGS, `${JSON.stringify(timings, null, 2)}\n`);
  }
  process.exit(process.exitCode || (failed.length ? 1 : 0));
}

main();
