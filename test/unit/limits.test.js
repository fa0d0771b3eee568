'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const yaml = require('js-yaml');
const {
  limitsOf,
  limitProblems,
  cgroupSettings,
  applyCgroupSettings,
  composeOverride,
  blockDeviceOf,
} = require('../../src/runtime/limits');
const { composeFiles } = require('../../src/runtime/compose-render');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const V1 = { version: 1, memory: true, memsw: true, blkio: true, writable: true };
const at = (key) => `f.env:${key}`;
const base = {
  RUNTIME: 'host',
  MEMORY_MB: null,
  DISK_READ_IOPS: null,
  DISK_WRITE_IOPS: null,
  DISK_READ_MBPS: null,
  DISK_WRITE_MBPS: null,
  COLD: 'no',
};
const vda = { majmin: '254:0', name: 'vda', dev: '/dev/vda' };

describe('resource limits: validation', () => {
  it('accepts every limit where cgroup v1 has the memory and blkio controllers', () => {
    const s = { ...base, MEMORY_MB: 512, DISK_READ_IOPS: 3000, DISK_WRITE_MBPS: 125, COLD: 'yes' };
    assert.deepEqual(limitProblems(s, V1, at), []);
    assert.deepEqual(limitProblems({ ...s, RUNTIME: 'compose' }, V1, at), []);
  });

  it('refuses a memory limit without the memory controller, and disk limits without blkio throttling, naming the key', () => {
    const errs = limitProblems(
      { ...base, MEMORY_MB: 512, DISK_READ_IOPS: 3000 },
      { ...V1, memory: false, blkio: false },
      at,
    );
    assert.equal(errs.length, 2, errs.join('\n'));
    assert.match(
      errs[0],
      /^f\.env:MEMORY_MB: MEMORY_MB: the kernel cannot enforce a memory limit here \(no cgroup v1 memory controller/,
    );
    assert.match(errs[1], /^f\.env:DISK_READ_IOPS: DISK_READ_IOPS: the kernel cannot throttle block I\/O here/);
  });

  it('refuses limits on cgroup v2 and without a cgroup filesystem, and on the host without write access', () => {
    assert.match(limitProblems({ ...base, MEMORY_MB: 512 }, { ...V1, version: 2 }, at)[0], /cgroup v2/);
    assert.match(limitProblems({ ...base, DISK_WRITE_IOPS: 9 }, { version: 0 }, at)[0], /no cgroup filesystem/);
    assert.match(
      limitProblems({ ...base, MEMORY_MB: 512 }, { ...V1, writable: false }, at)[0],
      /writable cgroup filesystem \(run as root\)/,
    );
  });

  it('refuses limits and COLD in attach', () => {
    const errs = limitProblems({ ...base, RUNTIME: 'attach', MEMORY_MB: 512, COLD: 'yes' }, V1, at);
    assert.equal(errs.length, 2);
    assert.match(errs[0], /MEMORY_MB: RUNTIME=attach .* cannot limit it/);
    assert.match(errs[1], /COLD=yes restarts the node/);
  });

  it('sets nothing and finds nothing to refuse when no limit is given', () => {
    assert.equal(limitsOf(base), null);
    assert.deepEqual(limitProblems(base, { version: 0 }, at), []);
  });

  it('resolveScenario lists an unenforceable limit with the file and line, exit-2 style (no scenario)', () => {
    const dir = tmpDir();
    const file = writeScenario(dir, 'lim', 'RUNTIME=host\nMEMORY_MB=512\nDISK_READ_MBPS=0\n');
    const r = resolveScenario(file, { env: {}, cpuCount: 2, kernel: { ...V1, memory: false } });
    assert.equal(r.scenario, null);
    assert.ok(
      r.errors.some((e) => e === `${file}:3: DISK_READ_MBPS: expected an integer from 1 to 1000000, got "0"`),
      r.errors.join('\n'),
    );
    assert.ok(
      r.errors.some((e) => e.startsWith(`${file}:2: MEMORY_MB: the kernel cannot enforce`)),
      r.errors.join('\n'),
    );
    const ok = resolveScenario(writeScenario(dir, 'ok', 'RUNTIME=host\nMEMORY_MB=512\n'), {
      env: {},
      cpuCount: 2,
      kernel: V1,
    });
    assert.deepEqual(ok.errors, []);
    assert.equal(ok.scenario.MEMORY_MB, 512);
  });
});

describe('resource limits: the settings produced', () => {
  it("host: memory.limit_in_bytes (and memsw) in bytes, blkio throttle rules on the disk's major:minor", () => {
    const limits = limitsOf({
      ...base,
      MEMORY_MB: 512,
      DISK_READ_IOPS: 3000,
      DISK_WRITE_IOPS: 1000,
      DISK_READ_MBPS: 125,
      DISK_WRITE_MBPS: 100,
    });
    assert.deepEqual(cgroupSettings(limits, vda), [
      { controller: 'memory', file: 'memory.limit_in_bytes', value: '536870912' },
      { controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: '536870912', optional: true },
      { controller: 'blkio', file: 'blkio.throttle.read_iops_device', value: '254:0 3000' },
      { controller: 'blkio', file: 'blkio.throttle.write_iops_device', value: '254:0 1000' },
      { controller: 'blkio', file: 'blkio.throttle.read_bps_device', value: '254:0 125000000' },
      { controller: 'blkio', file: 'blkio.throttle.write_bps_device', value: '254:0 100000000' },
    ]);
  });

  it("host: writes the files into the group's directories, skipping memsw where swap is not accounted", () => {
    const dir = tmpDir();
    const dirs = { memory: path.join(dir, 'memory'), blkio: path.join(dir, 'blkio') };
    for (const d of Object.values(dirs)) fs.mkdirSync(d);
    fs.writeFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), '9223372036854771712');
    fs.writeFileSync(path.join(dirs.blkio, 'blkio.throttle.read_iops_device'), '');
    const applied = applyCgroupSettings(
      dirs,
      cgroupSettings(limitsOf({ ...base, MEMORY_MB: 256, DISK_READ_IOPS: 50 }), vda),
    );
    assert.equal(fs.readFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), 'utf8'), '268435456');
    assert.equal(fs.readFileSync(path.join(dirs.blkio, 'blkio.throttle.read_iops_device'), 'utf8'), '254:0 50');
    assert.deepEqual(
      applied.map((x) => x.file),
      ['memory/memory.limit_in_bytes', 'blkio/blkio.throttle.read_iops_device'],
    );
  });

  it('compose: mem_limit and memswap_limit, blkio_config rates on the device path', () => {
    const text = composeOverride(
      limitsOf({ ...base, MEMORY_MB: 1024, DISK_READ_IOPS: 3000, DISK_READ_MBPS: 125 }),
      vda,
    );
    assert.deepEqual(yaml.load(text), {
      services: {
        node: {
          mem_limit: 1073741824,
          memswap_limit: 1073741824,
          blkio_config: {
            device_read_iops: [{ path: '/dev/vda', rate: 3000 }],
            device_read_bps: [{ path: '/dev/vda', rate: 125000000 }],
          },
        },
      },
    });
    const memOnly = yaml.load(composeOverride(limitsOf({ ...base, MEMORY_MB: 64 }), null));
    assert.deepEqual(Object.keys(memOnly.services.node), ['mem_limit', 'memswap_limit']);
  });

  it('compose: a fleet has the limits on every replica service, each its own', () => {
    const doc = yaml.load(composeOverride(limitsOf({ ...base, MEMORY_MB: 512 }), null, ['node', 'replica-2']));
    assert.deepEqual(Object.keys(doc.services), ['node', 'replica-2']);
    assert.deepEqual(doc.services['replica-2'], { mem_limit: 536870912, memswap_limit: 536870912 });
  });

  it("compose: the limits file comes after chainperf's own files and before the user's", () => {
    const s = { CLIENT: 'geth', NODE_VOLUME: '', COMPOSE_FILES: '/x/mine.yml' };
    const files = composeFiles(s, { grafana: false, limitsFile: '/w/limits.yml' });
    assert.deepEqual(files.slice(-2), ['/w/limits.yml', '/x/mine.yml']);
    assert.ok(!composeFiles(s, { grafana: false }).includes('/w/limits.yml'));
  });

  it('finds the whole disk a directory is on, and refuses a filesystem on no block device', () => {
    const sys = tmpDir();
    // /sys/dev/block/M:m links to the partition, whose parent is the disk
    const st = fs.statSync(sys);
    const major = Math.floor(st.dev / 256) & 0xfff;
    const minor = (st.dev & 0xff) | (Math.floor(st.dev / 4096) & 0xfff00);
    const disk = path.join(sys, 'devices', 'sdz');
    fs.mkdirSync(path.join(disk, 'sdz1'), { recursive: true });
    fs.writeFileSync(path.join(disk, 'dev'), '8:0\n');
    fs.writeFileSync(path.join(disk, 'sdz1', 'partition'), '1\n');
    fs.mkdirSync(path.join(sys, 'dev', 'block'), { recursive: true });
    fs.symlinkSync(path.join(disk, 'sdz1'), path.join(sys, 'dev', 'block', `${major}:${minor}`));
    assert.deepEqual(blockDeviceOf(path.join(sys, 'not', 'yet', 'made'), sys), {
      majmin: '8:0',
      name: 'sdz',
      dev: '/dev/sdz',
    });
    const none = blockDeviceOf('/proc/self', sys);
    assert.match(none.error, /on no block device .*disk limits cannot be enforced there/);
  });
});

describe('instance profiles (INSTANCE)', () => {
  const { readInstance, listInstances, INSTANCE_KEYS } = require('../../src/scenario/instances');
  const resolveWith = (text, env = {}, cpuCount = 2) => {
    const file = writeScenario(tmpDir(), 'inst', text);
    return {
      file,
      ...resolveScenario(file, { env, cpuCount, kernel: V1, dockerEngine: null, totalMemoryBytes: 24 * 2 ** 30 }),
    };
  };

  it('ships m5.xlarge, its gp3 at 16,000 IOPS / 1,000 MB/s, i3.xlarge and two 1-vCPU profiles, each setting only the instance keys', () => {
    assert.deepEqual(listInstances(), ['do-s-1vcpu-2gb', 'i3.xlarge', 'm5.xlarge', 'm5.xlarge-gp3-16k', 'm6g.medium']);
    for (const name of listInstances()) {
      const { settings, errors } = readInstance(name);
      assert.deepEqual(errors, [], name);
      for (const x of settings) assert.ok(INSTANCE_KEYS.includes(x.key));
      assert.ok(
        settings.some((x) => x.key === 'HOURLY_PRICE'),
        `${name} has a price`,
      );
    }
  });

  it('sets the limits and the price from the fragment, with its file and line as their source, capping CORES with a warning', () => {
    const r = resolveWith('RUNTIME=host\nINSTANCE=m5.xlarge\n');
    assert.deepEqual(r.errors, []);
    const s = r.scenario;
    assert.deepEqual(
      [s.MEMORY_MB, s.DISK_READ_IOPS, s.DISK_WRITE_IOPS, s.DISK_READ_MBPS, s.DISK_WRITE_MBPS, s.HOURLY_PRICE],
      [16384, 3000, 3000, 125, 125, 0.192],
    );
    assert.match(r.sources.DISK_READ_IOPS, /instances\/m5\.xlarge\.env:\d+$/);
    assert.equal(s.CORES, 1, "capped to 2 cores less the generator's");
    assert.match(r.sources.CORES, /m5\.xlarge\.env:\d+ \(4, capped to 1\)$/);
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0], /INSTANCE=m5\.xlarge has 4 cores; the node gets 1 here/);
  });

  it('lets the file and the environment override the fragment, and warns of a memory limit above the machine', () => {
    const r = resolveWith('RUNTIME=host\nINSTANCE=i3.xlarge\nCORES=1\nHOURLY_PRICE=0.25\n', { DISK_READ_IOPS: '1000' });
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.HOURLY_PRICE, 0.25);
    assert.equal(r.scenario.DISK_READ_IOPS, 1000);
    assert.equal(r.sources.DISK_READ_IOPS, 'environment DISK_READ_IOPS');
    assert.equal(r.scenario.CORES, 1);
    assert.deepEqual(r.warnings.length, 1);
    assert.match(r.warnings[0], /MEMORY_MB=31232, above this machine's 24576 MB/);
  });

  it('refuses an unknown profile with the shipped names and the closest one', () => {
    const r = resolveWith('INSTANCE=m5.xlarg\n');
    assert.equal(r.scenario, null);
    assert.equal(r.errors.length, 1, r.errors.join('\n'));
    assert.match(
      r.errors[0],
      /inst\.env:1: INSTANCE: no instance profile "m5\.xlarg" in instances\/ \(shipped: do-s-1vcpu-2gb, i3\.xlarge, m5\.xlarge, m5\.xlarge-gp3-16k, m6g\.medium\); did you mean m5\.xlarge\?/,
    );
    assert.match(resolveWith('INSTANCE=../scenarios/geth-dev\n').errors[0], /no instance profile/);
  });

  it("refuses a fragment key that is not an instance key, naming the fragment's line", () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'x.env'), 'CORES=2\nDB_CACHE_MB=32\n');
    const { errors } = readInstance('x', dir);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /x\.env:2: DB_CACHE_MB: an instance profile sets only CORES, MEMORY_MB/);
  });
});

describe('a plan sweeping instances', () => {
  const { renderPlanReport } = require('../../src/plan/report');

  it('reports, for each instance, the saturation rate and the cost of a million requests at it', () => {
    const dir = tmpDir();
    const points = [
      ['m5.xlarge', 900, 0.0593],
      ['i3.xlarge', 1500, 0.0578],
    ].map(([inst, rps, cost], i) => {
      const rel = `runs/p${i}`;
      fs.mkdirSync(path.join(dir, rel), { recursive: true });
      fs.writeFileSync(
        path.join(dir, rel, 'run.json'),
        JSON.stringify({
          status: 'ok',
          figures: {
            cpu_ms_per_request: 0.5,
            cpu_ms_per_request_net: 0.4,
            rps: rps * 0.9,
            latency_ms: { p99: 9 },
            cost_per_million_requests: 1,
            disk_read_bytes_per_request: 4096,
          },
          saturation: { max_sustainable_rps: rps, cost_per_million_at_max: cost },
        }),
      );
      return { name: `p-${inst}`, values: { INSTANCE: inst }, runs: [{ status: 'ok', dir: rel }] };
    });
    fs.writeFileSync(
      path.join(dir, 'plan.json'),
      JSON.stringify({
        plan: 'inst',
        status: 'done',
        base: 'geth-dev.env',
        sweep: ['INSTANCE'],
        repetitions: 1,
        fixed: {},
        started_at: 'x',
        points,
      }),
    );
    const results = renderPlanReport(dir);
    assert.deepEqual(
      results.map((r) => [r.figures.saturation_rps, r.figures.cost_per_million]),
      [
        [[900], [0.0593]],
        [[1500], [0.0578]],
      ],
    );
    const md = fs.readFileSync(path.join(dir, 'plan.md'), 'utf8');
    assert.match(md, /\| INSTANCE \| runs ok \| failed \| .*saturation, requests\/s \| cost per million requests/);
    assert.match(md, /\| m5\.xlarge \| 1 \| 0 \| .* \| 900 \| 0\.0593 \| 4096 \|/);
  });
});

describe('memory limit: OOM', () => {
  const { oomKills, memoryWarning } = require('../../src/runtime/limits');
  it("counts the kernel's OOM kills in a group, 0 where the file is missing", () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n');
    assert.equal(oomKills(dir), 2);
    assert.equal(oomKills(path.join(dir, 'none')), 0);
  });
  it('warns when MEMORY_MB leaves the node less than 256 MB beyond its database cache', () => {
    assert.match(
      memoryWarning({ RUNTIME: 'host', MEMORY_MB: 512, DB_CACHE_MB: 1024 }),
      /MEMORY_MB=512 leaves the node less than 256 MB/,
    );
    assert.equal(memoryWarning({ RUNTIME: 'host', MEMORY_MB: 512, DB_CACHE_MB: 32 }), null);
    assert.equal(memoryWarning({ RUNTIME: 'host', MEMORY_MB: null, DB_CACHE_MB: 32 }), null);
  });
});
