// @ts-check
'use strict';
// Another process's cgroup, read on this host: a container's (its main
// process's PID from the Docker engine), for the CPU and memory of the
// containers chainperf starts beside the node (a network's nodes, a fleet's
// replicas and balancer).

const fs = require('node:fs');
const path = require('node:path');
const { cgroupVersion, mountOf } = require('./cgroup');

const ROOT = '/sys/fs/cgroup';
const read = (file) => fs.readFileSync(file, 'utf8').trim();

/**
 * The CPU and memory counters of another process's cgroup (a container's, read on this host), or null where its
 * cgroup is not found: cpu() total_s (cpuacct.usage or cpu.stat usage_usec), memoryBytes() (null without one).
 */
function cgroupOfPid(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return null;
  }
  const paths = {};
  for (const line of text.trim().split('\n')) {
    const [, ctrls, p] = line.split(':');
    for (const c of ctrls === '' ? ['unified'] : ctrls.split(',')) paths[c] = p;
  }
  const version = cgroupVersion();
  const under = (controller, key = controller) =>
    mountOf(controller) && paths[key] ? path.join(mountOf(controller), paths[key]) : null;
  const cpuDir =
    version === 1 ? under('cpuacct') : version === 2 && paths.unified ? path.join(ROOT, paths.unified) : null;
  if (!cpuDir) return null;
  const memDir = version === 1 ? under('memory') : cpuDir;
  return {
    cpu: () => {
      if (version === 1) return { total_s: Number(read(path.join(cpuDir, 'cpuacct.usage'))) / 1e9 };
      const m = /^usage_usec (\d+)/m.exec(read(path.join(cpuDir, 'cpu.stat')));
      return { total_s: Number(m && m[1]) / 1e6 };
    },
    memoryBytes: () => {
      if (!memDir) return null;
      return Number(read(path.join(memDir, version === 1 ? 'memory.usage_in_bytes' : 'memory.current')));
    },
  };
}

/**
 * cgroupOfPid for a process that may exit (a container killed in a window): its counters keep their last reading
 * once its cgroup is gone (memory then reads 0), so a sum over a window stays whole. Null where no cgroup is found.
 */
function lastingCgroupOfPid(pid) {
  const g = cgroupOfPid(pid);
  if (!g) return null;
  const last = { total_s: 0, memory: 0 };
  return {
    cpu: () => {
      try {
        last.total_s = g.cpu().total_s;
      } catch {
        // gone: its last reading stands
      }
      return { total_s: last.total_s };
    },
    memoryBytes: () => {
      try {
        last.memory = g.memoryBytes() || 0;
      } catch {
        last.memory = 0;
      }
      return last.memory;
    },
  };
}

module.exports = { cgroupOfPid, lastingCgroupOfPid };
