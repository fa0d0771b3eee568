'use strict';
// platform/cgroup.js on this machine's real cgroup filesystem (root only: without root the tests are pending).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const {
  Cgroup,
  cgroupVersion,
  spawnInGroup,
  removeTree,
  pidsInTree,
  hasProcesses,
} = require('../../src/platform/cgroup');

const asRoot = process.platform === 'linux' && process.getuid && process.getuid() === 0;

describe('cgroups (platform/cgroup.js)', function () {
  before(function () {
    if (!asRoot) this.skip();
  });

  it('a countOnly group counts the CPU of what it spawns, in one hierarchy only on cgroup v1', async () => {
    const g = new Cgroup(`chainperf-unit-${process.pid}/count`, { countOnly: true });
    try {
      if (cgroupVersion() === 1) assert.deepEqual(g.dirs, [g.cpuacct], 'no memory, block I/O or cpuset group');
      const busy = 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done';
      await new Promise((resolve) => spawnInGroup(g, ['sh', '-c', busy]).on('close', resolve));
      const { total_s: total } = g.cpu();
      assert.ok(total > 0.005 && total < 20, `${total} CPU-s`);
    } finally {
      await g.destroy();
      removeTree(path.dirname(g.dirs[0]));
    }
  });

  it('removeTree removes a group and the groups under it, and keeps one a process is still in', async () => {
    const outer = new Cgroup(`chainperf-unit-${process.pid}/tree`, { countOnly: true });
    const inner = new Cgroup(`chainperf-unit-${process.pid}/tree/a/b`, { countOnly: true });
    const sleeper = spawnInGroup(inner, ['sleep', '30']);
    await new Promise((r) => setTimeout(r, 200));
    removeTree(outer.dirs[0]);
    assert.ok(fs.existsSync(inner.dirs[0]), 'the group with a process stays, and those above it');
    sleeper.kill('SIGKILL');
    await new Promise((r) => sleeper.on('close', r));
    removeTree(path.dirname(outer.dirs[0]));
    assert.ok(!fs.existsSync(path.dirname(outer.dirs[0])), 'then all of it goes');
  });

  it('pidsInTree finds a process in a group under the one asked about, and none in a group that is gone', async () => {
    const outer = new Cgroup(`chainperf-unit-${process.pid}/pids`, { countOnly: true });
    const inner = new Cgroup(`chainperf-unit-${process.pid}/pids/a/b`, { countOnly: true });
    const sleeper = spawnInGroup(inner, ['sleep', '30']);
    try {
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual([...pidsInTree(outer.dirs[0])], [sleeper.pid]);
      assert.equal(hasProcesses(outer.dirs[0]), true);
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.on('close', r));
    }
    assert.equal(hasProcesses(outer.dirs[0]), false, 'the process gone, the groups are empty');
    removeTree(path.dirname(outer.dirs[0]));
    assert.deepEqual([...pidsInTree(outer.dirs[0])], [], 'a group that is gone holds none');
  });
});
