'use strict';
// The integration runner's cgroup for each task it runs (a test file, lint,
// the unit tests): the CPU that task's processes on this host used, its
// nodes, generators and chainperf runs included (chainperf's own groups nest
// under the one it starts in), its containers not (Docker keeps them in
// groups of its own). The runner prints it beside each file's wall time: the
// suite is bound by CPU, and this says which files spend it.
//
// And a weight of its own on cgroup v1's cpu controller for a task that
// times things in milliseconds and uses little CPU (the unit tests:
// group(task, {shares})), so that it gets the CPU as it asks for it: there
// a process of the root group weighs as much as a whole group. (Weighing up
// the Docker engine's group, whose containers, all of them one group, got a
// sliver of a core under load, was tried and taken back: the host test
// files starved in turn; docs/results.md#ci.)
//
// TEST_CGROUPS=no leaves the tasks where the runner is; without root or a
// cgroup filesystem there are no groups and no CPU column.

const fs = require('node:fs');
const path = require('node:path');
const { Cgroup, ownPath, mountOf, removeTree, pidsInTree } = require('../../src/platform/cgroup');

/**
 * A cgroup v1 cpu group of its own for name with that weight, beside the root group's processes (a group nested in
 * another weighs only among its siblings); its directory, or null where there is none to make.
 */
function weighedGroup(name, shares) {
  const cpu = mountOf('cpu');
  if (!cpu || !fs.existsSync(path.join(cpu, 'cpu.shares'))) return null;
  const dir = path.join(cpu, ownPath('cpu'), name);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'cpu.shares'), String(shares));
    return dir;
  } catch {
    return null;
  }
}

/**
 * The groups of one runner session (TEST_CGROUPS=no or no cgroups: null): group(task, {shares}) makes a task's group
 * (with shares, on cgroup v1's cpu controller too, with that weight) and returns {procsFiles(), cpuSeconds(),
 * remove()}, for platform/cgroup.js's spawnInGroup, or null when it cannot be made.
 */
function taskGroups(env = process.env) {
  if (env.TEST_CGROUPS === 'no' || process.platform !== 'linux') return null;
  const session = `chainperf-tests-${process.pid}`;
  const trees = new Set(); // the session's folder under each hierarchy, and the weighed groups beside it
  const group = (task, { shares = 0 } = {}) => {
    let counted;
    const name = task.replace(/[^\w.-]/g, '_');
    try {
      counted = new Cgroup(path.join(session, name), { countOnly: true });
    } catch {
      return null; // not root, no cgroup filesystem, or a read-only one
    }
    const dir = counted.dirs[0];
    trees.add(path.dirname(dir));
    const weighed = shares ? weighedGroup(`${session}-${name}`, shares) : null;
    if (weighed) trees.add(weighed);
    return {
      procsFiles: () => [...counted.procsFiles(), ...(weighed ? [path.join(weighed, 'cgroup.procs')] : [])],
      /** CPU seconds of the task's processes, children and threads included, since the group was made. */
      cpuSeconds: () => counted.cpu().total_s,
      /** The processes still in the group once its task ended (something it left running): killed, their commands. */
      remove() {
        const left = pidsInTree(dir);
        if (weighed) pidsInTree(weighed, left);
        return [...left].map((pid) => {
          // killed, and gone by the time the runner removes the groups (removeAll: a group still used stays)
          let cmd = '?';
          try {
            cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 160);
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
          return `${pid} ${cmd}`;
        });
      },
    };
  };
  /** Removes the session's groups and those under them (chainperf leaves the folder its runs' groups were in). */
  const removeAll = () => {
    for (const d of trees) removeTree(d);
  };
  return { group, removeAll };
}

module.exports = { taskGroups };
