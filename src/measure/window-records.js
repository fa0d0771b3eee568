'use strict';
// What one measured window says of the node and of the load generator, for
// run.json: the node's CPU over the span its requests are counted over, the
// cross-check, its disk, network and memory, and the generator's own CPU and
// workers (the Prometheus cross-check: prometheus-check.js).

const os = require('node:os');
const { mergeReplay } = require('../workload/replay');
const { mergeNamedBlocks } = require('../workload/named-blocks');
const { cpuDelta } = require('../figures');
const { findStall } = require('./stall');
const { stealBetween, cpusOf } = require('./steal');
const { ioBetween } = require('./io');
const { answeredIn, sliceStall } = require('./slices');

const cpuSum = (c) => (Number.isFinite(c.total_s) ? c.total_s : c.user_s + c.system_s);

/** Number of cpus in a cpuset list such as "1", "2-3" or "0,2-3"; 0 for null. */
const cpuCount = (list) => (list ? cpusOf(list).length : 0);

/**
 * The spans a window's counters are read over: its two edges, or each of its slices' (a window of slices, an
 * interleaved A/B pair's: m.spans, [start, end] readings each).
 */
const edgeSpans = (m) => m.spans || [[m.startEdge, m.endEdge]];

/** The sum of a counter's rises over the spans (cpuDelta of each; null where one of them is). */
function sumDeltas(spans, pick) {
  const deltas = spans.map(([a, b]) => cpuDelta(pick(a), pick(b)));
  const total = (k) =>
    deltas.some((d) => d[k] === null) ? null : Number(deltas.reduce((t, d) => t + d[k], 0).toFixed(6));
  return { user_s: total('user_s'), system_s: total('system_s'), total_s: total('total_s') };
}

/** A window of slices: what its CPU window adds, the active time and the answers that fell outside its slices. */
function sliceRecord(m, samples) {
  const { inside, outside } = answeredIn(m.spans, samples, m.w);
  const activeMs = m.spans.reduce((t, [, , x]) => t + x.to - x.from, 0); // the slices as planned: the load's time
  return { requests_ok: inside, active_ms: activeMs, slices: m.spans.length, answered_outside_slices: outside };
}

/** The node's CPU over the window, with the span its requests are counted over; cAdvisor's resources when sampled. */
async function nodeCpuOver(m, stack, samples, signal) {
  const { w, startEdge, endEdge } = m;
  if (stack.cpu.sampled) {
    // The CPU window runs between the first and last cAdvisor samples inside the planned one; its requests are counted
    // between the same instants.
    const { a, b, samples: cpuSamples } = await stack.cpu.edgesInside(w.start, w.end, signal);
    m.sampler.ticks.push(...cpuSamples.map((x) => ({ t_ms: x.at_ms, total_s: x.total_s })));
    return {
      cpu: cpuDelta(a, b),
      cpuWindow: { start_ms: a.at_ms, end_ms: b.at_ms, requests_ok: samples.okBetween(a.at_ms, b.at_ms) },
      resources: stack.cpu.resources ? await stack.cpu.resources(a.at_ms, b.at_ms, signal) : null,
    };
  }
  // Read at the edges: the requests are counted between the instants of the two reads (a late read must not
  // leave the CPU and the requests over different spans). Attach reads refreshes at the planned edges.
  if (m.spans)
    return {
      cpu: sumDeltas(m.spans, (x) => x.cpu),
      cpuWindow: { start_ms: startEdge.at_ms, end_ms: endEdge.at_ms, ...sliceRecord(m, samples) },
      resources: null,
    };
  const cpuWindow =
    startEdge.at_ms !== undefined
      ? {
          start_ms: startEdge.at_ms,
          end_ms: endEdge.at_ms,
          requests_ok: samples.okBetween(startEdge.at_ms, endEdge.at_ms),
        }
      : null;
  return { cpu: cpuDelta(startEdge.cpu, endEdge.cpu), cpuWindow, resources: null };
}

/** The second CPU source over the same window; compared as rates when the first one is sampled. */
function addCpuCheck(node, m, stack, cpu, cpuWindow) {
  const { startEdge, endEdge } = m;
  if (!startEdge.check || !endEdge.check) return;
  node.cpu_check = {
    kind: stack.cpuCheck.kind,
    describe: stack.cpuCheck.describe,
    ...(m.spans ? sumDeltas(m.spans, (x) => x.check) : cpuDelta(startEdge.check, endEdge.check)), // over the same spans
  };
  if (stack.cpu.sampled) {
    // Read at other instants than the cAdvisor samples: compared as CPU seconds per second.
    node.cpu_check.start_ms = startEdge.check.at_ms;
    node.cpu_check.end_ms = endEdge.check.at_ms;
    node.cpu_check.seconds = (endEdge.check.at_ms - startEdge.check.at_ms) / 1000;
    node.cpu_check.cpu_s_per_s = Number((node.cpu_check.total_s / node.cpu_check.seconds).toFixed(6));
    node.cpu_s_per_s = Number((cpu.total_s / ((cpuWindow.end_ms - cpuWindow.start_ms) / 1000)).toFixed(6));
  }
}

/** Disk, network, block I/O and memory of the node over the window. */
function addNodeResources(node, m, stack, samples, resources) {
  const { startEdge, endEdge, sampler } = m;
  if (resources) {
    for (const k of ['disk_read_bytes', 'disk_write_bytes', 'network_rx_bytes', 'network_tx_bytes'])
      node[k] = resources[k];
    if (resources.swap_peak_bytes !== null && resources.swap_peak_bytes !== undefined)
      node.swap_peak_bytes = resources.swap_peak_bytes; // cAdvisor's container_memory_swap, its peak
    sampler.memory.push(...resources.memory);
  }
  const spans = edgeSpans(m);
  if (startEdge.io && endEdge.io) {
    node.disk_read_bytes = sum(spans.map(([a, b]) => b.io.read_bytes - a.io.read_bytes));
    node.disk_write_bytes = sum(spans.map(([a, b]) => b.io.write_bytes - a.io.write_bytes));
  }
  if (startEdge.cg && endEdge.cg)
    node.io = sumIo(
      // a slice's requests over the slice as planned (slices.js spansOf), a window's between its readings
      spans.map(([a, b, x]) =>
        ioBetween(
          a.cg,
          b.cg,
          x ? samples.okBetween(x.from, x.to) : samples.okBetween(a.cg.at_ms, b.cg.at_ms),
          stack.ioCounters.describe,
        ),
      ),
    );
  if (sampler.memory.length) {
    const b = sampler.memory.map((x) => x.bytes);
    node.memory_peak_bytes = Math.max(...b);
    node.memory_mean_bytes = Math.round(b.reduce((x, y) => x + y, 0) / b.length);
  }
}

/** node.io over several spans (a window of slices): each counter's rises, seconds and requests added up. */
function sumIo(parts) {
  if (parts.length === 1) return parts[0];
  const out = { ...parts[0] };
  for (const k of ['seconds', 'requests_ok', 'read_bytes', 'write_bytes', 'read_ops', 'write_ops', 'major_faults'])
    out[k] = parts.some((p) => p[k] === null) ? null : parts.reduce((t, p) => t + p[k], 0);
  out.seconds = out.seconds === null ? null : Number(out.seconds.toFixed(3));
  return out;
}

/**
 * REPLICAS: each replica's share of the window; with a FAULT, what the clients saw after the kill too (their failed
 * requests from the second of the kill on): HAProxy does not log a request it drops without an answer, which is what a
 * client on a kept-alive connection to the killed replica gets.
 */
function withClientsFault(fleet, series) {
  if (!fleet.fault) return fleet;
  const from = Math.floor(fleet.fault.at_ms / 1000) * 1000;
  const after = series.filter((p) => p.t_ms >= from);
  const failed = after.filter((p) => p.failed > 0);
  const clients = {
    client_errors_after: after.reduce((n, p) => n + p.failed, 0),
    client_last_error_second_after: failed.length ? (failed[failed.length - 1].t_ms - from) / 1000 : null,
  };
  return { ...fleet, fault: { ...fleet.fault, ...clients } };
}

/** NETWORK_NODES: the node's peer-to-peer bytes per request answered in the window. */
function networkPerRequest(net, requestsOk) {
  if (net.p2p_in_bytes === undefined || !requestsOk) return net;
  return {
    ...net,
    p2p_in_bytes_per_request: Number((net.p2p_in_bytes / requestsOk).toFixed(2)),
    p2p_out_bytes_per_request: Number((net.p2p_out_bytes / requestsOk).toFixed(2)),
  };
}

function nodeRecord(m, stack, { cpu, cpuWindow, resources }, samples) {
  const node = {
    cpu_source: {
      kind: stack.cpu.kind,
      describe: stack.cpu.describe,
      ...(stack.cpu.periodMs ? { refresh_ms: stack.cpu.periodMs } : {}),
    },
    cpu_user_s: cpu.user_s,
    cpu_system_s: cpu.system_s,
    cpu_total_s: cpu.total_s,
  };
  if (cpuWindow) node.cpu_window = cpuWindow;
  if (m.explained.per_core) node.per_core = m.explained.per_core;
  if (m.explained.network) node.network = networkPerRequest(m.explained.network, samples.ok);
  if (m.explained.fleet) node.fleet = withClientsFault(m.explained.fleet, samples.series); // REPLICAS
  const steal = stealBetween(m.stealStart, m.stealEnd, m.stealCpus);
  if (steal) node.steal = steal;
  addCpuCheck(node, m, stack, cpu, cpuWindow);
  addNodeResources(node, m, stack, samples, resources);
  return node;
}

/**
 * On a network that moves: of the answers that named the head (eth_blockNumber, eth_getBlockByNumber('latest')), the
 * stale ones (older than the network's head when they arrived) and the ones gone backwards (lower than a block the
 * same client had already seen: a virtual user, or a lean engine's connection), into node.network.keep_up.
 */
function addNamedAnswers(node, stack, snapshots, w) {
  const named = mergeNamedBlocks(snapshots);
  const keepUp = node.network && node.network.keep_up;
  if (!named || !keepUp || !stack.network.heads) return;
  keepUp.stale_answers = {
    ...stack.network.heads.staleAnswers(named.answers, w.start, w.end),
    ...(named.dropped ? { not_kept: named.dropped } : {}),
  };
  keepUp.backwards_answers = {
    count: named.backwards,
    of: named.of,
    share: named.of ? Number((named.backwards / named.of).toFixed(4)) : null,
    source:
      "answers naming a block lower than one the same client (a virtual user; the lean engine's connection) had already seen",
  };
}

/** The load generator's own record: its workers, its CPU on its cores, replay misses, a stall. */
function generatorRecord(m, { stack, s }, samples, snapshots) {
  const { w, genStart, genEnd } = m;
  const genCpu = genStart && genEnd ? Number((cpuSum(genEnd) - cpuSum(genStart)).toFixed(6)) : null;
  const answered = samples.ok + samples.failed;
  const generator = {
    cpus: stack.generatorCpus,
    workers: samples.workers,
    before_window: samples.before_window,
    in_flight_at_start: samples.in_flight_at_start,
    in_flight_at_end: samples.in_flight_at_end,
    skipped: samples.skipped,
    cores: stack.generatorCores || cpuCount(stack.generatorCpus) || os.cpus().length,
    cpu_s: genCpu,
    cpu_us_per_request: genCpu !== null && answered ? Number(((genCpu * 1e6) / answered).toFixed(1)) : null,
  };
  const replay = mergeReplay(snapshots);
  if (replay) generator.replay = replay;
  // a window of slices stalls in its own slices (the other side's between them are not its window)
  const stall = m.spans ? sliceStall(samples, m.spans, s.STALL_S) : findStall(samples, w, s.STALL_S);
  if (stall) generator.stall = stall;
  // busy over the time it sent (a window of slices: its slices; it idles through the other side's)
  if (genCpu !== null)
    generator.cpu_utilization = Number(
      (genCpu / ((w.active_ms || w.end - w.start) / 1000) / generator.cores).toFixed(3),
    );
  generator.processes = (m.generatorRuns || []).length || 1;
  if (generator.processes > 1) generator.generators = perGenerator(m, snapshots);
  return generator;
}

/**
 * GENERATORS > 1: each generator's load (what it was given, what completed in the window from its own workers'
 * samples) and its CPU from its own cgroup, with its busy share (CPU over the window per core it is pinned to).
 */
function perGenerator(m, snapshots) {
  const seconds = (m.w.end - m.w.start) / 1000;
  return m.generatorRuns.map((r, i) => {
    const mine = snapshots.filter((x) => (x.generator || 0) === r.index);
    let answered = 0;
    for (const snap of mine)
      for (const byMethod of Object.values(snap.seconds))
        for (const rec of Object.values(byMethod)) answered += rec.lat.length + sum(Object.values(rec.failed));
    const a = m.gensStart && m.gensStart[i];
    const b = m.gensEnd && m.gensEnd[i];
    const cpu = a && b ? Number((cpuSum(b) - cpuSum(a)).toFixed(6)) : null;
    const cores = cpuCount(r.cpus);
    return {
      index: r.index,
      ...(r.node ? { node: r.node } : {}), // SWARM_GENERATOR_NODES: the swarm node it ran on
      cpus: r.cpus,
      offered: r.offered,
      workers: mine.length,
      requests: answered,
      requests_per_s: Number((answered / seconds).toFixed(1)),
      cpu_s: cpu,
      cpu_us_per_request: cpu !== null && answered ? Number(((cpu * 1e6) / answered).toFixed(1)) : null,
      cpu_utilization: cpu !== null && cores ? Number((cpu / seconds / cores).toFixed(3)) : null,
    };
  });
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

module.exports = {
  addNamedAnswers,
  withClientsFault,
  cpuSum,
  cpuCount,
  nodeCpuOver,
  addCpuCheck,
  addNodeResources,
  nodeRecord,
  generatorRecord,
  perGenerator,
};
