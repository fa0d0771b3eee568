'use strict';
// Disk and memory counters of the node's cgroup (cgroup v1), read at the
// window's edges like its CPU: bytes and operations the block layer served
// (blkio.throttle.io_service_bytes / io_serviced, every device summed), major
// page faults (memory.stat total_pgmajfault: pages read from disk on access,
// the page cache's misses) and memory in use. Host runtime: the node's own
// group; compose: the node container's group, found through its PID.
//
// On cgroup v1 this kernel (6.x) counts a group's block I/O only once a
// throttle rule exists for it on the device, so a rule that never limits
// (1 TiB/s) is set where the scenario sets none: counting, not throttling.

const fs = require('node:fs');
const path = require('node:path');
const { round } = require('../figures');

const NO_LIMIT_BPS = String(2 ** 40); // 1 TiB/s

/** Sums the Read and Write rows of a blkio stat file ("M:m Read N" lines), or null when unreadable. */
function parseBlkio(text) {
  const out = { read: 0, write: 0 };
  for (const line of text.split('\n')) {
    const [dev, op, n] = line.trim().split(/\s+/);
    if (!dev || dev === 'Total' || n === undefined) continue;
    if (op === 'Read') out.read += Number(n);
    if (op === 'Write') out.write += Number(n);
  }
  return out;
}

/** A value of memory.stat, hierarchical (total_<name>) when present. */
function memoryStat(text, name) {
  const kv = Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );
  const v = kv[`total_${name}`] ?? kv[name];
  return v === undefined ? null : Number(v);
}

const readOr = (file) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/**
 * The bytes the group's processes dirtied for writing, net of those cancelled before they were written (the sum of
 * their /proc/PID/io write_bytes less cancelled_write_bytes), or null. cgroup v1's blkio counts only the writes a
 * group issues itself: a buffered write reaches the disk later through the kernel's flusher, outside the group, so
 * a database that writes through the page cache shows none there.
 */
function dirtiedBytes(memoryDir) {
  const pids = memoryDir ? pidsUnder(memoryDir) : [];
  if (!pids.length) return null; // no process to read: not a zero
  let sum = 0;
  for (const pid of pids) {
    const io = readOr(`/proc/${pid}/io`);
    if (io === null) continue; // gone meanwhile
    const field = (k) => Number((new RegExp(`^${k}: (\\d+)`, 'm').exec(io) || [0, 0])[1]);
    sum += field('write_bytes') - field('cancelled_write_bytes');
  }
  return sum;
}

/** The processes of a cgroup v1 group and of the groups under it (a fleet's replicas each have their own). */
function pidsUnder(dir) {
  const own = (readOr(path.join(dir, 'cgroup.procs')) || '').split('\n').filter(Boolean);
  let subs = [];
  try {
    subs = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  } catch {
    // not listable: its own processes alone
  }
  return [...own, ...subs.flatMap((e) => pidsUnder(path.join(dir, e.name)))];
}

/** The counters of a group's {memory, blkio} directories now; each null when its file is not readable. */
function readCgroupIo(dirs) {
  const bytes = dirs.blkio ? readOr(path.join(dirs.blkio, 'blkio.throttle.io_service_bytes')) : null;
  const ops = dirs.blkio ? readOr(path.join(dirs.blkio, 'blkio.throttle.io_serviced')) : null;
  const stat = dirs.memory ? readOr(path.join(dirs.memory, 'memory.stat')) : null;
  const usage = dirs.memory ? readOr(path.join(dirs.memory, 'memory.usage_in_bytes')) : null;
  const b = bytes === null ? null : parseBlkio(bytes);
  const o = ops === null ? null : parseBlkio(ops);
  return {
    read_bytes: b ? b.read : null,
    write_bytes: b ? b.write : null,
    read_ops: o ? o.read : null,
    write_ops: o ? o.write : null,
    major_faults: stat === null ? null : memoryStat(stat, 'pgmajfault'),
    memory_bytes: usage === null ? null : Number(usage.trim()),
    ...(dirs.dirtied ? { write_bytes_dirtied: dirtiedBytes(dirs.memory) } : {}),
    at_ms: Date.now(),
  };
}

/** The v1 memory and blkio directories of a process's cgroups (/proc/PID/cgroup), or null. */
function cgroupDirsOfPid(pid, root = '/sys/fs/cgroup') {
  const text = readOr(`/proc/${pid}/cgroup`);
  if (!text) return null;
  const dirs = {};
  for (const line of text.trim().split('\n')) {
    const [, ctrls, p] = line.split(':');
    for (const c of ['memory', 'blkio']) if (ctrls.split(',').includes(c)) dirs[c] = path.join(root, c, p);
  }
  return dirs.memory || dirs.blkio ? dirs : null;
}

/**
 * Turns on block I/O counting in a group: a rule that never limits on the device,
 * in each direction the scenario leaves unthrottled. Returns whether counting is on.
 */
function enableIoCounting(blkioDir, device) {
  if (!blkioDir || !device || device.error) return false;
  try {
    for (const dir of ['read', 'write']) {
      const file = path.join(blkioDir, `blkio.throttle.${dir}_bps_device`);
      const rules = fs.readFileSync(file, 'utf8');
      if (!rules.includes(`${device.majmin} `)) fs.writeFileSync(file, `${device.majmin} ${NO_LIMIT_BPS}`);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * A source of these counters, read at the window's edges; dirs() is asked at each read (a restarted container has a new
 * group).
 */
function cgroupIoSource(dirs, describe) {
  return { describe, read: () => readCgroupIo(typeof dirs === 'function' ? dirs() || {} : dirs) };
}

const nonNegative = (x) => (x === null || x < 0 ? null : x);

/**
 * node.io: the counters' rise between two edge readings, with the requests completed between the same instants.
 * @param {object} a reading at the start edge
 * @param {object} b reading at the end edge
 * @param {number} requestsOk requests completed between a.at_ms and b.at_ms
 */
function ioBetween(a, b, requestsOk, describe) {
  if (!a || !b) return null;
  const d = (k) => (a[k] === null || b[k] === null ? null : b[k] - a[k]);
  return {
    source: describe,
    seconds: round((b.at_ms - a.at_ms) / 1000, 3),
    requests_ok: requestsOk,
    read_bytes: d('read_bytes'),
    write_bytes: d('write_bytes'),
    read_ops: d('read_ops'),
    write_ops: d('write_ops'),
    major_faults: d('major_faults'),
    // a process that exited between the edges took its bytes with it: a fall is no figure
    ...(a.write_bytes_dirtied !== undefined ? { write_bytes_dirtied: nonNegative(d('write_bytes_dirtied')) } : {}),
  };
}

/**
 * Figures of disk and memory per request, from node.io (and the node's mean memory, and throughput).
 * @returns {object} disk_read_bytes_per_request, disk_write_bytes_per_request, disk_read_iops,
 *   major_faults_per_request, memory_bytes_per_rps; each null when its counter is missing
 */
function ioFigures(node, rps) {
  const io = node.io;
  const per = (x) => (io && x !== null && io.requests_ok > 0 ? x / io.requests_ok : null);
  return {
    disk_read_bytes_per_request: round(per(io ? io.read_bytes : null), 3),
    disk_write_bytes_per_request: round(per(io ? io.write_bytes : null), 3),
    disk_read_iops: io && io.read_ops !== null && io.seconds > 0 ? round(io.read_ops / io.seconds, 3) : null,
    major_faults_per_request: round(per(io ? io.major_faults : null), 6),
    ...(io && io.write_bytes_dirtied !== undefined
      ? { disk_write_bytes_dirtied_per_request: round(per(io.write_bytes_dirtied), 3) }
      : {}),
    memory_bytes_per_rps: node.memory_mean_bytes && rps > 0 ? Math.round(node.memory_mean_bytes / rps) : null,
  };
}

module.exports = {
  parseBlkio,
  memoryStat,
  readCgroupIo,
  cgroupDirsOfPid,
  enableIoCounting,
  cgroupIoSource,
  ioBetween,
  ioFigures,
};
