'use strict';
// What a reader of a run's figures must know, as warnings in its report: the
// window's requests, the generator's cores and load, a flaky endpoint, the
// chain family's own warnings, a CPU cross-check that disagrees.

const os = require('node:os');
const chains = require('../chains');

/** Things a reader of the figures must know. */
function addWarnings(run, s, samples) {
  const w = run.warnings;
  if (samples.before_window === 0)
    w.push('the load generator completed no request before the window opened: the window may start with idle time');
  if (samples.ok === 0) w.push('no request succeeded in the window: CPU time per request is not defined');
  if (samples.failed > 0) w.push(`${samples.failed} requests failed in the window (see Errors seen)`);
  if (run.sync && run.sync.settle && !run.sync.settle.settled)
    w.push(
      `after its sync the node was still busy (${run.sync.settle.cores_last} cores) when SYNC_TIMEOUT_S ran out: the window measured it with the work the sync left (run.json sync.settle)`,
    );
  w.push(...settlingWarnings(run));
  if (run.retries && run.retries.calls > 0)
    w.push(
      `${run.retries.calls} calls before the window (${Object.keys(run.retries.by_phase).join(', ')}) failed for a transient reason (${Object.keys(run.retries.by_reason).join(', ')}) and were tried again (run.json retries): the endpoint is flaky`,
    );
  const writes = run.figures && run.figures.writes;
  if (writes && writes.failed > 0)
    w.push(`${writes.failed} transactions failed in the window (see figures.writes.errors)`);
  w.push(...generatorWarnings(run, s, samples));
  if (
    run.node.cpu_source &&
    run.node.cpu_source.kind === 'cadvisor' &&
    run.node.disk_read_bytes === 0 &&
    run.node.disk_write_bytes === 0
  ) {
    w.push(
      "the node container's blkio counters did not move: on cgroup v1 some kernels count block I/O only once a blkio throttle rule exists, and writes the kernel flushes later are charged to the root cgroup (see README, compose runtime)",
    );
  }
  const chain = chains[s.CHAIN];
  if (chain && chain.runWarnings) w.push(...chain.runWarnings(run));
  w.push(...cpuCheckWarnings(run.node));
}

/**
 * A node still busy with the work of its start when its idle baseline, or its COLD=yes window, began; a net figure
 * that the baseline's rate made zero or negative.
 */
function settlingWarnings(run) {
  const w = [];
  if (run.idle && run.idle.settled === false)
    w.push(
      `the node was still busy with work of its own after ${run.idle.settling.length + 1} idle baselines (each lower than the one before, the last at ${(run.idle.cpu_s / run.idle.seconds).toFixed(3)} cores): the net figure subtracts a rate that was still falling (run.json idle.settling)`,
    );
  const f = run.figures || {};
  if (f.cpu_ms_per_request_net !== null && f.cpu_ms_per_request_net <= 0 && f.cpu_ms_per_request > 0)
    w.push(
      `the net CPU per request is not positive (${f.cpu_ms_per_request_net} ms): the node used no more CPU in the window than at the rate of its idle baseline, so something else than the load moved its CPU (a node starved of its cores, or busy with work of its own while idle); read the gross figure`,
    );
  const cold = run.node && run.node.cold_settle;
  if (cold && !cold.settled)
    w.push(
      `COLD=yes: the restarted node was still busy with the work of its start after ${cold.looks} looks at its CPU (the last at ${cold.cpu_s_per_s} cores, still falling): the window measured some of it (run.json node.cold_settle)`,
    );
  return w;
}

/** The generator's side: replayed requests the chain lacks, requests it could not start, its cores and its load. */
function generatorWarnings(run, s, samples) {
  const w = [];
  const replay = run.generator.replay;
  if (replay && replay.missing_on_target > 0)
    w.push(
      `${replay.missing_on_target} replayed requests asked for blocks, transactions or state this chain does not have (generator.replay.missing_on_target): answered, not counted as errors`,
    );
  if (samples.skipped > 0)
    w.push(
      `the open loop could not start ${samples.skipped} requests in the window (over 8192 unanswered at once): the node was far behind the rate offered`,
    );
  const sw = (run.stack && run.stack.swarm) || {};
  if (sw.generator_placement) {
    // SWARM_GENERATOR_NODES: unpinned containers; those on the node's machine compete with it for its cores
    const nodeHost = sw.node_placement ? sw.node_placement.node : sw.node;
    const beside = sw.generator_placement.generators.filter((g) => g.node === nodeHost).map((g) => g.index);
    if (beside.length)
      w.push(
        `load generator${beside.length === 1 ? '' : 's'} ${beside.join(', ')} ran on the node's machine (${nodeHost}), on any of its cores: ${beside.length === 1 ? 'its' : 'their'} CPU competes with the node's`,
      );
  } else if (!run.generator.cpus && s.RUNTIME !== 'attach')
    w.push(
      `the load generator shares the node's cores (CORES=${s.CORES} of ${os.cpus().length}): its CPU competes with the node's`,
    );
  const g = run.generator;
  if (g.cpu_utilization > 0.9)
    w.push(
      `the load generator used ${(g.cpu_utilization * 100).toFixed(0)}% of its ${g.cores} core(s): it, not the node, may have been the limit`,
    );
  for (const one of g.generators || [])
    if (one.cpu_utilization > 0.9)
      w.push(
        `load generator ${one.index} of ${g.processes} used ${(one.cpu_utilization * 100).toFixed(0)}% of its core(s) ${one.cpus}: it, not the node, may have been the limit`,
      );
  return w;
}

/** The second CPU source disagreeing with the first by more than 5%. */
function cpuCheckWarnings(node) {
  const check = node.cpu_check;
  if (!check || !(node.cpu_total_s > 0.5)) return [];
  const name = {
    pid: '/proc/PID/stat',
    cgroup: 'the cgroup',
    docker: "the Docker engine's stats",
    cadvisor: 'cAdvisor',
  };
  const [theirs, ours, unit] =
    check.cpu_s_per_s !== undefined
      ? [check.cpu_s_per_s, node.cpu_s_per_s, 'CPU s/s'] // read at other instants: compared as rates
      : [check.total_s, node.cpu_total_s, 's'];
  const diff = Math.abs(theirs - ours) / ours;
  if (diff > 0.05)
    return [
      `the node's CPU from ${name[check.kind] || check.kind} (${theirs.toFixed(3)} ${unit}) differs from ${name[node.cpu_source.kind] || node.cpu_source.kind}'s (${ours.toFixed(3)} ${unit}) by ${(diff * 100).toFixed(1)}%`,
    ];
  return [];
}

module.exports = { addWarnings, generatorWarnings, cpuCheckWarnings };
