'use strict';
// What each runtime asks of a scenario (its checkScenario hook in
// src/runtime/index.js), and the keys only it reads (refused elsewhere by the
// scenario's checks).

const fs = require('node:fs');
const { DISK_KEYS } = require('./limits');

/** Keys only the compose runtime reads. */
const COMPOSE_ONLY = [
  'KEEP',
  'NODE_VOLUME',
  'SNAPSHOT',
  'BIND_ADDR',
  'STACK_TIMEOUT_S',
  'GRAFANA',
  'GRAFANA_PORT',
  'COMPOSE_FILES',
  'NODE_IMAGE',
  'PROMETHEUS_IMAGE',
  'CADVISOR_IMAGE',
  'GRAFANA_IMAGE',
];

/** The compose keys the swarm runtime reads too (the others: a volume kept outside the stack, a bind address). */
const SWARM_KEYS = [
  ...COMPOSE_ONLY.filter((k) => !['NODE_VOLUME', 'SNAPSHOT', 'BIND_ADDR'].includes(k)),
  'SWARM_NODE',
  'SWARM_BALANCER_NODE',
  'SWARM_GENERATOR_NODES',
];

/** Keys only the attach runtime reads. */
const ATTACH_ONLY = ['RPC_URL', 'METRICS_URL', 'NODE_PID', 'REPLICA_METRICS'];

/** RUNTIME=attach needs RPC_URL and a CPU source. */
function attachChecks(v, { sources, given, at }, errors) {
  if (!v.RPC_URL) errors.push(`${at('RUNTIME')}: RUNTIME=attach needs RPC_URL, the node's JSON-RPC endpoint`);
  else checkTransport(v, sources, given, at, errors);
  if (v.REPLICA_METRICS) return attachFleetChecks(v, at, errors);
  const cpu = v.CPU_SOURCE;
  if (cpu === 'cgroup')
    errors.push(`${at('CPU_SOURCE')}: CPU_SOURCE=cgroup needs RUNTIME=host (attach reads a PID or a metrics endpoint)`);
  if (cpu === 'pid' && !v.NODE_PID) errors.push(`${at('CPU_SOURCE')}: CPU_SOURCE=pid needs NODE_PID`);
  if (v.NODE_PROFILE === 'cpu' && !v.NODE_PID)
    errors.push(
      `${at('NODE_PROFILE')}: NODE_PROFILE=cpu with RUNTIME=attach needs NODE_PID, the node's process on this host, for perf to profile`,
    );
  if ((cpu === 'metrics' || (cpu === 'auto' && !v.NODE_PID)) && !v.METRICS_URL) {
    errors.push(
      `${at('RUNTIME')}: RUNTIME=attach needs a CPU source: NODE_PID (a process on this host) or METRICS_URL (the node's metrics endpoint)`,
    );
  }
}

/** RUNTIME=attach with REPLICA_METRICS: the replicas' metrics endpoints are the CPU source, and the only one. */
function attachFleetChecks(v, at, errors) {
  for (const key of ['METRICS_URL', 'NODE_PID'])
    if (v[key])
      errors.push(
        `${at(key)}: ${key}: REPLICA_METRICS reads each replica's CPU from its metrics endpoint; leave ${key} unset`,
      );
  if (!['auto', 'metrics'].includes(v.CPU_SOURCE))
    errors.push(`${at('CPU_SOURCE')}: CPU_SOURCE=${v.CPU_SOURCE}: with REPLICA_METRICS the CPU source is metrics`);
  if (v.NODE_PROFILE !== 'none')
    errors.push(`${at('NODE_PROFILE')}: NODE_PROFILE: not with REPLICA_METRICS (no replica's process is known)`);
}

/** RUNTIME=compose: windows long enough for cAdvisor, a compose service, files that exist. */
function composeChecks(v, { client, at }, errors) {
  // cAdvisor samples every 1 to 2 s: a window needs room for two samples inside it.
  for (const [key, min] of [
    ['DURATION_S', 5],
    ['SATURATE_STEP_S', 5],
    ['PROFILE_DURATION_S', 5],
    ['IDLE_S', 4],
  ]) {
    if (v[key] > 0 && v[key] < min)
      errors.push(
        `${at(key)}: ${key}: at least ${min} s with RUNTIME=${v.RUNTIME} (cAdvisor samples every 1 to 2 s and a window needs two samples inside it)${key === 'IDLE_S' ? ', or 0 for no idle baseline' : ''}`,
      );
  }
  if (!client.compose)
    errors.push(`${at('RUNTIME')}: RUNTIME=${v.RUNTIME}: CLIENT=${v.CLIENT} has no compose service; use RUNTIME=host`);
  if (v.SNAPSHOT && !v.NODE_VOLUME)
    errors.push(`${at('SNAPSHOT')}: SNAPSHOT is unpacked into NODE_VOLUME: set NODE_VOLUME too`);
  if (v.SNAPSHOT && !fs.existsSync(v.SNAPSHOT)) errors.push(`${at('SNAPSHOT')}: SNAPSHOT: no such file: ${v.SNAPSHOT}`);
  for (const f of v.COMPOSE_FILES ? v.COMPOSE_FILES.split(',') : []) {
    if (!fs.existsSync(f.trim())) errors.push(`${at('COMPOSE_FILES')}: COMPOSE_FILES: no such file: ${f.trim()}`);
  }
}

/** RUNTIME=swarm: the compose runtime's checks, and what its stack does not do yet, refused before anything starts. */
function swarmChecks(v, ctx, errors) {
  composeChecks(v, ctx, errors);
  const { at } = ctx;
  const not = (key, what) => errors.push(`${at(key)}: ${what}: not yet with RUNTIME=swarm (docs/runtimes.md)`);
  // a stack file has no block I/O limits, and the engine applies none to a running container
  for (const key of Object.keys(DISK_KEYS))
    if (v[key] !== null && v[key] !== undefined) not(key, `${key} (a swarm service takes no block I/O limit)`);
  if (v.COLD === 'yes') not('COLD', 'COLD=yes');
  if (v.NODE_PROFILE !== 'none') not('NODE_PROFILE', `NODE_PROFILE=${v.NODE_PROFILE}`);
  if (v.SWARM_NODE) remoteNodeChecks(v, ctx, errors);
  if (v.SWARM_BALANCER_NODE && !HOSTNAME.test(v.SWARM_BALANCER_NODE))
    errors.push(
      `${at('SWARM_BALANCER_NODE')}: SWARM_BALANCER_NODE: "${v.SWARM_BALANCER_NODE}" is not a node's hostname`,
    );
  if (v.SWARM_GENERATOR_NODES) generatorNodeChecks(v, ctx, errors);
  if (v.SWARM_BALANCER_NODE && v.BALANCER !== 'haproxy')
    errors.push(
      `${at('SWARM_BALANCER_NODE')}: SWARM_BALANCER_NODE places HAProxy, and this scenario has none (REPLICAS > 1 or BALANCER=haproxy)`,
    );
}

/** A swarm node's hostname, as `docker node ls` shows it. */
const HOSTNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/** A key's comma-separated hostnames (SWARM_NODE, SWARM_GENERATOR_NODES); each that is not one is an error. */
function hostnameList(v, key, at, errors) {
  const names = String(v[key])
    .split(',')
    .map((x) => x.trim());
  for (const name of names)
    if (!HOSTNAME.test(name)) errors.push(`${at(key)}: ${key}: "${name}" is not a node's hostname`);
  return names;
}

/** SWARM_GENERATOR_NODES: hostnames, no more of them than generators; not a replay (its capture is a file here). */
function generatorNodeChecks(v, { at }, errors) {
  const where = at('SWARM_GENERATOR_NODES');
  const names = hostnameList(v, 'SWARM_GENERATOR_NODES', at, errors);
  const n = v.GENERATORS || 1;
  if (names.length > n)
    errors.push(
      `${where}: SWARM_GENERATOR_NODES names ${names.length} swarm nodes for ${n} generator${n === 1 ? '' : 's'} (GENERATORS): one each at most`,
    );
  if (String(v.WORKLOAD).startsWith('replay:'))
    errors.push(
      `${where}: SWARM_GENERATOR_NODES with a replay: its capture is a file on this machine; replay it from here`,
    );
}

/**
 * SWARM_NODE: the node on another swarm node, where chainperf reaches no engine: what needs one is refused (a copy of
 * a volume, a swap limit, the network's and the fleet's services planned around a node on this machine).
 */
function remoteNodeChecks(v, { at }, errors) {
  const names = hostnameList(v, 'SWARM_NODE', at, errors);
  if (names.length > v.REPLICAS)
    errors.push(
      `${at('SWARM_NODE')}: SWARM_NODE names ${names.length} swarm nodes for ${v.REPLICAS} replica${v.REPLICAS === 1 ? '' : 's'}: one each at most (the node's first)`,
    );
  const not = (key, why) =>
    errors.push(`${at(key)}: ${key}: not yet with SWARM_NODE (the node on another swarm node: ${why})`);
  if (v.SYNC === 'network')
    not('SYNC', "the sync's CPU is read from the node's cgroup on the machine chainperf runs on");
  if (v.STATE !== 'dev') not('STATE', 'a STATE profile is restored into a volume of the engine chainperf runs on');
  if (v.KEEP === 'volume') not('KEEP', "the node's data volume goes with its container");
}

/** In attach, RPC_URL's scheme is the transport: TRANSPORT follows it, or must agree with it. */
function checkTransport(v, sources, given, at, errors) {
  const scheme = v.RPC_URL.slice(0, v.RPC_URL.indexOf(':')).toLowerCase();
  const urlTransport = scheme === 'ws' || scheme === 'wss' ? 'ws' : 'http';
  if (!given.TRANSPORT) {
    v.TRANSPORT = urlTransport;
    sources.TRANSPORT = `RPC_URL (${scheme}://, ${at('RPC_URL')})`;
  } else if (v.TRANSPORT !== urlTransport) {
    const want = v.TRANSPORT === 'ws' ? 'a ws:// or wss://' : 'an http:// or https://';
    errors.push(
      `${at('TRANSPORT')}: TRANSPORT=${v.TRANSPORT} contradicts RPC_URL (${scheme}://, ${at('RPC_URL')}): with RUNTIME=attach the transport is RPC_URL's; give ${want} RPC_URL, or leave TRANSPORT unset`,
    );
  }
}

module.exports = { attachChecks, composeChecks, swarmChecks, COMPOSE_ONLY, SWARM_KEYS, ATTACH_ONLY };
