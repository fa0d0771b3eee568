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

const ROOT = '/sys/fs/cgroup';

/** This process's cgroup path for a v1 controller ('' for v2's unified hierarchy). */
function ownPath(controller) {
  for (const line of fs.readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n')) {
    const [, ctrls, p] = line.split(':');
    if (controller === '' ? ctrls === '' : ctrls.split(',').includes(controller)) return p;
  }
  return '/';
}

/** Where the group counting name's CPU goes: v1's cpuacct, or v2's one tree. */
function groupDir(name) {
  if (fs.existsSync(path.join(ROOT, 'cgroup.controllers'))) return path.join(ROOT, ownPath(''), name);
  const acct = ['cpuacct', 'cpu,cpuacct'].find((m) => fs.existsSync(path.join(ROOT, m, 'cpuacct.usage')));
  return acct ? path.join(ROOT, acct, ownPath('cpuacct'), name) : null;
}

/**
 * A cgroup v1 cpu group of its own for name with that weight, beside the root group's processes (a group nested in
 * another weighs only among its siblings); its directory, or null where there is none to make.
 */
function weighedGroup(name, shares) {
  const cpu = path.join(ROOT, 'cpu');
  if (!fs.existsSync(path.join(cpu, 'cpu.shares'))) return null;
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
 * (with shares, on cgroup v1's cpu controller too, with that weight) and returns {procsFiles, cpuSeconds(), remove()},
 * or null when it cannot be made.
 */
function taskGroups(env = process.env) {
  if (env.TEST_CGROUPS === 'no' || process.platform !== 'linux') return null;
  const session = `chainperf-tests-${process.pid}`;
  const trees = new Set(); // the session's folder under each hierarchy, and the weighed groups beside it
  const group = (task, { shares = 0 } = {}) => {
    const name = task.replace(/[^\w.-]/g, '_');
    const dir = groupDir(path.join(session, name));
    if (!dir) return null;
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch {
      return null; // not root, or a read-only cgroup filesystem
    }
    trees.add(path.dirname(dir));
    const weighed = shares ? weighedGroup(`${session}-${name}`, shares) : null;
    if (weighed) trees.add(weighed);
    const v2 = fs.existsSync(path.join(dir, 'cpu.stat')) && !fs.existsSync(path.join(dir, 'cpuacct.usage'));
    return {
      procsFiles: [dir, ...(weighed ? [weighed] : [])].map((d) => path.join(d, 'cgroup.procs')),
      /** CPU seconds of the task's processes, children and threads included, since the group was made. */
      cpuSeconds() {
        if (v2) {
          const line = fs.readFileSync(path.join(dir, 'cpu.stat'), 'utf8').match(/usage_usec (\d+)/);
          return line ? Number(line[1]) / 1e6 : null;
        }
        return Number(fs.readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1e9;
      },
      /** The processes still in the group once its task ended (something it left running): killed, their commands. */
      remove() {
        const left = new Set();
        const collect = (d) => {
          for (const p of fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
            left.add(Number(p));
          for (const e of fs.readdirSync(d, { withFileTypes: true }))
            if (e.isDirectory()) collect(path.join(d, e.name)); // a run's own groups (its node's, its generator's)
        };
        collect(dir);
        if (weighed) collect(weighed);
        const cmds = [...left].map((pid) => {
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
        return cmds;
      },
    };
  };
  /**
   * Removes the session's groups and those under them (chainperf leaves the folder its runs' groups were in), deepest
   * first; a group whose process is still exiting stays.
   */
  const removeAll = () => {
    const tree = (dir) => {
      if (!fs.existsSync(dir)) return;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) tree(path.join(dir, e.name));
      try {
        fs.rmdirSync(dir);
      } catch {
        // a process still in it
      }
    };
    for (const d of trees) tree(d);
  };
  return { group, removeAll };
}

/**
 * Spawn arguments that put the command's process in group before it starts (with no group: the command itself), so
 * everything it starts is counted from its first instruction.
 */
function inGroup(group, cmd, args) {
  if (!group) return { cmd, args, env: {} };
  const script = 'for f in $CHAINPERF_TEST_PROCS; do echo $$ > "$f" || exit 97; done; exec "$@"';
  return {
    cmd: 'sh',
    args: ['-c', script, 'sh', cmd, ...args],
    env: { CHAINPERF_TEST_PROCS: group.procsFiles.join(' ') },
  };
}

module.exports = { taskGroups, inGroup };
