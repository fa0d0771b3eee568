'use strict';
// What joins the node in a compose project or swarm stack, planned before `up`
// and started once the node answers: the network's nodes (NETWORK_NODES,
// network/compose-network.js) and the fleet's replicas and balancer
// (REPLICAS, compose-fleet.js). Both come as compose files of the run.

const path = require('node:path');
const { cpuList } = require('./host');
const { planComposeNetwork, initComposeNetwork, startComposeNetwork } = require('../network/compose-network');
const { planComposeFleet, startComposeFleet, fleetMembers } = require('./compose-fleet');

/** Before `up`: the network's and the fleet's compose files, and what the node's command needs as a member. */
async function planAround(s, { client, images, workDir, log, nodeCpus, otherCpus }) {
  const network =
    s.NETWORK_NODES > 0
      ? await planComposeNetwork(s, {
          client,
          bin: await client.ensureBinary(s, log),
          workDir,
          imageRef: images.node.ref,
          cpus: otherCpus,
        })
      : null;
  const fleet =
    network && s.BALANCER === 'haproxy'
      ? await planComposeFleet(s, {
          client,
          workDir,
          imageRef: images.node.ref,
          haproxyRef: images.haproxy.ref,
          nodeCpus,
          balancerCpus: otherCpus,
          network,
        })
      : null;
  return {
    network,
    fleet,
    prepared: network ? { network: network.member } : {},
    files: [network && network.file, fleet && fleet.file].filter(Boolean),
  };
}

/** The cores away from the node's: the generator's, or every core when the node takes them all. */
const otherCpusOf = (generatorCpus, ncpu) => generatorCpus || cpuList(0, ncpu);

/** Before `up`: the network's genesis (or a STATE profile's copy) in every member's and network node's volume. */
async function initAround(s, around, { client, run, log, state = null, workDir = null, skip = [] }) {
  if (!around.network) return;
  const replicas = around.fleet ? around.fleet.replicas.slice(1).map((r) => r.service) : [];
  // SYNC=network with a STATE profile: the genesis block alone, which prepareComposeNode wrote for the node
  const genesisOnly = state && s.SYNC === 'network' && workDir ? path.join(workDir, 'genesis-only') : null;
  await initComposeNetwork(s, around.network, { client, run, log, replicas, state, genesisOnly, skip });
}

/**
 * Once the node answers: the fleet (the balancer becomes the run's endpoint), then the network around them. nodeHost:
 * where the node's published ports are (SWARM_NODE: the swarm node it runs on); placed: a fleet SWARM_NODE placed; lb:
 * HAProxy SWARM_BALANCER_NODE placed.
 */
async function startAround(s, stack, around, o) {
  const { client, containers, services, log, signal, nodeHost = '127.0.0.1', placed = null, lb = null } = o;
  const nodeRpcUrl = stack.rpcUrl;
  const started = around.fleet
    ? await startComposeFleet(s, stack, { plan: around.fleet, containers, services, log, placed, balancer: lb })
    : null;
  if (around.network)
    await startComposeNetwork(s, stack, {
      client,
      plan: around.network,
      services,
      nodeRpcUrl,
      nodeHost,
      replicas: around.fleet ? fleetMembers(around.fleet, client, started) : [],
      log,
      signal,
    });
}

module.exports = { planAround, initAround, startAround, otherCpusOf };
