'use strict';
// NETWORK_NODES in summary.md: the network around the node and what the node
// saw of it during the window (its peers, its peer-to-peer bytes, the
// transactions that reached it by gossip).

const { num } = require('./format');
const { keepUpLines, faultLines, lagCheckLines } = require('./keep-up');

/** The summary's lines for run.network and the window's node.network (none without a network). */
function networkLines(run) {
  const net = run.network;
  const w = run.node && run.node.network;
  if (!net) return [];
  const lines = [
    `- Network: ${net.nodes} more nodes of the same client beside the node (${net.protocol}; on cpus ${net.cpus}, their CPU not counted as the node's), blocks ${net.blocks}; ${net.tps} transfers per second sent through the other nodes.`,
  ];
  lines.push(...syncLines(run.sync));
  lines.push(...faultLines(run.fault));
  if (!w) return lines;
  lines.push(
    `- Peers during the window (${w.peers.source}): min ${w.peers.min}, median ${num(w.peers.median, 1)}, max ${w.peers.max} over ${w.peers.samples} reads.`,
  );
  if (w.peers_by_replica)
    lines.push(
      `- Peers of each replica (median): ${w.peers_by_replica.map((r) => `${r.replica} ${num(r.median, 1)}`).join(', ')}; each holds its own.`,
    );
  if (w.p2p_in_bytes !== undefined)
    lines.push(
      `- Peer to peer in the window: ${w.p2p_in_bytes} bytes in, ${w.p2p_out_bytes} out (${num(w.p2p_in_bytes_per_request, 2)} and ${num(w.p2p_out_bytes_per_request, 2)} per request); ${w.gossip_transactions_in} transactions received by gossip, ${w.gossip_transactions_known} of them already known; the network sent ${w.transactions_sent} and built ${w.blocks} blocks holding ${w.transactions_included}.`,
    );
  else if (w.counters_unread)
    lines.push(
      `- The node's network counters could not be read at the window's ${Object.entries(w.counters_unread)
        .map(([edge, why]) => `${edge} (${why})`)
        .join(' and ')}: its peer-to-peer bytes and gossip figures are left out.`,
    );
  if (w.network_nodes_cpu_s !== undefined)
    lines.push(
      `- The network nodes themselves (their cgroup): ${num(w.network_nodes_cpu_s, 2)} s of CPU over the window, ${w.network_nodes_memory_bytes === null ? 'memory not readable' : `${num(w.network_nodes_memory_bytes / 2 ** 20, 0)} MiB of memory at its end`}.`,
    );
  if (w.cpu_share_networking)
    lines.push(
      `- NODE_PROFILE=cpu: ${num(w.cpu_share_networking.share * 100, 1)}% of the window's ${w.cpu_share_networking.of} profile samples were in networking and gossip (stacks with a frame matching ${w.cpu_share_networking.frames}).`,
    );
  lines.push(...keepUpLines(w));
  for (const x of w.nodes_lost || [])
    lines.push(`- **Network node ${x.node} exited during the window** at ${new Date(x.at_ms).toISOString()}.`);
  return lines;
}

/** A replica HAProxy took out of rotation in the window, or put back. */
const rotationLine = (e) =>
  `- HAProxy ${e.state === 'down' ? 'took' : 'put'} ${e.replica} ${e.state === 'down' ? 'out of' : 'back in'} rotation (seen at ${new Date(e.seen_at_ms).toISOString()}${e.reason ? `; ${e.reason}` : ''}).`;

/** SYNC=network: the node's sync from its peers; with REPLICAS, each replica's, one after another. */
function syncLines(sync) {
  if (!sync || sync.mode !== 'network') return [];
  const one = (x) =>
    `from block ${x.start_head} to ${x.head} (${x.blocks} blocks) in ${num(x.seconds, 1)} s, ${x.p2p_in_bytes ?? 'n/a'} bytes received from peers, ${x.cpu_s ?? 'n/a'} s of ${x.replica ? 'its' : "the node's"} CPU${x.failed_looks ? `; ${x.failed_looks} looks at the sync not answered in time, looked at again` : ''}`;
  if (!sync.replicas) return [`- Sync from the network (SYNC=network): ${one(sync)}; ${sync.describe}.`];
  return [
    `- Sync from the network (SYNC=network), each replica in turn; ${sync.describe}:`,
    ...sync.replicas.map((x) => `  - ${x.replica}: ${one(x)}.`),
  ];
}

/** A replica lost by the window's end: its exit, or why its metrics endpoint stopped answering (REPLICA_METRICS). */
const lostLine = (x) =>
  `- **${x.replica} lost** at ${new Date(x.at_ms).toISOString()}: ${x.reason || (x.signal ? `signal ${x.signal}` : `status ${x.code}`)}.`;

/** REPLICAS in summary.md: the balancer, each replica's part of the window, the spread, a fault's recovery. */
function fleetLines(run) {
  const fl = run.fleet;
  const w = run.node && run.node.fleet;
  if (!fl) return [];
  const behind = fl.algorithm
    ? `${fl.balancer} (${fl.algorithm}, health check ${fl.health_check}; configuration in ${fl.config})`
    : fl.balancer;
  const lines = [
    `- Fleet: ${fl.replicas} replicas behind ${behind}; ${fl.per_replica}. CPU per request above is the fleet's: every replica's CPU together (Node CPU above says how it was read).`,
  ];
  if (!w) return lines;
  lines.push(
    '',
    '| replica | requests | share | CPU s | CPU ms/request | p50 / p99 ms | memory MiB | up at end |',
    '|---|---:|---:|---:|---:|---|---:|---|',
  );
  for (const r of w.replicas)
    lines.push(
      `| ${r.name} | ${r.requests ?? 'n/a'} | ${num(r.share, 3)} | ${num(r.cpu_s, 3)} | ${num(r.cpu_ms_per_request, 4)} | ${r.latency_ms ? `${r.latency_ms.p50} / ${r.latency_ms.p99}` : 'n/a'} | ${r.memory_bytes === null ? 'n/a' : num(r.memory_bytes / 2 ** 20, 0)} | ${r.up_at_end ? 'yes' : '**no**'} |`,
    );
  lines.push(
    '',
    `- ${w.balancer.cpu_s === null ? 'Balancer: not measured (not started by chainperf)' : `Balancer: ${num(w.balancer.cpu_s, 3)} s of CPU, ${num(w.balancer.cpu_ms_per_request, 4)} ms per request`}; spread between replicas: share max/min ${num(w.spread.share_max_over_min, 3)}, CPU per request max/min ${num(w.spread.cpu_per_request_max_over_min, 3)} (${w.source}).`,
  );
  lines.push(...(w.replicas_lost || []).map(lostLine));
  lines.push(...(w.rotation || []).map(rotationLine));
  lines.push(...lagCheckLines(run));
  if (w.fault)
    lines.push(
      `- **Fault ${w.fault.kind}**: ${w.fault.replica} killed at ${new Date(w.fault.at_ms).toISOString()}${w.fault.how ? ` (${w.fault.how}; ordered at ${new Date(w.fault.ordered_ms).toISOString()}, reported stopped at ${new Date(w.fault.reported_ms).toISOString()})` : ''}; after it the clients saw ${w.fault.client_errors_after ?? 'n/a'} requests fail (the last in second ${w.fault.client_last_error_second_after ?? 'n/a'} after the kill's) and HAProxy logged ${w.fault.errors_after} without a 2xx, the last ${w.fault.last_error_after_s ?? 'n/a'} s after the kill; p99 ${w.fault.p99_ms_5s_before ?? 'n/a'} ms in the 5 s before, ${w.fault.p99_ms_5s_after ?? 'n/a'} ms in the 5 s after; the other replicas served ${w.fault.served_by_others_after} requests after it, the killed one ${w.fault.served_by_killed_after}.`,
    );
  return lines;
}

module.exports = { networkLines, fleetLines };
