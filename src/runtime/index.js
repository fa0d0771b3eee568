// @ts-check
'use strict';
// The runtimes: where the node under test runs. Each is one entry here and
// its own modules; the generic code (the scenario's checks, the steps of a run,
// ./run.sh install) reaches a runtime only through this contract, so a new
// runtime is a new module and a line below (docs/architecture.md).
// Modules are required when a runtime is used, not when a scenario is resolved.

const { attachChecks, composeChecks, swarmChecks, COMPOSE_ONLY, SWARM_KEYS, ATTACH_ONLY } = require('./checks');

/** @type {Object<string, import('../contracts').Runtime>} */
const runtimes = {
  compose: {
    name: 'compose',
    summary:
      'the node, cAdvisor, Prometheus (and Grafana) as one Docker Compose project, images pulled or built locally',
    ownKeys: COMPOSE_ONLY,
    checkScenario: composeChecks,
    start: (s, ctx) => require('./compose').startCompose(s, ctx),
    nodeRecord: (stack) => ({ container: stack.node.container, cpus: stack.node.cpus }),
    async install(s, { log }) {
      const images = await require('./images').ensureImages(s, log);
      /** @type {Object<string, any>} */
      const found = images;
      return Object.entries(found).map(([service, img]) =>
        img.ref ? `${service}: ${img.ref} (${img.origin})` : `${service}: skipped: ${img.skipped}`,
      );
    },
  },
  swarm: {
    name: 'swarm',
    summary:
      "the compose runtime's stack deployed with docker stack deploy to the Docker Swarm this engine manages (docker swarm init: a swarm of one machine)",
    ownKeys: SWARM_KEYS,
    checkScenario: swarmChecks,
    start: (s, ctx) => require('./swarm').startSwarm(s, ctx),
    nodeRecord: (stack) => runtimes.compose.nodeRecord(stack),
    install: (s, ctx) => runtimes.compose.install(s, ctx),
  },
  host: {
    name: 'host',
    summary: 'the node runs beside chainperf, as a child process in its own cgroup, Prometheus beside it',
    ownKeys: [],
    start: (s, ctx) => require('./host').startHost(s, ctx),
    nodeRecord: (stack) => ({ pid: stack.node.pid, cpus: stack.node.cpus || null }),
    async install(s, { log, client, chain }) {
      const lines = [`${s.CLIENT}: ${await client.ensureBinary(s, log)}`];
      if (chain.install) lines.push(`chain spec: ${await chain.install(s, { log, client })}`);
      lines.push(`Prometheus: ${await require('../install/prometheus').ensurePrometheus(log)}`);
      return lines;
    },
  },
  attach: {
    name: 'attach',
    summary: 'measure a node that is already running: nothing is started, read methods only by default',
    ownKeys: ATTACH_ONLY,
    checkScenario: attachChecks,
    start: (s, ctx) => require('./attach').startAttach(s, ctx),
    nodeRecord: (stack) => ({ pid: stack.node.pid, cpus: null }),
    install: async () => ['nothing to install: the node is already running'],
  },
};

module.exports = runtimes;
