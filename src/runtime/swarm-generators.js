'use strict';
// SWARM_GENERATOR_NODES: the load generators as tasks of the swarm stack on
// named nodes, generator i on the (i mod n)-th name. Each is a service of the
// stack (swarm-render.js renders it) running chainperf's generator image, whose
// agent (workload/agent.js) listens at a port of its node (host mode), with the
// run's token as a swarm secret. Once its task runs, chainperf waits for the
// agent, checks its clock, and hands the run's generator passes to it
// (measure/generators.js, through workload/agent-client.js): the stack's
// generatorAgents, and the generators' CPU as their containers' (read by each
// agent from its cgroup) in place of a cgroup on this machine.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const swarm = require('../platform/swarm');
const { freePorts } = require('../util/net');
const { parseCpuList } = require('../workload/split');
const { GeneratorAgent, agentsGroup, CLOCK_LIMIT_MS } = require('../workload/agent-client');
const { remoteContainer } = require('./swarm-tasks');
const { placeableNode, hostnames } = require('./swarm-placement');

/**
 * Where each generator goes: [{index, service, hostname, id, addr, port}], and the run's token (a file of the work
 * folder, a secret of the stack); null without SWARM_GENERATOR_NODES. A node the swarm cannot place on is an error.
 */
async function generatorPlacement(s, workDir) {
  const names = hostnames(s.SWARM_GENERATOR_NODES);
  if (!names.length) return null;
  const nodes = await swarm.swarmNodes();
  const placed = names.map((name) => placeableNode(nodes, name, 'SWARM_GENERATOR_NODES'));
  const n = s.GENERATORS || 1;
  const ports = await freePorts(Array.from({ length: n }, (_, i) => `g${i}`));
  const token = crypto.randomBytes(24).toString('hex');
  const tokenFile = path.join(workDir, 'generator-token');
  fs.writeFileSync(tokenFile, token, { mode: 0o600 });
  const list = Array.from({ length: n }, (_, i) => ({
    index: i,
    service: `generator-${i}`,
    ...placed[i % placed.length],
    port: ports[`g${i}`],
  }));
  return { list, token, tokenFile, root: workDir };
}

/**
 * Waits for every generator's task and agent, checks each agent's clock, and gives the stack its agents: the passes go
 * to them, the generators' CPU is their containers'. hereAddr: this machine's address in the swarm.
 */
async function connectGenerators(stack, stackName, gens, { hereAddr, timeoutS, signal, log }) {
  const agents = [];
  for (const g of gens.list) {
    await remoteContainer(stackName, g.service, g, { timeoutS, signal, log, warnings: stack.startWarnings });
    const agent = new GeneratorAgent({ ...g, token: gens.token, root: gens.root, hereAddr });
    agents.push(await agent.ready({ timeoutS, signal }));
  }
  stack.generatorAgents = agents;
  stack.generatorGroup = agentsGroup(agents); // in place of the generator's cgroup on this machine
  stack.generatorGroups = null;
  stack.generatorCpus = null;
  // the cores the generators had: each node's once, however many generators share it
  const perNode = new Map(agents.map((a) => [a.hostname, parseCpuList(a.health.cpus).length]));
  stack.generatorCores = [...perNode.values()].reduce((a, b) => a + b, 0);
  stack.swarm.generator_placement = {
    generators: agents.map((a) => ({
      index: a.index,
      node: a.hostname,
      address: a.addr,
      port: a.port,
      cpus: a.health.cpus,
      clock_offset_ms: a.clock.offset_ms,
      round_trip_ms: a.clock.round_trip_ms,
    })),
    clock_limit_ms: CLOCK_LIMIT_MS,
    source:
      "each generator's CPU from its container's cgroup, read by its agent as chainperf asks at each window edge and interpolated to the edge; its samples sent back by its agent",
  };
  const where = agents.map((a) => `${a.index} on ${a.hostname} (${a.addr}, clock ${a.clock.offset_ms} ms off)`);
  log(`SWARM_GENERATOR_NODES: generator${agents.length === 1 ? '' : 's'} ${where.join(', ')}`);
  return agents;
}

module.exports = { generatorPlacement, connectGenerators };
