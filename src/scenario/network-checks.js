'use strict';
// NETWORK_NODES and NETWORK_TPS: their derived default, what a scenario may
// ask of a local network (a client that can join one, a runtime that starts
// one), and the warning when PEERS cannot be reached on a network this small.

const { parseFault } = require('../util/faults');
const { isDerived } = require('./companions');

/** NETWORK_TPS left unset: 2 per second on a network, none without one; BALANCER: HAProxy for a fleet. */
function networkDefaults(values, sources) {
  if (values.BALANCER === null) {
    values.BALANCER = values.REPLICAS > 1 ? 'haproxy' : 'none';
    sources.BALANCER = `default (REPLICAS=${values.REPLICAS})`;
  }
  if (values.LB_LAG_CHECK === null) lagCheckDefault(values, sources);
  if (values.NETWORK_TPS !== null) return;
  values.NETWORK_TPS = values.NETWORK_NODES > 0 ? 2 : 0;
  sources.NETWORK_TPS = `default (${values.NETWORK_NODES > 0 ? 'a network' : 'no network'})`;
}

/** LB_LAG_CHECK left unset: on for a fleet of the host runtime with MAX_HEAD_LAG_S, its bound; off otherwise. */
function lagCheckDefault(values, sources) {
  const fleet = values.BALANCER === 'haproxy' && values.REPLICAS > 1;
  const bound = values.MAX_HEAD_LAG_S !== null && values.MAX_HEAD_LAG_S !== undefined;
  const on = fleet && bound && values.RUNTIME === 'host';
  values.LB_LAG_CHECK = on ? 'on' : 'off';
  sources.LB_LAG_CHECK = on
    ? `default (REPLICAS=${values.REPLICAS} with MAX_HEAD_LAG_S=${values.MAX_HEAD_LAG_S})`
    : fleet && bound
      ? `default (RUNTIME=${values.RUNTIME}: the lag check runs in the host runtime only)`
      : 'default';
}

/**
 * Why there is no network where a key needs one: chainperf starts one itself (src/scenario/companions.js) unless
 * NETWORK_NODES=0 is given, or RUNTIME=attach starts nothing.
 */
const noNetwork = (v, at) =>
  v.RUNTIME === 'attach'
    ? 'RUNTIME=attach starts no network'
    : `NETWORK_NODES=0 (${at('NETWORK_NODES')}) starts none; set NETWORK_NODES to 1 or more, or leave it unset`;

/** What a network needs, refused before anything starts. */
function networkChecks(v, { client, given, at }, errors) {
  if (!(v.NETWORK_NODES > 0)) {
    if (given.NETWORK_TPS && v.NETWORK_TPS > 0)
      errors.push(
        `${at('NETWORK_TPS')}: NETWORK_TPS: transactions enter through the network's nodes; ${noNetwork(v, at)}`,
      );
    if (v.SYNC === 'network')
      errors.push(`${at('SYNC')}: SYNC=network: the node syncs from a network chainperf starts; ${noNetwork(v, at)}`);
    if (given.BLOCK_DELIVERY)
      errors.push(`${at('BLOCK_DELIVERY')}: BLOCK_DELIVERY: a lone node builds its own blocks; ${noNetwork(v, at)}`);
    if (v.MAX_HEAD_LAG_S !== null && v.MAX_HEAD_LAG_S !== undefined)
      errors.push(
        `${at('MAX_HEAD_LAG_S')}: MAX_HEAD_LAG_S: a head lag is measured against a network chainperf starts; ${v.RUNTIME === 'attach' ? 'RUNTIME=attach starts none' : 'set NETWORK_NODES (1 or more)'}`,
      );
    if (v.CHAIN_LOAD && v.CHAIN_LOAD !== 'quiet')
      errors.push(
        `${at('CHAIN_LOAD')}: CHAIN_LOAD: its traffic enters through the network's nodes; ${noNetwork(v, at)}`,
      );
    return;
  }
  const where = at('NETWORK_NODES');
  if (client.kind && client.kind !== 'node')
    errors.push(`${where}: NETWORK_NODES: ${v.CLIENT} is a ${client.kind} without peer-to-peer networking`);
  else if (!client.network)
    errors.push(
      `${where}: NETWORK_NODES: ${v.CLIENT} cannot join a local network yet (geth can: a client takes part through its network hooks, docs/network.md)`,
    );
  if (v.RUNTIME === 'attach')
    errors.push(`${where}: NETWORK_NODES: RUNTIME=attach measures a node chainperf did not start, in its own network`);
  else if (v.RUNTIME === 'compose' && (v.NODE_VOLUME || v.SNAPSHOT))
    errors.push(
      `${where}: NETWORK_NODES: the node starts from the network's genesis, not from a kept volume (NODE_VOLUME, SNAPSHOT)`,
    );
  else if (!['host', 'compose', 'swarm'].includes(v.RUNTIME))
    errors.push(
      `${where}: NETWORK_NODES: the network starts in the host, compose and swarm runtimes only (RUNTIME is ${v.RUNTIME})`,
    );
}

/** FAULT: a fault chainperf knows, inside the window, with a replica left to serve or a network to be cut from. */
function faultChecks(v, at, errors) {
  const fault = parseFault(v.FAULT);
  if (!fault) return;
  if ('error' in fault) return errors.push(`${at('FAULT')}: FAULT: ${fault.error}`);
  const end = fault.kind === 'pause-node' ? fault.at_s + fault.for_s : fault.at_s;
  if (fault.kind === 'pause-node' && v.FAULT_LOAD === 'off') {
    if (fault.for_s < 1) errors.push(`${at('FAULT')}: FAULT: ${v.FAULT}: a pause of at least 1 s`);
  } else if (end >= v.DURATION_S || (fault.kind === 'pause-node' && fault.for_s < 1))
    errors.push(
      `${at('FAULT')}: FAULT: ${v.FAULT} ${fault.kind === 'pause-node' ? 'must pause for 1 s or more and end' : 'must fall'} before the window's end (DURATION_S=${v.DURATION_S}${fault.kind === 'pause-node' ? '; or FAULT_LOAD=off, which pauses the node after the window, with no load' : ''})`,
    );
  if (fault.kind === 'kill-replica' && !(v.REPLICAS > 1))
    errors.push(`${at('FAULT')}: FAULT=kill-replica: the fleet needs another replica to serve on (REPLICAS 2 or more)`);
  if (fault.kind === 'pause-node' && !(v.NETWORK_NODES > 0))
    errors.push(`${at('FAULT')}: FAULT=pause-node: the node is cut from a network chainperf starts; set NETWORK_NODES`);
}

/** LB_LAG_CHECK=on: a bound to check against, a balancer to ask, the host runtime (its agents are chainperf's). */
function lagCheckChecks(v, at, errors) {
  if (v.LB_LAG_CHECK !== 'on') return;
  const where = `${at('LB_LAG_CHECK')}: LB_LAG_CHECK=on`;
  if (v.MAX_HEAD_LAG_S === null || v.MAX_HEAD_LAG_S === undefined)
    errors.push(
      `${where}: HAProxy takes a replica out of rotation while its head lags by more than MAX_HEAD_LAG_S; set MAX_HEAD_LAG_S (seconds), or LB_LAG_CHECK=off`,
    );
  if (v.BALANCER !== 'haproxy')
    errors.push(
      `${where}: there is no balancer to take a replica out of rotation (BALANCER=${v.BALANCER}); set REPLICAS above 1`,
    );
  else if (v.RUNTIME !== 'host')
    errors.push(
      `${where}: the lag check runs in the host runtime only for now (HAProxy asks agents in chainperf's process, on 127.0.0.1); RUNTIME is ${v.RUNTIME}: set RUNTIME=host, or LB_LAG_CHECK=off`,
    );
}

/** REPLICAS and BALANCER: what a fleet needs, refused before anything starts. */
function fleetChecks(v, { given, at }, errors) {
  faultChecks(v, at, errors);
  lagCheckChecks(v, at, errors);
  if (v.BALANCER === 'none') {
    if (v.REPLICAS > 1)
      errors.push(`${at('BALANCER')}: BALANCER=none: REPLICAS=${v.REPLICAS} replicas are reached through a balancer`);
    if (given.LB_ALGORITHM) errors.push(`${at('LB_ALGORITHM')}: LB_ALGORITHM: there is no balancer (BALANCER=none)`);
    return;
  }
  const where = at('REPLICAS') !== 'default' ? at('REPLICAS') : at('BALANCER'); // given or derived (FAULT)
  if (v.RUNTIME === 'attach')
    errors.push(
      `${where}: REPLICAS: chainperf starts no fleet with RUNTIME=attach; to measure one that runs, give RPC_URL its balancer and REPLICA_METRICS each replica's metrics endpoint`,
    );
  else if (!['host', 'compose', 'swarm'].includes(v.RUNTIME))
    errors.push(`${where}: REPLICAS: a fleet starts in the host, compose and swarm runtimes only, for now`);
  if (!(v.NETWORK_NODES > 0) && v.RUNTIME !== 'attach')
    errors.push(`${where}: REPLICAS: replicas share one chain through a network; ${noNetwork(v, at)}`);
  if (v.TRANSPORT !== 'http') errors.push(`${where}: REPLICAS: the balancer speaks HTTP; set TRANSPORT=http`);
  if (v.COLD === 'yes') errors.push(`${at('COLD')}: COLD=yes: not yet with REPLICAS`);
  if (v.NODE_PROFILE !== 'none') errors.push(`${at('NODE_PROFILE')}: NODE_PROFILE: not yet with REPLICAS`);
}

/**
 * PEERS the network cannot give, or none at all: said before the run, which goes on. A network chainperf chose
 * (NETWORK_NODES derived) with PEERS at its default is not warned: the user asked for neither.
 */
function networkWarning(v, sources = {}, given = {}) {
  if (!(v.NETWORK_NODES > 0)) return null;
  if (v.PEERS === 0)
    return 'PEERS=0: the node refuses every peer, so no transaction reaches it by gossip; it still gets its blocks from the engine-API driver';
  if (!(v.PEERS > v.NETWORK_NODES)) return null;
  if (!isDerived(sources, 'NETWORK_NODES'))
    return `PEERS=${v.PEERS} but the network has ${v.NETWORK_NODES} other nodes: the node will have at most ${v.NETWORK_NODES} peers`;
  if (!given.PEERS) return null;
  return `PEERS=${v.PEERS} but the network chainperf starts has ${v.NETWORK_NODES} other node${v.NETWORK_NODES === 1 ? '' : 's'} (NETWORK_NODES=${v.NETWORK_NODES}, ${sources.NETWORK_NODES}): the node will have at most ${v.NETWORK_NODES} peer${v.NETWORK_NODES === 1 ? '' : 's'}; set NETWORK_NODES for more`;
}

/** Seconds a kill through a swarm should have before the window's end: it lands some seconds after its order. */
const SWARM_KILL_ROOM_S = 10;

/** FAULT on replicas SWARM_NODE places: a kill so near the end that it may land after the window, said before it. */
function faultWarning(v) {
  const fault = parseFault(v.FAULT);
  if (!fault || !('kind' in fault) || fault.kind !== 'kill-replica') return null;
  if (v.RUNTIME !== 'swarm' || !v.SWARM_NODE || v.DURATION_S - fault.at_s >= SWARM_KILL_ROOM_S) return null;
  return `FAULT=${v.FAULT} with SWARM_NODE: a replica placed on a swarm node is killed through the swarm, which carries the kill out some seconds after its order; ${v.DURATION_S - fault.at_s} s before the window's end it may land after it (docs/fleets.md#killing-a-replica-on-purpose-fault)`;
}

module.exports = { networkDefaults, networkChecks, networkWarning, faultWarning, fleetChecks };
