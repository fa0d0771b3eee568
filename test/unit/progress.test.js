'use strict';
// Install steps run quietly: a few lines on the log (its start with the usual
// time and the log file, a heartbeat, its end), the whole output in a log file
// in the cache, shown (its tail) only when the step fails. The same for the
// npm install scripts/ensure-npm-deps.sh does on first use (bash).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { runWithProgress } = require('../../src/install/progress');
const { logTo } = require('../../src/util/log');
const { ROOT, tmpDir } = require('../helpers');

/** sh -c text printing lines 1..n ("go: downloading example.com/m<i> v1.0.<i>"), pausing pause s after each. */
const printLines = (n, pause = 0) =>
  `i=1; while [ $i -le ${n} ]; do echo "go: downloading example.com/m$i v1.0.$i"; ${pause ? `sleep ${pause}; ` : ''}i=$((i + 1)); done`;

/** The log file a start line names. */
function logFileOf(line) {
  const m = / its output goes to (\S+\.log)$/.exec(line);
  assert.ok(m, `a start line naming its log file: ${line}`);
  return m[1];
}

describe('install steps, quietly (runWithProgress)', () => {
  let saved;
  let cache;
  let lines;
  const log = (l) => lines.push(l);
  beforeEach(() => {
    saved = process.env.CHAINPERF_CACHE;
    cache = tmpDir('chainperf-cache-');
    process.env.CHAINPERF_CACHE = cache;
    lines = [];
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.CHAINPERF_CACHE;
    else process.env.CHAINPERF_CACHE = saved;
    logTo(null);
  });

  it('a step printing 100 lines logs its start and its end only; its log file in the cache has all 100', async () => {
    const cmd = `${printLines(100)}; echo "a warning on stderr" >&2`;
    const out = await runWithProgress('sh', ['-c', cmd], {
      label: 'building thing 1.0 into /somewhere',
      usual: 90,
      note: 'from the Go module proxy, once',
      log,
    });
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(
      lines[0],
      /^building thing 1\.0 into \/somewhere \(from the Go module proxy, once\): usually about 1 min 30 s \(typical on 2 cores\); its output goes to /,
    );
    const file = logFileOf(lines[0]);
    assert.equal(path.dirname(file), path.join(cache, 'logs'));
    assert.match(
      path.basename(file),
      /^building-thing-1\.0-\d{8}-\d{6}-\d{3}-\d+\.log$/,
      'named by the label up to " into "',
    );
    assert.match(lines[1], /^building thing 1\.0 into \/somewhere: done in \d+ s$/);
    const text = fs.readFileSync(file, 'utf8');
    for (let i = 1; i <= 100; i++)
      assert.ok(text.includes(`go: downloading example.com/m${i} v1.0.${i}\n`), `line ${i}`);
    assert.ok(text.includes('a warning on stderr\n'));
    assert.match(text, /^# building thing 1\.0 into \/somewhere\n# sh -c /, 'the log says what ran');
    assert.match(text, /\n# done after \d+ s\n$/);
    assert.equal(out.trim().split('\n').length, 100, 'its stdout is resolved as before');
  });

  it('the usual time: the one the step last took on this machine, else the typical one given, else none', async () => {
    await runWithProgress('true', [], { label: 'quick one', step: 'quick', usual: 600, log });
    assert.match(lines[0], /: usually about 10 min \(typical on 2 cores\); /);
    assert.equal(fs.readFileSync(path.join(cache, 'logs', 'quick.seconds'), 'utf8'), '0\n');
    lines = [];
    await runWithProgress('true', [], { label: 'quick one', step: 'quick', usual: 600, log });
    assert.match(lines[0], /^quick one: usually about 0 s \(its last run on this machine\); /);
    lines = [];
    await runWithProgress('true', [], { label: 'never seen', log });
    assert.match(lines[0], /^never seen: no usual time known yet; its output goes to /);
  });

  it('a heartbeat while it runs: how long so far, of the usual, and its last line of output; no line per output', async () => {
    await runWithProgress('sh', ['-c', printLines(8, 0.15)], { label: 'slow one', usual: 90, beatMs: 300, log });
    const beats = lines.slice(1, -1);
    assert.ok(beats.length >= 2, lines.join('\n'));
    for (const b of beats)
      assert.match(
        b,
        /^slow one: \d+ s so far, of about 1 min 30 s; last output: go: downloading example\.com\/m\d v1\.0\.\d$/,
      );
    assert.equal(lines.length, beats.length + 2, 'the start, the beats, the end');
    // once past its usual time (0 s, its last time), the beat says so
    await runWithProgress('true', [], { label: 'slower', log });
    lines = [];
    await runWithProgress('sh', ['-c', 'echo waiting; sleep 1.2'], { label: 'slower', beatMs: 400, log });
    assert.ok(
      lines.some((l) => /^slower: 1 s so far, longer than the usual 0 s; last output: waiting$/.test(l)),
      lines.join('\n'),
    );
  });

  it('a failing step: the error names its log file and holds its last 30 lines, or all of them when few', async () => {
    const fail = (cmd) =>
      runWithProgress('sh', ['-c', cmd], { label: 'building other', step: 'other', log }).then(
        () => assert.fail('resolved'),
        (err) => err.message,
      );
    const long = await fail(`${printLines(100)}; echo "go: module lookup disabled" >&2; exit 3`);
    const file = logFileOf(lines[0]);
    const [head, ...shown] = long.split('\n');
    assert.equal(
      head,
      `building other: sh exited with status 3; its whole output is in ${file}; its last 30 of 101 lines:`,
    );
    assert.equal(shown.length, 30);
    assert.equal(shown[0], 'go: downloading example.com/m72 v1.0.72');
    assert.equal(shown.at(-1), 'go: module lookup disabled');
    assert.match(fs.readFileSync(file, 'utf8'), /m1 v1\.0\.1\n[\s\S]*\n# exited with status 3 after \d+ s\n$/);
    assert.equal(lines.length, 1, 'nothing but the start line on the log: the error carries the tail');
    assert.ok(
      !fs.existsSync(path.join(cache, 'logs', 'other.seconds')),
      'a failed step leaves the usual time as it was',
    );
    lines = [];
    const short = await fail(`${printLines(3)}; exit 1`);
    assert.equal(
      short,
      `building other: sh exited with status 1; its whole output is in ${logFileOf(lines[0])}; its output:\n` +
        [1, 2, 3].map((i) => `go: downloading example.com/m${i} v1.0.${i}`).join('\n'),
    );
  });

  it('keeps the newest five logs of a step', async () => {
    for (let i = 0; i < 7; i++) await runWithProgress('true', [], { label: 'again', log });
    const kept = fs.readdirSync(path.join(cache, 'logs')).filter((f) => f.endsWith('.log'));
    assert.equal(kept.length, 5, kept.join(' '));
    assert.ok(kept.includes(path.basename(logFileOf(lines.at(-2)))), 'the newest one is kept');
  });

  it("in a run, a copy of the step's log goes into the report folder (installs/)", async () => {
    const report = tmpDir('chainperf-report-');
    logTo(path.join(report, 'run.log'));
    await runWithProgress('sh', ['-c', printLines(5)], { label: 'in a run', log });
    const file = logFileOf(lines[0]);
    assert.equal(
      fs.readFileSync(path.join(report, 'installs', path.basename(file)), 'utf8'),
      fs.readFileSync(file, 'utf8'),
    );
  });

  it('an aborted signal stops the step: interrupted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const t0 = Date.now();
    await assert.rejects(
      runWithProgress('sleep', ['20'], { label: 'long one', log, signal: controller.signal }),
      /^Error: long one: interrupted$/,
    );
    assert.ok(Date.now() - t0 < 5000);
    assert.match(fs.readFileSync(logFileOf(lines[0]), 'utf8'), /\n# interrupted after \d+ s\n$/);
  });

  it('where the cache cannot hold its log, the output is passed through to the log as before', async () => {
    const notADir = path.join(cache, 'a-file');
    fs.writeFileSync(notADir, '');
    process.env.CHAINPERF_CACHE = notADir;
    await runWithProgress('sh', ['-c', printLines(3)], { label: 'no cache', log });
    assert.match(
      lines[0],
      /^no cache: no usual time known yet; its output follows \(.*a-file\/logs cannot be written\)$/,
    );
    assert.deepEqual(
      lines.slice(1, 4),
      [1, 2, 3].map((i) => `no cache: go: downloading example.com/m${i} v1.0.${i}`),
    );
    assert.match(lines[4], /^no cache: done in \d+ s$/);
  });
});

describe("the first run's npm install, quietly (scripts/ensure-npm-deps.sh)", () => {
  /** A clone with the script and a lock file, and an npm on PATH that prints 100 lines (and fails with FAKE_FAIL). */
  function fakeClone() {
    const dir = tmpDir('chainperf-npm-');
    fs.mkdirSync(path.join(dir, 'repo', 'scripts'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.copyFileSync(path.join(ROOT, 'scripts', 'ensure-npm-deps.sh'), path.join(dir, 'repo', 'scripts', 'x.sh'));
    fs.chmodSync(path.join(dir, 'repo', 'scripts', 'x.sh'), 0o755);
    fs.writeFileSync(path.join(dir, 'repo', 'package-lock.json'), '{}\n');
    fs.writeFileSync(
      path.join(dir, 'bin', 'npm'),
      '#!/bin/sh\ni=1; while [ $i -le 100 ]; do echo "npm http fetch GET 200 https://registry.example/p$i"; sleep 0.025; i=$((i + 1)); done\n' +
        '[ -n "$FAKE_FAIL" ] && { echo "npm error code E404" >&2; exit 7; }\n' +
        'mkdir -p node_modules && echo "{}" > node_modules/.package-lock.json\n',
    );
    fs.chmodSync(path.join(dir, 'bin', 'npm'), 0o755);
    return dir;
  }
  function run(dir, env = {}) {
    return new Promise((resolve) => {
      const child = spawn(path.join(dir, 'repo', 'scripts', 'x.sh'), [], {
        env: {
          ...process.env,
          PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`,
          CHAINPERF_CACHE: path.join(dir, 'cache'),
          CHAINPERF_NPM_CACHE: 'no',
          CHAINPERF_HEARTBEAT_S: '1',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (b) => (stderr += b));
      child.on('close', (code) => resolve({ code, lines: stderr.trim().split('\n') }));
    });
  }

  it('a start line with the usual time and the log file, a heartbeat, a done line; the log has every line', async () => {
    const dir = fakeClone();
    const { code, lines } = await run(dir);
    assert.equal(code, 0, lines.join('\n'));
    assert.ok(lines.length >= 3 && lines.length <= 6, lines.join('\n'));
    assert.match(
      lines[0],
      /^chainperf: installing the npm dependencies \(npm ci, first run\): usually about 30 s \(typical on 2 cores\); its output goes to /,
    );
    const file = logFileOf(lines[0]);
    assert.equal(path.dirname(file), path.join(dir, 'cache', 'logs'));
    for (const beat of lines.slice(1, -1))
      assert.match(
        beat,
        /: \d s so far, of about 30 s; last output: npm http fetch GET 200 https:\/\/registry\.example\/p\d+$/,
      );
    assert.ok(lines.length >= 3, 'at least one heartbeat in its 2.5 s');
    assert.match(lines.at(-1), /^chainperf: installing the npm dependencies \(npm ci, first run\): done in \d s$/);
    const text = fs.readFileSync(file, 'utf8');
    for (let i = 1; i <= 100; i++) assert.ok(text.includes(`registry.example/p${i}\n`), `line ${i}`);
    assert.ok(fs.existsSync(path.join(dir, 'repo', 'node_modules', '.package-lock.json')));
    assert.match(fs.readFileSync(path.join(dir, 'cache', 'logs', 'npm-ci.seconds'), 'utf8'), /^\d+\n$/);
  });

  it("a failing npm ci: its exit status, the log's last 30 lines and its file named", async () => {
    const dir = fakeClone();
    const { code, lines } = await run(dir, { FAKE_FAIL: '1', CHAINPERF_HEARTBEAT_S: '60' });
    assert.equal(code, 7);
    const file = logFileOf(lines[0]);
    assert.equal(
      lines[1],
      `chainperf: installing the npm dependencies (npm ci, first run) failed: npm exited with status 7; its whole output is in ${file}; its last 30 of 101 lines:`,
    );
    assert.equal(lines.length, 32, lines.join('\n'));
    assert.equal(lines[2], '  npm http fetch GET 200 https://registry.example/p72');
    assert.equal(lines.at(-1), '  npm error code E404');
  });
});
