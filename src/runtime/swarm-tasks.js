'use strict';
// A deployed stack's tasks: the wait until each service's container runs
// (on this engine, or on the swarm node it is placed on), and for those on
// nodes whose engine chainperf does not reach (SWARM_NODE: the node, a
// fleet's replicas), their exits, watched through the swarm's managers, and
// FAULT's kill, carried out by scaling the replica's service to 0
// (swarm-render.js gives that service SIGKILL as its stop signal).

const swarm = require('../platform/swarm');
const { sleep } = require('../util/time');

/** What the swarm says of a service's latest task: its state and message (why a task waits, e.g. for resources). */
async function lastTaskState(name, svc) {
  const [t] = await swarm.serviceTasks(name, svc);
  if (!t) return 'no task';
  const why = t.Status.Err || t.Status.Message;
  return `its latest task ${t.Status.State}${why ? `: ${why}` : ''}`;
}

/**
 * A task whose container the engine failed to start (the swarm executor's "starting container failed", e.g. a mount
 * it could not make): the engine's fault before the service's program ever ran, which a new task may get past.
 */
const neverStarted = (t) => t.Status.State === 'failed' && /^starting container failed/.test(t.Status.Err || '');

/**
 * The retries of a stack's tasks that never started: the first such task of a service gets a new one (the service
 * updated with force: its services restart nothing, swarm-render.js), with a warning; any other failed task, or a
 * second one that never started, is the error. skipped: the ids of the tasks replaced, for the waits to pass over;
 * warnings: the run's, told of each retry.
 */
function taskRetries(stackName, { log, warnings }) {
  const retried = new Set();
  const skipped = new Set();
  return {
    skipped,
    async failed(svc, t, where = '') {
      const why = t.Status.Err || t.Status.Message;
      if (!neverStarted(t) || retried.has(svc))
        throw new Error(`swarm task of ${svc}${where} ${t.Status.State}: ${why}`);
      retried.add(svc);
      skipped.add(t.ID);
      const w = `the engine failed to start the container of ${svc}${where} (${why}); it was given a new task, once, before any window`;
      if (warnings) warnings.push(w); // for the report (run.js)
      if (log) log(`warning: ${w}`);
      await swarm.forceUpdate(stackName, svc);
    },
  };
}

/**
 * Waits until each service has a running container on this engine; a task that fails ends the wait with its error
 * (one that never started is given a new task once: taskRetries).
 */
async function runningContainers(name, services, { timeoutS, signal, log, warnings }) {
  const deadline = Date.now() + timeoutS * 1000;
  const containers = {};
  const retries = taskRetries(name, { log, warnings });
  while (Object.keys(containers).length < services.length) {
    for (const svc of services.filter((x) => !containers[x])) {
      const running = (await swarm.stackContainers(name, svc)).find((c) => c.State === 'running');
      if (running) {
        containers[svc] = { id: running.Id, name: running.Names[0].replace(/^\//, '') };
        continue;
      }
      const failed = (await swarm.serviceTasks(name, svc)).find(
        (t) => ['failed', 'rejected'].includes(t.Status.State) && !retries.skipped.has(t.ID),
      );
      if (failed) await retries.failed(svc, failed);
    }
    if (Date.now() > deadline) {
      const missing = services.filter((x) => !containers[x]);
      const states = await Promise.all(missing.map((svc) => lastTaskState(name, svc)));
      throw new Error(
        `swarm: no running container of ${missing.map((svc, i) => `${svc} (${states[i]})`).join(', ')} in ${timeoutS} s`,
      );
    }
    await sleep(500, signal);
  }
  return containers;
}

/**
 * Waits until a service's task (the node's, a replica's) runs on the swarm node it is placed on; its container as the
 * swarm names it (<stack>_<service>.<slot>.<task>, the name cAdvisor labels its series with) and its id there.
 */
async function remoteContainer(stackName, svc, place, { timeoutS, signal, log, warnings }) {
  const deadline = Date.now() + timeoutS * 1000;
  const retries = taskRetries(stackName, { log, warnings });
  for (;;) {
    const t = (await swarm.serviceTasks(stackName, svc)).find((x) => !retries.skipped.has(x.ID));
    if (t && t.Status.State === 'running' && t.NodeID === place.id)
      return {
        id: t.Status.ContainerStatus.ContainerID,
        name: `${stackName}_${svc}.${t.Slot}.${t.ID}`,
        task: t.ID,
        service: svc,
        hostname: place.hostname,
        addr: place.addr,
        remote: true,
      };
    if (t && ['failed', 'rejected', 'complete', 'shutdown'].includes(t.Status.State))
      await retries.failed(svc, t, ` on ${place.hostname}`);
    if (Date.now() > deadline)
      throw new Error(
        `swarm: the ${svc} service has no running task on ${place.hostname} in ${timeoutS} s (${t ? `its latest task ${t.Status.State}: ${t.Status.Err || t.Status.Message}` : 'no task'})`,
      );
    await sleep(500, signal);
  }
}

/**
 * FAULT=kill-replica on a placed replica, whose engine chainperf does not reach: its service scaled to 0 through the
 * swarm's managers (the swarm node then stops its container with the service's stop signal, SIGKILL: swarm-render.js),
 * its task looked at every 100 ms until it stops; gone with when the kill was ordered and when the swarm node running
 * it reported the task stopped (that node's clock), or, when the managers had already removed the task, when it was
 * first seen gone (the window's record then places the kill between the two by HAProxy's access log).
 */
async function killPlaced(stackName, { service, task, hostname }, fireGone, { timeoutMs = 30000 } = {}) {
  const ordered = Date.now();
  await swarm.scaleService(stackName, service, 0);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = (await swarm.serviceTasks(stackName, service)).find((x) => x.ID === task);
    if (taskExitOf(t)) {
      // the managers hold a stopped task a moment, then remove it (its desired state after scaling is "remove")
      const reported = t ? Date.parse(t.Status.Timestamp) : NaN;
      const at = Number.isFinite(reported)
        ? `when ${hostname} reported its task stopped, by its clock`
        : `when the managers were first seen without its task (looked at every 100 ms), which ${hostname} had stopped`;
      const reportedMs = Number.isFinite(reported) ? reported : Date.now();
      return fireGone({
        ordered_ms: ordered,
        reported_ms: reportedMs,
        at_ms: reportedMs, // until the window's record places it by the access log (fleet-records.js)
        how: `its service scaled to 0 through the swarm's managers, its container stopped by ${hostname} with SIGKILL (the service's stop signal); at_ms: the last response it served in HAProxy's access log before reported_ms (the kill landed after it), or ordered_ms when it served none; reported_ms: ${at}`,
      });
    }
    if (Date.now() > deadline)
      throw new Error(
        `the ${service} service was scaled to 0, but its task on ${hostname} still runs after ${timeoutMs / 1000} s`,
      );
    await sleep(100);
  }
}

/** The remote task's state as an exit (nodeExitOf's shape), or null while it runs. */
function taskExitOf(t) {
  if (t && t.Status.State === 'running') return null;
  if (!t) return { code: null, signal: null, status: 'removed' };
  const code = t.Status.ContainerStatus ? t.Status.ContainerStatus.ExitCode : null;
  return { code: code === undefined ? null : code, signal: null, status: t.Status.State };
}

/**
 * Containers on other swarm nodes (a fleet's replicas), their tasks looked at every second through the swarm's
 * managers: onExit(container, exit) once for each one that stops running. Returns the stop of the watch.
 */
function watchRemoteTasks(stackName, containers, onExit) {
  let polling = false;
  const timer = setInterval(async () => {
    if (polling) return;
    polling = true;
    try {
      for (const c of containers.filter((x) => !x.exited)) {
        const gone = taskExitOf((await swarm.serviceTasks(stackName, c.service)).find((x) => x.ID === c.task));
        if (gone) {
          c.exited = true;
          onExit(c, gone);
        }
      }
    } catch {
      // a manager busy for a moment: look again
    } finally {
      polling = false;
    }
  }, 1000);
  return () => clearInterval(timer);
}

/** The remote node's task watched through the swarm every second: one that stops running ends the run. */
function watchRemoteNode(stack, stackName, container) {
  let exitInfo = null;
  const listeners = [];
  const stop = watchRemoteTasks(stackName, [{ ...container }], (_, gone) => {
    exitInfo = gone;
    for (const fn of listeners) fn(gone);
  });
  stack.cleanups.push(stop); // before the stack goes: its removal is not the node exiting
  stack.onNodeExit = (fn) => (exitInfo ? fn(exitInfo) : listeners.push(fn));
  /** For the readiness checks: why the node is gone, or null. */
  return async () => {
    const t = (await swarm.serviceTasks(stackName, 'node')).find((x) => x.ID === container.task);
    const gone = taskExitOf(t);
    return gone
      ? `the node's task on ${container.hostname} stopped while the stack was starting (${gone.status}, exit code ${gone.code}); see node.log`
      : null;
  };
}

module.exports = {
  runningContainers,
  remoteContainer,
  killPlaced,
  watchRemoteTasks,
  watchRemoteNode,
  taskExitOf,
};
