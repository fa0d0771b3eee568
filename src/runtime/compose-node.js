'use strict';
// The node container of a compose run once it is up: watched for an exit, a
// restart or an engine that stops answering; described for run.json; and its
// CPU cross-check (the Docker engine's own stats) and block I/O counters.

const docker = require('../platform/docker');
const { cadvisorSource } = require('../measure/cadvisor');
const { sleep } = require('../util/time');
const { queryClient } = require('./prometheus');
const { blockDeviceOf } = require('./limits');
const { cgroupDirsOfPid, enableIoCounting, cgroupIoSource } = require('../measure/io');
const { engineAnswers } = require('./engine-lost');

/** Failed looks at the node container in a row (1 s apart) before an engine that does not answer ends the run. */
const ENGINE_MISSES = 5;

/** What an inspection of the node container says: null while it runs as it did, else how it exited or restarted. */
function nodeExitOf(info, startedAt) {
  const st = info && info.State;
  const restarted = Boolean(st && (info.RestartCount > 0 || st.StartedAt !== startedAt));
  if (st && st.Status === 'running' && !restarted) return null;
  return st
    ? { code: st.ExitCode, signal: st.OOMKilled ? 'OOM' : null, restarted, status: st.Status }
    : { code: null, signal: null, status: 'removed' };
}

/**
 * A node container that exits or restarts ends the run: stack.onNodeExit, and stack.restartNode for COLD=yes.
 * A restart is seen by the container's start time changing (a restart policy also counts RestartCount).
 */
async function watchNodeContainer(stack, containers) {
  let exitInfo = null;
  const exitListeners = [];
  let startedAt = (await docker.inspectContainer(containers.node.id)).State.StartedAt;
  let polling = false;
  let engineMisses = 0;
  let restarting = false; // COLD=yes stops and starts the node between windows: not an exit
  const report = (x) => {
    exitInfo = x;
    for (const fn of exitListeners) fn(exitInfo);
  };
  const poll = async () => {
    let info = await docker.inspectContainer(containers.node.id);
    if (info && info.State.Status !== 'running') {
      await sleep(1500); // a restart passes through "exited": look again before calling it an exit
      info = (await docker.inspectContainer(containers.node.id)) || info;
    }
    if (restarting) return;
    const gone = nodeExitOf(info, startedAt);
    if (gone) report(gone);
    engineMisses = 0;
  };
  const watch = setInterval(async () => {
    if (exitInfo || polling || restarting) return;
    polling = true;
    try {
      await poll();
    } catch {
      // the engine is busy; try again, unless it stopped answering altogether
      engineMisses++;
      if (engineMisses >= ENGINE_MISSES && !exitInfo && !(await engineAnswers()))
        report({ message: `the Docker engine stopped answering (${docker.SOCKET})` });
    } finally {
      polling = false;
    }
  }, 1000);
  stack.cleanups.push(() => clearInterval(watch)); // runs before down: leaving a container is not the node exiting
  stack.onNodeExit = (fn) => (exitInfo ? fn(exitInfo) : exitListeners.push(fn));
  // A run that failed otherwise (the engine's stats timing out on a container being killed) looks once more, with
  // time to answer, so that an exit the watch had not seen yet is the reason given.
  stack.lookForNodeExit = async () => {
    if (exitInfo || restarting) return;
    const gone = nodeExitOf(await docker.inspectContainer(containers.node.id, { timeoutMs: 30000 }), startedAt);
    if (gone && !exitInfo) report(gone);
  };
  /** Stops the node container, runs between() (COLD=yes: drop the page cache), starts it again. */
  stack.restartNode = async (between) => {
    restarting = true;
    try {
      const id = containers.node.id;
      const stop = await docker.engine('POST', `/containers/${id}/stop?t=30`, { timeoutMs: 60000 });
      if (![204, 304].includes(stop.status)) throw new Error(`cannot stop the node container: HTTP ${stop.status}`);
      await between();
      const start = await docker.engine('POST', `/containers/${id}/start`, { timeoutMs: 60000 });
      if (![204, 304].includes(start.status))
        throw new Error(`cannot start the node container again: HTTP ${start.status}`);
      startedAt = (await docker.inspectContainer(id)).State.StartedAt;
      await nodeIoCounters(stack, id); // a new process in a new cgroup
    } finally {
      restarting = false;
    }
  };
}

/** The node's record, its I/O counters, its data folder and the CPU sources of the ready stack. */
async function describeNode(stack, p, containers, promUrl) {
  if (p.limits) stack.limits = p.limits.record;
  stack.node = {
    container: containers.node.name,
    container_id: containers.node.id,
    cpus: p.nodeCpus,
    rpc_url: stack.rpcUrl,
  };
  stack.cpu = cadvisorSource(promUrl, containers.node.name);
  stack.prometheus = {
    url: promUrl,
    version: p.images.prometheus.ref,
    ...queryClient(promUrl),
  };
  // SWARM_NODE: a container on another machine, which no engine here knows: cAdvisor's figures alone
  if (containers.node.remote) {
    stack.cpuCheck = null;
    stack.node.cpus = null; // a CPU quota there (stack.swarm.node_placement), no cores of this machine
    stack.node.elsewhere = true; // nothing of this machine's (its steal time) is the node's
    return;
  }
  await nodeIoCounters(stack, containers.node.id);
  const nodeInfo = await docker.inspectContainer(containers.node.id);
  const dataMount = (nodeInfo.Mounts || []).find((x) => x.Destination === '/data');
  // the node's volume on this host: COLD=yes evicts it from the page cache
  if (dataMount) stack.nodeDataDir = dataMount.Source;
  stack.cpuCheck = dockerStatsSource(containers.node.id);
}

/** The Docker engine's data root and the disk it is on (its volumes hold the node's data). */
async function dockerDataDevice() {
  const root = await docker.dataRoot();
  return { root, device: blockDeviceOf(root) };
}

/**
 * The node container's cgroup counters of disk I/O and major faults (measure/io.js), read on this host; left unset when
 * its cgroup is not found.
 */
async function nodeIoCounters(stack, id) {
  const info = await docker.inspectContainer(id);
  const dirs = info && info.State.Pid ? cgroupDirsOfPid(info.State.Pid) : null;
  if (!dirs) return;
  if (!stack.dataDevice) stack.dataDevice = (await dockerDataDevice()).device;
  const counting = enableIoCounting(dirs.blkio, stack.dataDevice);
  stack.ioCounters = cgroupIoSource(
    { memory: dirs.memory, blkio: counting ? dirs.blkio : null },
    `cgroup of the node container (blkio.throttle.io_service_bytes/io_serviced, memory.stat total_pgmajfault)`,
  );
}

/** The Docker engine's own CPU counters for the node container: the cross-check of cAdvisor's. */
function dockerStatsSource(id) {
  return {
    kind: 'docker',
    describe: `Docker engine stats of container ${id.slice(0, 12)} (cpu_usage: total, usermode, kernelmode; ns)`,
    split: true,
    read: () => docker.containerCpu(id),
  };
}

module.exports = {
  ENGINE_MISSES,
  nodeExitOf,
  watchNodeContainer,
  describeNode,
  dockerDataDevice,
  nodeIoCounters,
  dockerStatsSource,
};
