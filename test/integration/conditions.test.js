'use strict';
// Resource limits and COLD=yes on a real geth with the host runtime: the
// limits are read from the running node's own cgroup, from outside chainperf.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, gethOf, readRun, LIGHT_LOAD } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');

// These tests check limits, restarts and what is read around the window, not a figure under load: a light open loop
// (the harness's LIGHT_LOAD) does.
const SHORT = {
  ...LIGHT_LOAD,
  DURATION_S: '10',
  WARMUP_S: '2',
  IDLE_S: '2',
  HISTORY_TRANSFERS: '20',
  HISTORY_CONTRACT_CALLS: '10',
  MEMORY_MB: '768',
  DISK_READ_IOPS: '5000',
  DISK_WRITE_MBPS: '200',
  COLD: 'yes',
  RAMP_S: '4', // more time before the window (the ramp's): a COLD restart and a busy CI machine slow the start
};

/** The v1 controller directory of a process's cgroup, as the kernel names it in /proc/PID/cgroup. */
function groupDir(pid, controller) {
  const line = fs
    .readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1] && l.split(':')[1].split(',').includes(controller));
  return path.join('/sys/fs/cgroup', controller, line.split(':')[2]);
}

describe('host runtime: MEMORY_MB, DISK_* and COLD=yes on geth', () => {
  let res;
  let run;
  const seen = new Map(); // geth pid -> the limits read from its cgroup while it ran

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), SHORT);
    const timer = setInterval(() => {
      const g = gethOf(r.tmp);
      if (!g || seen.has(g.pid)) return;
      try {
        seen.set(g.pid, {
          memory: fs.readFileSync(path.join(groupDir(g.pid, 'memory'), 'memory.limit_in_bytes'), 'utf8').trim(),
          readIops: fs
            .readFileSync(path.join(groupDir(g.pid, 'blkio'), 'blkio.throttle.read_iops_device'), 'utf8')
            .trim(),
          writeBps: fs
            .readFileSync(path.join(groupDir(g.pid, 'blkio'), 'blkio.throttle.write_bps_device'), 'utf8')
            .trim(),
        });
      } catch {
        // between the sh that joins the group and geth's exec, or exiting
      }
    }, 100);
    res = await r.done;
    clearInterval(timer);
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('completes, with run.json valid against the schema', () => {
    assert.equal(res.code, 0);
    assert.equal(run.status, 'ok');
    assert.deepEqual(schemaErrors(run), []);
  });

  it("the running node's cgroup has the memory limit and the disk throttle rules", () => {
    assert.ok(seen.size >= 1, 'the geth process was seen');
    for (const [pid, lim] of seen) {
      assert.equal(lim.memory, String(768 * 1024 * 1024), `memory.limit_in_bytes of geth ${pid}`);
      assert.match(lim.readIops, /^\d+:\d+ 5000$/m);
      assert.match(lim.writeBps, new RegExp(`^\\d+:\\d+ ${200 * 1e6}$`, 'm'));
    }
    assert.equal(run.node.limits.memory_bytes, 768 * 1024 * 1024);
    assert.match(run.node.limits.device, /^\/dev\//);
  });

  it('COLD=yes restarted the node before the window (a second geth process in the same limits)', () => {
    assert.ok(seen.size >= 2, `geth processes seen: ${[...seen.keys()].join(', ')}`);
    assert.ok(run.node.cold_restart_s > 0);
    assert.match(
      fs.readFileSync(path.join(res.reportDir, 'run.log'), 'utf8'),
      /COLD=yes: stopping the node, evicting its data from the page cache/,
    );
    assert.equal(run.node.cold_evicted.resident_after, 0, "none of the node's data left in the page cache");
    assert.ok(run.node.cold_evicted.files > 0);
  });

  it("reports the cgroup's block I/O and major faults over the window, and the figures per request", () => {
    const io = run.node.io;
    for (const k of ['read_bytes', 'write_bytes', 'read_ops', 'write_ops', 'major_faults'])
      assert.ok(Number.isInteger(io[k]) && io[k] >= 0, `${k}: ${io[k]}`);
    assert.ok(io.requests_ok > 0);
    const f = run.figures;
    assert.equal(f.disk_read_bytes_per_request, Number((io.read_bytes / io.requests_ok).toFixed(3)));
    assert.equal(f.major_faults_per_request, Number((io.major_faults / io.requests_ok).toFixed(6)));
    assert.ok(f.disk_read_iops >= 0);
    assert.equal(f.memory_bytes_per_rps, Math.round(run.node.memory_mean_bytes / f.rps));
    assert.ok(run.node.memory_peak_bytes <= 768 * 1024 * 1024, "the node's memory stayed under its limit");
  });
});

describe('compose runtime: STATE=small, MEMORY_MB, DISK_* and COLD=yes on the geth container', () => {
  const docker = require('../../src/platform/docker');
  let res;
  let run;
  const seen = new Map(); // container start time -> its cgroup's limits, read while it ran

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      ...SHORT,
      RUNTIME: 'compose',
      GRAFANA: 'no',
      DURATION_S: '8',
      IDLE_S: '4',
      STATE: 'small',
      WORKLOAD: 'eth-state',
    });
    const timer = setInterval(async () => {
      const project = /starting compose project (\S+)/.exec(r.stderrText());
      if (!project) return;
      const filter = encodeURIComponent(
        JSON.stringify({ label: [`com.docker.compose.project=${project[1]}`, 'com.docker.compose.service=node'] }),
      );
      try {
        const list = await docker.engine('GET', `/containers/json?filters=${filter}`);
        if (!list.body.length) return;
        const info = await docker.inspectContainer(list.body[0].Id);
        if (!info.State.Pid || seen.has(info.State.StartedAt)) return;
        seen.set(info.State.StartedAt, {
          memory: fs
            .readFileSync(path.join(groupDir(info.State.Pid, 'memory'), 'memory.limit_in_bytes'), 'utf8')
            .trim(),
          readIops: fs
            .readFileSync(path.join(groupDir(info.State.Pid, 'blkio'), 'blkio.throttle.read_iops_device'), 'utf8')
            .trim(),
        });
      } catch {
        // starting or stopping
      }
    }, 250);
    res = await r.done;
    clearInterval(timer);
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('completes, with run.json valid against the schema and no failed request', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.figures.requests_failed, 0);
  });

  it("the node container's cgroup has the limits, before and after the cold restart", () => {
    assert.ok(seen.size >= 2, `node container starts seen: ${seen.size}`);
    for (const lim of seen.values()) {
      assert.equal(lim.memory, String(768 * 1024 * 1024));
      assert.match(lim.readIops, /^\d+:\d+ 5000$/m);
    }
    assert.equal(run.node.limits.compose.mem_limit, 768 * 1024 * 1024);
    assert.ok(run.node.cold_restart_s > 0);
    assert.ok(run.node.cold_evicted.files > 0, "the node volume's files were evicted");
    assert.equal(run.node.cold_evicted.resident_after, 0);
  });

  it('ran on a volume of the run restored from the state, removed at the end', async () => {
    const m = /copied \S+ into volume (\S+) in/.exec(fs.readFileSync(path.join(res.reportDir, 'run.log'), 'utf8'));
    assert.ok(m, 'the state was copied into a volume');
    // MEMORY_MB: the copy's pages left the page cache, so the node reads within its own limit
    assert.ok(run.state.evicted.files > 0 && run.state.evicted.bytes > 0, JSON.stringify(run.state.evicted));
    assert.equal(run.state.evicted.resident_after, 0);
    assert.equal((await docker.engine('GET', `/volumes/${m[1]}`)).status, 404, "the run's state volume is gone");
    assert.equal(run.history, undefined);
    assert.ok(Number.isInteger(run.node.io.read_ops));
  });
});

describe('host runtime: a MEMORY_MB the node cannot live in', () => {
  it('the kernel kills the node; the run fails naming OOM, with the warning given at start', async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      ...LIGHT_LOAD,
      MEMORY_MB: '64',
      DURATION_S: '5',
      WARMUP_S: '1',
      IDLE_S: '0',
    });
    const res = await r.done;
    assert.equal(res.code, 1);
    const run = readRun(res.reportDir);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /the node exited during \w+ \(signal OOM\)/);
    assert.ok(
      run.warnings.some((w) => /MEMORY_MB=64 leaves the node less than 256 MB beyond its database cache/.test(w)),
      run.warnings.join('\n'),
    );
    assert.deepEqual(schemaErrors(run), []);
  });
});
