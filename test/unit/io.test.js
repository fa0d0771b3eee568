'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const {
  parseBlkio,
  memoryStat,
  readCgroupIo,
  cgroupDirsOfPid,
  enableIoCounting,
  ioBetween,
  ioFigures,
} = require('../../src/measure/io');
const { coldRestart } = require('../../src/measure/cold');
const { evictDir, residentBytes } = require('../../src/platform/pagecache');
const { tmpDir } = require('../helpers');

const BLKIO =
  '254:0 Read 4096\n254:0 Write 512\n254:0 Sync 4608\n254:0 Total 4608\n8:0 Read 1000\n8:0 Write 0\nTotal 5608\n';

describe("disk and memory counters of the node's cgroup", () => {
  it('sums Read and Write over every device, skipping the totals', () => {
    assert.deepEqual(parseBlkio(BLKIO), { read: 5096, write: 512 });
    assert.deepEqual(parseBlkio('Total 0\n'), { read: 0, write: 0 });
  });

  it('reads major faults from memory.stat, hierarchical when present', () => {
    assert.equal(memoryStat('pgmajfault 3\ntotal_pgmajfault 7\n', 'pgmajfault'), 7);
    assert.equal(memoryStat('pgmajfault 3\n', 'pgmajfault'), 3);
    assert.equal(memoryStat('cache 1\n', 'pgmajfault'), null);
  });

  it("reads a group's files, null for what is missing", () => {
    const dir = tmpDir();
    const dirs = { memory: path.join(dir, 'm'), blkio: path.join(dir, 'b') };
    fs.mkdirSync(dirs.memory);
    fs.mkdirSync(dirs.blkio);
    fs.writeFileSync(path.join(dirs.blkio, 'blkio.throttle.io_service_bytes'), BLKIO);
    fs.writeFileSync(path.join(dirs.blkio, 'blkio.throttle.io_serviced'), '254:0 Read 2\n254:0 Write 1\n');
    fs.writeFileSync(path.join(dirs.memory, 'memory.stat'), 'pgmajfault 1\ntotal_pgmajfault 9\n');
    fs.writeFileSync(path.join(dirs.memory, 'memory.usage_in_bytes'), '1048576\n');
    const r = readCgroupIo(dirs);
    assert.deepEqual(
      { ...r, at_ms: 0 },
      {
        read_bytes: 5096,
        write_bytes: 512,
        read_ops: 2,
        write_ops: 1,
        major_faults: 9,
        memory_bytes: 1048576,
        at_ms: 0,
      },
    );
    const none = readCgroupIo({ memory: dirs.memory, blkio: null });
    assert.equal(none.read_bytes, null);
    assert.equal(none.major_faults, 9);
  });

  it('turns counting on with a rule that never limits, leaving a rule the scenario set', () => {
    const dir = tmpDir();
    for (const d of ['read', 'write']) fs.writeFileSync(path.join(dir, `blkio.throttle.${d}_bps_device`), '');
    fs.writeFileSync(path.join(dir, 'blkio.throttle.read_bps_device'), '254:0 131072000\n');
    assert.equal(enableIoCounting(dir, { majmin: '254:0' }), true);
    assert.equal(fs.readFileSync(path.join(dir, 'blkio.throttle.read_bps_device'), 'utf8'), '254:0 131072000\n');
    assert.equal(fs.readFileSync(path.join(dir, 'blkio.throttle.write_bps_device'), 'utf8'), `254:0 ${2 ** 40}`);
    assert.equal(enableIoCounting(dir, { error: 'tmpfs' }), false);
    assert.equal(enableIoCounting(path.join(dir, 'gone'), { majmin: '254:0' }), false);
  });

  it("finds a process's memory and blkio groups from /proc/PID/cgroup", () => {
    const dirs = cgroupDirsOfPid(process.pid, '/R');
    const lines = fs.readFileSync(`/proc/${process.pid}/cgroup`, 'utf8');
    if (/:memory:/.test(lines)) assert.match(dirs.memory, /^\/R\/memory\//);
    else assert.equal(dirs, null);
    assert.equal(cgroupDirsOfPid(2 ** 30), null);
  });

  it('gives the rise over the window and the figures per request', () => {
    const a = { read_bytes: 1000, write_bytes: 0, read_ops: 10, write_ops: 0, major_faults: 5, at_ms: 10000 };
    const b = { read_bytes: 41000, write_bytes: 8192, read_ops: 60, write_ops: 2, major_faults: 25, at_ms: 20000 };
    const io = ioBetween(a, b, 400, 'test');
    assert.deepEqual(io, {
      source: 'test',
      seconds: 10,
      requests_ok: 400,
      read_bytes: 40000,
      write_bytes: 8192,
      read_ops: 50,
      write_ops: 2,
      major_faults: 20,
    });
    assert.deepEqual(ioFigures({ io, memory_mean_bytes: 80e6 }, 40), {
      disk_read_bytes_per_request: 100,
      disk_write_bytes_per_request: 20.48,
      disk_read_iops: 5,
      major_faults_per_request: 0.05,
      memory_bytes_per_rps: 2e6,
    });
    assert.deepEqual(ioFigures({}, 0), {
      disk_read_bytes_per_request: null,
      disk_write_bytes_per_request: null,
      disk_read_iops: null,
      major_faults_per_request: null,
      memory_bytes_per_rps: null,
    });
    assert.equal(ioBetween(null, b, 1, 'x'), null);
  });
});

describe('COLD=yes', () => {
  it('stops the node, evicts its data while it is down, starts it, waits for sync and for its start-up work', async () => {
    const events = [];
    let startedAt = null;
    // the restarted node busy at one core for its first 1.3 s (geth's KZG initialisation), then at 0.01
    const cpuSince = (t) => Math.min(t, 1.3) + 0.01 * Math.max(0, t - 1.3);
    const stack = {
      runtime: 'host',
      rpcUrl: 'http://x',
      nodeDataDir: '/data/x',
      node: {},
      cpu: { read: async () => ({ total_s: cpuSince((Date.now() - startedAt) / 1000) }) },
      restartNode: async (between) => {
        events.push('stop');
        await between();
        events.push('start');
        startedAt = Date.now();
      },
    };
    const chain = { waitForSync: async (url) => events.push(`sync ${url}`) };
    const r = await coldRestart({ s: { SYNC_TIMEOUT_S: 5 }, stack, chain }, (dir) => {
      events.push(`evict ${dir}`);
      return { files: 1, bytes: 1, resident_before: 1, resident_after: 0 };
    });
    assert.deepEqual(events, ['stop', 'evict /data/x', 'start', 'sync http://x']);
    assert.ok(r.seconds >= 0);
    assert.equal(r.evicted.resident_after, 0);
    // its first 2 s look (from 0.2 s on) falls from one core to idle in its second half: a second look, kept
    assert.ok(r.settle.looks >= 2, JSON.stringify(r.settle));
    assert.equal(r.settle.settled, true);
    assert.ok(r.settle.cpu_s_per_s < 0.05, `${r.settle.cpu_s_per_s} cores in the last look`);
  });

  it('fails the run when the data cannot be evicted, or the runtime cannot restart the node', async () => {
    const stack = { runtime: 'host', nodeDataDir: '/x', restartNode: async (between) => between() };
    await assert.rejects(
      coldRestart({ s: {}, stack, chain: {} }, () => {
        throw Object.assign(new Error('x'), { code: 'EACCES' });
      }),
      /could not be evicted from the page cache \(EACCES\)/,
    );
    await assert.rejects(
      coldRestart({ s: {}, stack: { runtime: 'attach' }, chain: {} }),
      /cannot restart the node cold/,
    );
  });

  it('evicts every file of a directory from the page cache', () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'sub'));
    for (const f of ['a', 'sub/b']) fs.writeFileSync(path.join(dir, f), Buffer.alloc(256 * 1024, 1));
    for (const f of ['a', 'sub/b']) fs.readFileSync(path.join(dir, f));
    const r = evictDir(dir);
    assert.equal(r.files, 2);
    assert.equal(r.bytes, 512 * 1024);
    assert.equal(r.resident_after, 0, 'nothing of it left in the page cache (fincore)');
    assert.deepEqual(residentBytes([]), 0);
  });
});

describe('the bytes a group’s processes dirtied for writing', () => {
  it('sums /proc/PID/io write_bytes less cancelled_write_bytes over the group’s processes, which blkio misses', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), `${process.pid}\n999999999\n`); // this test, and one gone
    const before = readCgroupIo({ memory: dir, dirtied: true }).write_bytes_dirtied;
    const file = path.join(dir, 'written.bin');
    fs.writeFileSync(file, Buffer.alloc(4 << 20, 1)); // 4 MiB through the page cache, kept
    const after = readCgroupIo({ memory: dir, dirtied: true }).write_bytes_dirtied;
    assert.ok(after - before >= 4 << 20, `dirtied ${after - before} bytes`);
    assert.equal(readCgroupIo({ memory: dir }).write_bytes_dirtied, undefined, 'only where asked for');
    const io = ioBetween(
      { ...EMPTY, write_bytes_dirtied: before, at_ms: 0 },
      { ...EMPTY, write_bytes_dirtied: after, at_ms: 1000 },
      10,
      'x',
    );
    assert.equal(io.write_bytes_dirtied, after - before);
    assert.equal(
      ioFigures({ io }, 10).disk_write_bytes_dirtied_per_request,
      Number(((after - before) / 10).toFixed(3)),
    );
  });
  it("a fleet's group: the processes of the groups under it count; a group with none gives no figure, not 0", () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), ''); // v1 lists no process of a sub-group in its parent
    assert.equal(readCgroupIo({ memory: dir, dirtied: true }).write_bytes_dirtied, null);
    fs.mkdirSync(path.join(dir, 'replica-1'));
    fs.writeFileSync(path.join(dir, 'replica-1', 'cgroup.procs'), `${process.pid}\n`);
    assert.ok(readCgroupIo({ memory: dir, dirtied: true }).write_bytes_dirtied > 0);
  });
  it('a fall between the edges (a process that exited took its bytes) is no figure', () => {
    const io = ioBetween(
      { ...EMPTY, write_bytes_dirtied: 900, at_ms: 0 },
      { ...EMPTY, write_bytes_dirtied: 100, at_ms: 1 },
      1,
      'x',
    );
    assert.equal(io.write_bytes_dirtied, null);
  });
});

const EMPTY = { read_bytes: 0, write_bytes: 0, read_ops: 0, write_ops: 0, major_faults: 0 };
