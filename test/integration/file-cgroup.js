'use strict';
// The integration runner's cgroup for each task it runs (a test file, lint,
// the unit tests): the CPU that task's processes on this host used, its
// nodes, generators and chainperf runs included (chainperf's own groups nest
// under the one it starts in), its containers not (Docker keeps them in
// groups of its own). The runner prints it beside each file's wall time: the
// suite is bound by CPU, and this says which files spend it.
//
// On cgroup v1 each task is also one entity of the cpu controller. There a
// process of the root group weighs as much as a whole group: the Docker
// engine's group, every container of every compose and swarm test, competed
// with each busy thread of the host tests alone, and under load its
// containers (a node, cAdvisor) got a sliver of a core. With a group per task,
// each task and the containers share the cores as equals.
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

/** Where each controller's group for name goes: v1 cpuacct (counts) and cpu (shares), or v2's one group. */
function groupDirs(name) {
  if (fs.existsSync(path.join(ROOT, 'cgroup.controllers'))) return { count: path.join(ROOT, ownPath(''), name) };
  const acct = ['cpuacct', 'cpu,cpuacct'].find((m) => fs.existsSync(path.join(ROOT, m, 'cpuacct.usage')));
  if (!acct) return null;
  const cpu = fs.existsSync(path.join(ROOT, 'cpu', 'cpu.shares')) && acct === 'cpuacct' ? 'cpu' : null;
  return {
    count: path.join(ROOT, acct, ownPath('cpuacct'), name),
    ...(cpu ? { share: path.join(ROOT, cpu, ownPath('cpu'), name) } : {}),
  };
}

/**
 * The groups of one runner session (TEST_CGROUPS=no or no cgroups: null): group(task) makes a task's group and
 * returns {procsFiles, cpuSeconds(), remove()}, or null when it cannot be made.
 */
function taskGroups(env = process.env) {
  if (env.TEST_CGROUPS === 'no' || process.platform !== 'linux') return null;
  const session = `chainperf-tests-${process.pid}`;
  const made = [];
  const group = (task) => {
    const dirs = groupDirs(path.join(session, task.replace(/[^\w.-]/g, '_')));
    if (!dirs) return null;
    try {
      for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
    } catch {
      return null; // not root, or a read-only cgroup filesystem
    }
    made.push(...Object.values(dirs));
    const v2 = !dirs.share && fs.existsSync(path.join(dirs.count, 'cpu.stat'));
    return {
      procsFiles: Object.values(dirs).map((d) => path.join(d, 'cgroup.procs')),
      /** CPU seconds of the task's processes, children and threads included, since the group was made. */
      cpuSeconds() {
        if (v2) {
          const line = fs.readFileSync(path.join(dirs.count, 'cpu.stat'), 'utf8').match(/usage_usec (\d+)/);
          return line ? Number(line[1]) / 1e6 : null;
        }
        return Number(fs.readFileSync(path.join(dirs.count, 'cpuacct.usage'), 'utf8')) / 1e9;
      },
      /** The processes still in the group once its task ended (something it left running): killed, their commands. */
      remove() {
        const left = new Set();
        for (const f of this.procsFiles)
          for (const p of fs.readFileSync(f, 'utf8').split('\n').filter(Boolean)) left.add(Number(p));
        const cmds = [...left].map((pid) => {
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
  /** Removes every group the session made (deepest first), once their processes are gone. */
  const removeAll = () => {
    const dirs = [...new Set([...made, ...made.map((d) => path.dirname(d))])].sort((a, b) => b.length - a.length);
    for (const d of dirs) {
      try {
        fs.rmdirSync(d);
      } catch {
        // still has a process (killed a moment ago), or a group chainperf left: it stays
      }
    }
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
