'use strict';
// The cache's locks: one holder at a time, a waiter that says so, a dead
// holder's lock taken over, and a half-done install started over.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { tmpDir } = require('../helpers');

describe('cache locks', () => {
  let saved;
  let lock;
  beforeEach(() => {
    saved = process.env.CHAINPERF_CACHE;
    process.env.CHAINPERF_CACHE = tmpDir();
    lock = require('../../src/install/lock');
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.CHAINPERF_CACHE;
    else process.env.CHAINPERF_CACHE = saved;
  });

  it('two holders of the same lock run one after the other, the second saying it waits', async () => {
    const events = [];
    const lines = [];
    const log = (l) => lines.push(l);
    const work = (name) => async () => {
      events.push(`${name} start`);
      await new Promise((r) => setTimeout(r, 300));
      events.push(`${name} end`);
      return name;
    };
    const [a, b] = await Promise.all([
      lock.withCacheLock('thing', work('a'), { log }),
      new Promise((r) => setTimeout(r, 50)).then(() => lock.withCacheLock('thing', work('b'), { log })),
    ]);
    assert.deepEqual([a, b], ['a', 'b']);
    assert.deepEqual(events, ['a start', 'a end', 'b start', 'b end']);
    assert.ok(
      lines.some((l) => /thing: waiting for another chainperf run \(PID \d+/.test(l)),
      lines.join('\n'),
    );
    assert.ok(!fs.existsSync(lock.lockFile('thing')), 'released');
  });

  it('a lock whose holder died is taken over, and the new holder is told the work was abandoned', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const file = lock.lockFile('built');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ process: { pid: Number(dead.stdout), start: '1' }, since: 'then' }));
    const lines = [];
    const seen = await lock.withCacheLock('built', async (o) => o, { log: (l) => lines.push(l) });
    assert.deepEqual(seen, { abandoned: true });
    assert.match(lines.join('\n'), /died while it held this; its half-done work is redone/);
  });

  it('a folder an install did not finish is emptied and filled again; a finished one is left alone', async () => {
    const dir = path.join(process.env.CHAINPERF_CACHE, 'pkg');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'half'), 'x');
    let installs = 0;
    const install = async () => {
      installs++;
      assert.ok(!fs.existsSync(path.join(dir, 'half')), 'the half-done files are gone before the install');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'whole'), 'y');
    };
    const lines = [];
    await lock.installOnce('pkg', dir, install, { log: (l) => lines.push(l) });
    assert.match(lines.join('\n'), /did not finish: starting it over/);
    assert.ok(lock.isComplete(dir));
    await lock.installOnce('pkg', dir, install, { log: () => {} });
    assert.equal(installs, 1);
  });

  it('a failed install leaves the folder incomplete, so the next one starts over', async () => {
    const dir = path.join(process.env.CHAINPERF_CACHE, 'bad');
    await assert.rejects(
      lock.installOnce(
        'bad',
        dir,
        async () => {
          fs.mkdirSync(dir, { recursive: true });
          throw new Error('network down');
        },
        { log: () => {} },
      ),
      /network down/,
    );
    assert.ok(!lock.isComplete(dir));
    assert.ok(!fs.existsSync(lock.lockFile('bad')), 'released on failure');
  });
});

describe('./run.sh clean: the cgroups of a run no lock names', () => {
  const { Cgroup, cgroupsUsable, runsRoot } = require('../../src/platform/cgroup');
  const { runGroupDirs, removeCgroupDir, orphanCgroups, ORPHAN_AFTER_MS } = require('../../src/reclaim');

  it("leaves a young one; finds an old one's directories under every controller, children too, and removes them", async () => {
    assert.ok(cgroupsUsable(), 'the test needs cgroups (root)');
    const runId = `test-orphan-${process.pid}`;
    const groups = ['node', 'generator'].map((g) => new Cgroup(`chainperf/${runId}/${g}`, { cpus: '0' }));
    try {
      // Empty and named by no lock, but just made: it may be a live run's whose lock is elsewhere; old, an orphan.
      const dir = path.join(runsRoot(), runId);
      assert.equal(orphanCgroups(new Set()).old.includes(dir), false, 'a young empty cgroup is left');
      // a minute past the age limit: the directory's mtime has sub-millisecond precision and Date.now() does not
      const later = Date.now() + ORPHAN_AFTER_MS + 60000;
      assert.equal(orphanCgroups(new Set(), later).old.includes(dir), true, 'an old one goes');
      assert.equal(orphanCgroups(new Set([runId]), later).old.includes(dir), false, 'a lock');
      const dirs = runGroupDirs(dir);
      const controllers = new Set(groups.flatMap((g) => g.dirs).map((d) => path.dirname(path.dirname(d))));
      assert.equal(dirs.length, controllers.size, `one directory per controller: ${dirs.join(', ')}`);
      for (const d of dirs) await removeCgroupDir(d);
      for (const g of groups) for (const d of g.dirs) assert.equal(fs.existsSync(d), false, `${d} removed`);
      assert.equal(fs.existsSync(path.join(runsRoot(), runId)), false);
    } finally {
      for (const g of groups) await g.destroy(); // what the test did not remove
    }
  });
});

describe('./run.sh clean: compose projects and swarm stacks no lock names', () => {
  const { strayProjects } = require('../../src/reclaim');
  const compose = (project) => ({ 'com.docker.compose.project': project });
  const stack = (name) => ({ 'com.docker.stack.namespace': name });

  it("counts a run's project no live lock names, by its containers' state and its volumes; not a live run's, nor others'", () => {
    const containers = [
      { Labels: compose('chainperf-20261126-011700-aaaa'), State: 'exited' },
      { Labels: compose('chainperf-20261126-011700-aaaa'), State: 'running' },
      { Labels: compose('chainperf-20261127-090000-live'), State: 'running' },
      { Labels: compose('someone-elses'), State: 'running' },
      { Labels: stack('chainperf-20261126-020000-bbbb'), State: 'running' },
      { Labels: {}, State: 'running' },
    ];
    const volumes = [
      { Labels: compose('chainperf-20261126-011700-aaaa') },
      { Labels: compose('chainperf-20261126-011700-aaaa') },
      { Labels: null },
    ];
    assert.deepEqual(strayProjects(containers, volumes, new Set(['20261127-090000-live'])), {
      'chainperf-20261126-011700-aaaa': { kind: 'compose project', running: 1, stopped: 1, volumes: 2 },
      'chainperf-20261126-020000-bbbb': { kind: 'swarm stack', running: 1, stopped: 0, volumes: 0 },
    });
  });
});
