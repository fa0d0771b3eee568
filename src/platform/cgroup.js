'use strict';
// Control groups for the processes chainperf starts: the node in one, the
// load generator in another. A cgroup pins its processes to cores (cpuset)
// and counts their CPU time exactly, children and threads included, which
// /proc/PID/stat (10 ms ticks, one process) cannot.
//
// cgroup v1 (separate cpuacct, cpuset and memory hierarchies) is what these
// machines have. On cgroup v2 the group counts CPU (cpu.stat) without any
// controller enabled; pinning then falls back to taskset.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = '/sys/fs/cgroup';

function cgroupVersion() {
  if (fs.existsSync(path.join(ROOT, 'cgroup.controllers'))) return 2;
  if (fs.existsSync(path.join(ROOT, 'cpuacct', 'cpuacct.usage'))) return 1;
  return 0;
}

/** This process's own cgroup path for a v1 controller (or v2 when controller is ''). */
function ownPath(controller) {
  const lines = fs.readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  for (const line of lines) {
    const [, ctrls, p] = line.split(':');
    if (controller === '' ? ctrls === '' : ctrls.split(',').includes(controller)) return p;
  }
  return '/';
}

/** Where controller's hierarchy is mounted (v1 may co-mount cpu,cpuacct). */
function mountOf(controller) {
  for (const name of [controller, `cpu,${controller}`, `${controller},cpu`]) {
    if (fs.existsSync(path.join(ROOT, name))) return path.join(ROOT, name);
  }
  return null;
}

const read = (file) => fs.readFileSync(file, 'utf8').trim();

/** Creates dir under parent, v1 cpuset needing cpus and mems set before tasks can join. */
function mkdirCpuset(dir) {
  if (fs.existsSync(dir)) return;
  mkdirCpuset(path.dirname(dir));
  fs.mkdirSync(dir);
  const parent = path.dirname(dir);
  fs.writeFileSync(path.join(dir, 'cpuset.mems'), read(path.join(parent, 'cpuset.mems')));
  fs.writeFileSync(path.join(dir, 'cpuset.cpus'), read(path.join(parent, 'cpuset.cpus')));
}

class Cgroup {
  /**
   * @param {string} name e.g. "chainperf/<run-id>/node"
   * @param {{cpus?: string, countOnly?: boolean}} opts cpus in cpuset list syntax ("0", "0-1"); countOnly: a group
   *   that only counts CPU (v1: cpuacct alone, no memory, block I/O or cpuset group)
   */
  constructor(name, { cpus, countOnly = false } = {}) {
    this.version = cgroupVersion();
    this.name = name;
    this.dirs = []; // every directory we created, deepest last
    this.pinned = false;
    if (this.version === 1) {
      this.cpuacct = path.join(mountOf('cpuacct'), ownPath('cpuacct'), name);
      fs.mkdirSync(this.cpuacct, { recursive: true });
      this.dirs.push(this.cpuacct);
      if (countOnly) return;
      const mem = mountOf('memory');
      if (mem) {
        this.memory = path.join(mem, ownPath('memory'), name);
        fs.mkdirSync(this.memory, { recursive: true });
        this.dirs.push(this.memory);
      }
      const blkio = mountOf('blkio'); // block I/O counters, and throttle rules (DISK_* keys)
      if (blkio) {
        this.blkio = path.join(blkio, ownPath('blkio'), name);
        fs.mkdirSync(this.blkio, { recursive: true });
        this.dirs.push(this.blkio);
      }
      const cs = mountOf('cpuset');
      if (cs && cpus) {
        this.cpuset = path.join(cs, ownPath('cpuset'), name);
        mkdirCpuset(this.cpuset);
        fs.writeFileSync(path.join(this.cpuset, 'cpuset.cpus'), cpus);
        this.dirs.push(this.cpuset);
        this.pinned = true;
      }
    } else if (this.version === 2) {
      this.unified = path.join(ROOT, ownPath(''), name);
      fs.mkdirSync(this.unified, { recursive: true });
      this.dirs.push(this.unified);
    } else {
      throw new Error('no cgroup filesystem at /sys/fs/cgroup');
    }
  }

  /** The files a starting process writes its PID into to join this group. */
  procsFiles() {
    return this.dirs.map((d) => path.join(d, 'cgroup.procs'));
  }

  /** CPU seconds used by the group's processes since it was created.
   * @returns {{user_s: number, system_s: number, total_s: number}}
   */
  cpu() {
    // The total is the scheduler's exact runtime (cpuacct.usage, cpu.stat usage_usec). The user/system split
    // comes from the kernel's tick-sampled counters, which over a few seconds can miss the total by several
    // percent either way (measured here: -21% to +10% over 8 s windows at low load), so it is only a split.
    if (this.version === 1) {
      return {
        user_s: Number(read(path.join(this.cpuacct, 'cpuacct.usage_user'))) / 1e9,
        system_s: Number(read(path.join(this.cpuacct, 'cpuacct.usage_sys'))) / 1e9,
        total_s: Number(read(path.join(this.cpuacct, 'cpuacct.usage'))) / 1e9,
      };
    }
    const stat = Object.fromEntries(
      read(path.join(this.unified, 'cpu.stat'))
        .split('\n')
        .map((l) => l.split(' ')),
    );
    return {
      user_s: Number(stat.user_usec) / 1e6,
      system_s: Number(stat.system_usec) / 1e6,
      total_s: Number(stat.usage_usec) / 1e6,
    };
  }

  /** Memory in bytes now, or null where the memory controller is not available. */
  memoryBytes() {
    try {
      if (this.version === 1 && this.memory) return Number(read(path.join(this.memory, 'memory.usage_in_bytes')));
      if (this.version === 2) return Number(read(path.join(this.unified, 'memory.current')));
    } catch {
      // memory controller not enabled for this group
    }
    return null;
  }

  pids() {
    const pids = new Set();
    for (const f of this.procsFiles()) {
      try {
        for (const p of read(f).split('\n')) if (p) pids.add(Number(p));
      } catch {
        // group already gone
      }
    }
    return [...pids];
  }

  /** Kills every process in the group, waits for them to go, and removes the group. */
  async destroy(timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pids = this.pids();
      if (!pids.length) break;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already exited
        }
      }
      if (Date.now() > deadline) throw new Error(`processes ${pids.join(', ')} of cgroup ${this.name} did not exit`);
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const dir of this.dirs) removeUp(dir, this.name);
  }
}

/** Removes dir and its now-empty parents that belong to name ("chainperf/<run-id>/node"). */
function removeUp(dir, name) {
  let d = dir;
  for (let i = 0; i < name.split('/').length; i++) {
    try {
      fs.rmdirSync(d);
    } catch {
      return; // not empty: a sibling group still lives there
    }
    d = path.dirname(d);
  }
}

/** Removes the group at dir and every group under it, deepest first; one that a process is still in stays. */
function removeTree(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(path.join(dir, e.name));
  try {
    fs.rmdirSync(dir);
  } catch {
    // a process still in it
  }
}

/** The pids in the group at dir and in every group under it; none for a group gone meanwhile or not readable. */
function pidsInTree(dir, into = new Set()) {
  let entries;
  try {
    for (const p of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
      into.add(Number(p));
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return into;
  }
  for (const e of entries) if (e.isDirectory()) pidsInTree(path.join(dir, e.name), into);
  return into;
}

/** Whether the group at dir or one under it holds a process. */
const hasProcesses = (dir) => pidsInTree(dir).size > 0;

/** Whether this process may create cgroups here. */
function cgroupsUsable() {
  try {
    const probe = new Cgroup(`chainperf-probe-${process.pid}`);
    for (const d of probe.dirs) fs.rmdirSync(d);
    return true;
  } catch {
    return false;
  }
}

/**
 * Spawns argv; with a group, its process joins the group before exec, so
 * every child and thread it makes is counted from the first instruction.
 */
function spawnInGroup(group, argv, opts = {}) {
  if (!group) return spawn(argv[0], argv.slice(1), opts);
  const script = 'for f in $CHAINPERF_PROCS; do echo $$ > "$f" || exit 97; done; exec "$@"';
  const env = { ...(opts.env || process.env), CHAINPERF_PROCS: group.procsFiles().join(' ') };
  return spawn('sh', ['-c', script, 'sh', ...argv], { ...opts, env });
}

/** Where the cgroups of every chainperf run on this machine live (cpuacct on v1), or null. */
function runsRoot() {
  const v = cgroupVersion();
  if (v === 1) return path.join(mountOf('cpuacct'), ownPath('cpuacct'), 'chainperf');
  if (v === 2) return path.join(ROOT, ownPath(''), 'chainperf');
  return null;
}

/** The directories of cgroup `name` (e.g. "chainperf/<run-id>") under every controller this process can see. */
function cgroupDirsNamed(name) {
  const v = cgroupVersion();
  if (v === 2) return [path.join(ROOT, ownPath(''), name)].filter((d) => fs.existsSync(d));
  if (v !== 1) return [];
  return ['cpuacct', 'memory', 'blkio', 'cpuset']
    .map((c) => mountOf(c) && path.join(mountOf(c), ownPath(c), name))
    .filter((d) => d && fs.existsSync(d));
}

/**
 * What a forced exit leaves of these groups: the command that kills their
 * processes and removes their directories (and the run's own parent), or null.
 */
function groupsLeftover(groups) {
  const live = groups.filter(Boolean);
  const dirs = live.flatMap((g) => g.dirs).filter((d) => fs.existsSync(d));
  if (!dirs.length) return null;
  const parents = [...new Set(dirs.map((d) => path.dirname(d)))];
  const procs = dirs.map((d) => path.join(d, 'cgroup.procs')).join(' ');
  return {
    what: `cgroups ${live.map((g) => g.name).join(', ')} (${dirs.length} directories)`,
    cgroups: dirs,
    command: `kill -9 $(cat ${procs}) 2>/dev/null; sleep 1; rmdir ${dirs.join(' ')}; rmdir ${parents.join(' ')}`,
  };
}

module.exports = {
  Cgroup,
  pidsInTree,
  hasProcesses,
  ownPath,
  mountOf,
  cgroupVersion,
  cgroupsUsable,
  spawnInGroup,
  runsRoot,
  groupsLeftover,
  cgroupDirsNamed,
  removeTree,
};
