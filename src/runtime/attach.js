// @ts-check
'use strict';
// The attach runtime: nothing is started. The node is already running; its
// RPC endpoint and a CPU source (a PID on this host or its metrics endpoint)
// are given. Nothing is torn down either; the node is only watched, so that
// its end stops the run at once (runtime/node-watch.js). With REPLICA_METRICS,
// RPC_URL is a fleet's balancer and the replicas are read through their
// metrics endpoints (attach-fleet.js).

const { rpcCall } = require('../util/rpc');
const { pidSource, metricsSource } = require('../measure/cpu');
const { watchAttachedNode } = require('./node-watch');
const { attachedReplicas, fleetCpuSource, attachFleetHooks } = require('./attach-fleet');
const clients = require('../clients');
const chains = require('../chains');

/**
 * @param {import('../contracts').Scenario} s
 * @param {{signal?: AbortSignal, rpc?: Function}} ctx rpc: rpcCall, or one that retries transient failures
 * @returns {Promise<import('../contracts').Stack>}
 */
async function startAttach(s, { signal, rpc = rpcCall }) {
  let version = 'unknown';
  const chain = chains[s.CHAIN];
  try {
    version = chain.clientVersion
      ? await chain.clientVersion(s.RPC_URL, { signal, rpc })
      : await rpc(s.RPC_URL, 'web3_clientVersion', [], { signal, timeoutMs: 10000 });
  } catch (err) {
    throw new Error(
      `RPC_URL does not answer ${chain.clientVersion ? 'system_name/system_version' : 'web3_clientVersion'}: ${err.message}`,
    );
  }
  const usePid = s.CPU_SOURCE === 'pid' || (s.CPU_SOURCE === 'auto' && s.NODE_PID);
  const metrics = clients[s.CLIENT].metrics;
  const replicas = s.REPLICA_METRICS ? attachedReplicas(s.REPLICA_METRICS, metrics) : null;
  const cpu = replicas
    ? fleetCpuSource(replicas)
    : usePid
      ? pidSource(s.NODE_PID)
      : metricsSource(s.METRICS_URL, metrics.cpu);
  if (usePid) await cpu.read(); // fails now, with the reason, when the PID is not there
  const listeners = [];
  let goneInfo = null;
  // The run must stop (and its load with it) as soon as the node is gone, not at the window's end.
  const stopWatching = watchAttachedNode(
    {
      pid: usePid ? s.NODE_PID : null,
      metricsUrl: s.METRICS_URL || null,
      rpcUrl: s.RPC_URL.replace(/^ws(s?):/, 'http$1:'),
    },
    (info) => {
      goneInfo = info;
      for (const fn of listeners) fn(info);
    },
  );
  return {
    runtime: 'attach',
    rpcUrl: s.RPC_URL,
    wsUrl: s.TRANSPORT === 'ws' ? s.RPC_URL : null,
    cpu,
    cpuCheck: null,
    generatorCpus: null,
    client: { name: s.CLIENT, version },
    node: { pid: s.NODE_PID || null },
    onNodeExit: (fn) => (goneInfo ? fn(goneInfo) : listeners.push(fn)),
    teardown: async () => stopWatching(),
    ...(replicas
      ? {
          fleet: attachFleetHooks(replicas, cpu, { requestsMetric: metrics.requests, cpuMetric: metrics.cpu }),
          node: { pid: null, replicas: replicas.map((r) => ({ name: r.name, pid: null })) },
        }
      : {}),
  };
}

module.exports = { startAttach };
