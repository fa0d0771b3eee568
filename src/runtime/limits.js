'use strict';
// Resource limits of the node (MEMORY_MB and the DISK_* keys) and COLD=yes:
// what the kernel here can enforce, and the settings each runtime applies.
//   host:    cgroup v1 files written into the node's cgroup before it starts
//            (memory.limit_in_bytes; blkio.throttle.* on the disk holding its data)
//   compose: the node service's mem_limit / memswap_limit and blkio_config
//            (the Docker engine writes the same cgroup files)
// A limit the kernel cannot enforce is refused before anything starts, never ignored.

const fs = require('node:fs');
const path = require('node:path');

const ROOT = '/sys/fs/cgroup';

/** Each disk key: its cgroup v1 file, its compose blkio_config field, and the unit that becomes the file's number. */
const DISK_KEYS = {
  DISK_READ_IOPS: { file: 'blkio.throttle.read_iops_device', compose: 'device_read_iops', factor: 1 },
  DISK_WRITE_IOPS: { file: 'blkio.throttle.write_iops_device', compose: 'device_write_iops', factor: 1 },
  DISK_READ_MBPS: { file: 'blkio.throttle.read_bps_device', compose: 'device_read_bps', factor: 1e6 },
  DISK_WRITE_MBPS: { file: 'blkio.throttle.write_bps_device', compose: 'device_write_bps', factor: 1e6 },
};
const LIMIT_KEYS = ['MEMORY_MB', ...Object.keys(DISK_KEYS)];

/** The limits a scenario sets: {memoryBytes, disk: {KEY: number in the file's unit}}, or null when none. */
function limitsOf(s) {
  const disk = {};
  for (const [key, d] of Object.entries(DISK_KEYS)) if (s[key]) disk[key] = s[key] * d.factor;
  const memoryBytes = s.MEMORY_MB ? s.MEMORY_MB * 1024 * 1024 : null;
  if (!memoryBytes && !Object.keys(disk).length) return null;
  return { memoryBytes, disk };
}

/** What this kernel offers: cgroup version and whether the v1 memory and blkio throttle files exist. */
function probeKernel(root = ROOT) {
  const has = (...p) => fs.existsSync(path.join(root, ...p));
  const version = has('cgroup.controllers') ? 2 : has('cpuacct') || has('cpu,cpuacct') ? 1 : 0;
  let writable = false;
  try {
    fs.accessSync(path.join(root, 'memory'), fs.constants.W_OK);
    writable = true;
  } catch {
    // not root, or a read-only cgroup filesystem
  }
  return {
    version,
    memory: version === 1 && has('memory', 'memory.limit_in_bytes'),
    memsw: version === 1 && has('memory', 'memory.memsw.limit_in_bytes'),
    blkio: version === 1 && has('blkio', 'blkio.throttle.read_iops_device'),
    writable,
  };
}

/**
 * The whole block device a directory lives on, as blkio throttle rules name it.
 * A partition is throttled on its disk; a filesystem on no block device (tmpfs, overlay, btrfs subvolume) cannot be.
 * @returns {{majmin:string, name:string, dev:string}|{error:string}}
 */
function blockDeviceOf(dir, sysRoot = '/sys') {
  let st;
  let at = path.resolve(dir);
  for (;;) {
    try {
      st = fs.statSync(at);
      break;
    } catch {
      if (path.dirname(at) === at) return { error: `cannot stat ${dir}` };
      at = path.dirname(at); // the data dir does not exist yet: its nearest existing parent holds it
    }
  }
  const major = Math.floor(st.dev / 256) & 0xfff;
  const minor = (st.dev & 0xff) | (Math.floor(st.dev / 4096) & 0xfff00);
  const sys = path.join(sysRoot, 'dev', 'block', `${major}:${minor}`);
  if (major === 0 || !fs.existsSync(sys)) {
    return {
      error: `${at} is on no block device (device ${major}:${minor}, e.g. tmpfs or overlay): disk limits cannot be enforced there`,
    };
  }
  let disk = fs.realpathSync(sys);
  if (fs.existsSync(path.join(disk, 'partition'))) disk = path.dirname(disk);
  const majmin = fs.readFileSync(path.join(disk, 'dev'), 'utf8').trim();
  const name = path.basename(disk);
  return { majmin, name, dev: `/dev/${name}` };
}

/**
 * Why the limits and COLD cannot be enforced here, one message per problem (none: they can).
 * @param {object} s resolved scenario
 * @param {{version, memory, memsw, blkio, writable}} kernel probeKernel()
 * @param {(key:string)=>string} at where a key was set
 */
function limitProblems(s, kernel, at) {
  const errors = [];
  const limits = limitsOf(s);
  if (s.RUNTIME === 'attach') {
    for (const key of LIMIT_KEYS)
      if (s[key])
        errors.push(
          `${at(key)}: ${key}: RUNTIME=attach measures a node chainperf did not start; it cannot limit it (use RUNTIME=host or compose)`,
        );
    if (s.COLD === 'yes')
      errors.push(`${at('COLD')}: COLD=yes restarts the node before each window, which RUNTIME=attach cannot do`);
    return errors;
  }
  if (limits) {
    const why =
      kernel.version === 2
        ? 'this machine has cgroup v2, and chainperf applies limits through cgroup v1 files'
        : kernel.version === 0
          ? 'no cgroup filesystem is mounted at /sys/fs/cgroup'
          : null;
    if (s.MEMORY_MB) {
      if (why || !kernel.memory)
        errors.push(
          `${at('MEMORY_MB')}: MEMORY_MB: the kernel cannot enforce a memory limit here (${why || 'no cgroup v1 memory controller: see /proc/cgroups'})`,
        );
    }
    for (const key of Object.keys(DISK_KEYS)) {
      if (s[key] && (why || !kernel.blkio))
        errors.push(
          `${at(key)}: ${key}: the kernel cannot throttle block I/O here (${why || 'no cgroup v1 blkio controller with throttle files: see /proc/cgroups'})`,
        );
    }
    if (s.RUNTIME === 'host' && !kernel.writable && !errors.length) {
      errors.push(
        `${at(LIMIT_KEYS.find((k) => s[k]))}: resource limits need a writable cgroup filesystem (run as root) for RUNTIME=host`,
      );
    }
  }
  return errors;
}

/** The cgroup v1 files and values that apply the limits, controller by controller. */
function cgroupSettings(limits, device) {
  const out = [];
  if (limits.memoryBytes) {
    out.push({ controller: 'memory', file: 'memory.limit_in_bytes', value: String(limits.memoryBytes) });
    // Where swap is accounted, the same bound on memory+swap: the limit is not escaped by swapping.
    out.push({
      controller: 'memory',
      file: 'memory.memsw.limit_in_bytes',
      value: String(limits.memoryBytes),
      optional: true,
    });
  }
  for (const [key, value] of Object.entries(limits.disk)) {
    out.push({ controller: 'blkio', file: DISK_KEYS[key].file, value: `${device.majmin} ${value}` });
  }
  return out;
}

/** Writes the settings into a group's directories ({memory: dir, blkio: dir}); returns what was applied. */
function applyCgroupSettings(dirs, settings) {
  const applied = [];
  for (const x of settings) {
    const file = path.join(dirs[x.controller], x.file);
    if (x.optional && !fs.existsSync(file)) continue;
    try {
      fs.writeFileSync(file, x.value);
    } catch (err) {
      throw new Error(`cannot apply ${x.file} = ${x.value} to the node's cgroup (${err.code || err.message})`);
    }
    applied.push({ file: path.join(x.controller, x.file), value: x.value });
  }
  return applied;
}

/** The limits of the node service (a fleet's: of each replica service) as a compose override's text (JSON is YAML). */
function composeOverride(limits, device, services = ['node']) {
  const node = {};
  if (limits.memoryBytes) {
    node.mem_limit = limits.memoryBytes;
    node.memswap_limit = limits.memoryBytes; // no swap beyond the limit
  }
  const blkio = {};
  for (const [key, value] of Object.entries(limits.disk))
    blkio[DISK_KEYS[key].compose] = [{ path: device.dev, rate: value }];
  if (Object.keys(blkio).length) node.blkio_config = blkio;
  return `${JSON.stringify({ services: Object.fromEntries(services.map((svc) => [svc, node])) }, null, 2)}\n`;
}

/**
 * Host runtime: applies the scenario's limits to the node's cgroup before the node starts.
 * @returns {object|null} what run.json records (node.limits), null when the scenario sets none
 */
function applyHostLimits(s, group, dataDir, log) {
  const limits = limitsOf(s);
  if (!limits) return null;
  if (!group || group.version !== 1)
    throw new Error('resource limits need cgroup v1 groups, which this run could not create');
  const device = Object.keys(limits.disk).length ? blockDeviceOf(dataDir) : null;
  if (device && device.error) throw new Error(device.error);
  const applied = applyCgroupSettings({ memory: group.memory, blkio: group.blkio }, cgroupSettings(limits, device));
  log(`node limits: ${describeLimits(s, device)}`);
  return {
    memory_bytes: limits.memoryBytes,
    device: device ? device.dev : null,
    applies_to: 'the node',
    cgroup: applied,
  };
}

/** How many processes of a group the kernel's OOM killer has killed (cgroup v1 memory.oom_control), or 0. */
function oomKills(memoryDir) {
  try {
    const m = /^oom_kill (\d+)$/m.exec(fs.readFileSync(path.join(memoryDir, 'memory.oom_control'), 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** A warning when MEMORY_MB leaves the node little beyond its own database cache: the kernel may kill it. */
function memoryWarning(s) {
  if (!s.MEMORY_MB || s.RUNTIME === 'attach' || s.MEMORY_MB >= s.DB_CACHE_MB + 256) return null;
  return `MEMORY_MB=${s.MEMORY_MB} leaves the node less than 256 MB beyond its database cache (DB_CACHE_MB=${s.DB_CACHE_MB}): as the cache fills, the kernel may kill the node (run.json then says OOM)`;
}

/** One line for the log: the limits in the scenario's units. */
function describeLimits(s, device) {
  const parts = [];
  if (s.MEMORY_MB) parts.push(`memory ${s.MEMORY_MB} MB (page cache included)`);
  for (const key of Object.keys(DISK_KEYS))
    if (s[key]) parts.push(`${key.toLowerCase().replace('disk_', '').replace('_', ' ')} ${s[key]}`);
  return `${parts.join(', ')}${device && Object.keys(DISK_KEYS).some((k) => s[k]) ? ` on ${device.dev} (${device.majmin})` : ''}`;
}

module.exports = {
  DISK_KEYS,
  LIMIT_KEYS,
  limitsOf,
  probeKernel,
  blockDeviceOf,
  limitProblems,
  cgroupSettings,
  applyCgroupSettings,
  composeOverride,
  describeLimits,
  applyHostLimits,
  oomKills,
  memoryWarning,
};
