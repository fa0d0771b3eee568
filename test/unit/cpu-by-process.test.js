'use strict';
// scripts/cpu-by-process.js: a command's CPU by kind of process, read from /proc.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { kindOf } = require('../../scripts/cpu-by-process');
const { ROOT, tmpDir } = require('../helpers');

describe('cpu-by-process', () => {
  it('names the kinds of process a run and its tests start', () => {
    assert.equal(
      kindOf('node', '/usr/bin/node /x/node_modules/artillery/bin/run run script.yml'),
      'artillery (generator)',
    );
    assert.equal(kindOf('node', 'node /x/node_modules/.bin/mocha --exit a.test.js'), 'mocha (test runner)');
    assert.equal(kindOf('node', '/usr/bin/node /x/src/cli.js run a.env'), 'chainperf and its scripts');
    assert.equal(kindOf('geth', '/root/.cache/chainperf/geth/1.16.7/bin/geth --dev'), 'geth');
    assert.equal(kindOf('kworker/1:0H-kblockd', ''), 'kworker');
  });

  it("counts the command's CPU under its kind and exits with the command's status", () => {
    const out = path.join(tmpDir('chainperf-cpu-'), 'cpu.json');
    // 1 s of its own CPU, however long a loaded machine makes that take; read every 100 ms, so that at most the CPU
    // of its last 100 ms (and the delays of a loaded machine's timers) is missed
    const burn = 'while (process.cpuUsage().user < 1e6); process.exit(3)';
    const args = ['scripts/cpu-by-process.js', '--json', out, '--every', '100', '--', process.execPath, '-e', burn];
    const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 3, r.stderr);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
    assert.ok(doc.kinds['node (other)'] >= 0.5, JSON.stringify(doc));
    assert.ok(doc.machine_busy_cpu_s >= doc.kinds['node (other)'] - 0.1, JSON.stringify(doc));
    assert.match(r.stderr, /cpu-by-process: \d+ s; the machine busy \d+ CPU-s/);
  });

  it('without a command: its usage, exit status 2', () => {
    const r = spawnSync(process.execPath, ['scripts/cpu-by-process.js'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /usage: node scripts\/cpu-by-process\.js/);
  });
});
