'use strict';
// RUNTIME=swarm: the compose runtime's stack (the node, cAdvisor, Prometheus,
// Grafana when its image is here; a network's nodes, a fleet's replicas and
// HAProxy: compose-around.js; the load generators with SWARM_GENERATOR_NODES:
// swarm-generators.js) deployed with `docker stack deploy` to the
// Docker Swarm this engine manages, from the project Compose renders out of
// the same files (swarm-render.js says what a swarm does differently). On one
// machine, `docker swarm init` is all it needs. A STATE profile is restored
// into a volume of this engine before the deploy, as in the compose runtime.
// From the moment the services' containers run, the run is the compose
// runtime's: the same readiness checks, cAdvisor through Prometheus for the
// node's CPU, the engine's own counters as its cross-check. Teardown removes
// the stack, then its volumes and network.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const yaml = require('js-yaml');
const docker = require('../platform/docker');
const swarm = require('../platform/swarm');
const { attachTeardown } = require('./teardown');
const { planCompose, waitForServices } = require('./compose');
const { prepareComposeNode } = require('./compose-data');
const { describeNode, watchNodeContainer } = require('./compose-node');
const { initAround, startAround } = require('./compose-around');
const { ROOT } = require('./compose-render');
const { swarmStack } = require('./swarm-render');
const {
  pinAll,
  remotePlacement,
  remoteInit,
  placedFleet,
  placementRecord,
  balancerPlacement,
  balancerRecord,
  placedBalancer,
} = require('./swarm-placement');
const { generatorPlacement, connectGenerators } = require('./swarm-generators');
const { runningContainers, remoteContainer, watchRemoteNode } = require('./swarm-tasks');

/** This engine as a swarm manager, or the reason it cannot deploy a stack. */
async function managerState() {
  const st = await swarm.swarmState();
  if (!st.active)
    throw new Error(
      'RUNTIME=swarm needs this Docker engine in a swarm, and it is not in one: `docker swarm init` makes a swarm of this machine alone (docs/runtimes.md#the-swarm-runtime)',
    );
  if (!st.manager)
    throw new Error(
      'RUNTIME=swarm deploys with `docker stack deploy`, which runs on a manager; this engine is a worker',
    );
  return st;
}

/** `docker stack deploy`, its output in the log. */
function deploy(file, name, log) {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', ['stack', 'deploy', '--prune', '-c', file, name], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d) => {
      out += d;
      for (const line of String(d)
        .split('\n')
        .filter((l) => l.trim() && !/detach|future release/.test(l)))
        log(`stack deploy: ${line.trim()}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`docker stack deploy exited with status ${code}: ${out.trim().split('\n').pop()}`)),
    );
  });
}

/** A stack's service's running container and its log, as the network (network/compose-network.js) asks for them. */
const stackServices = (name) => ({
  containerOf: async (svc) => {
    const c = (await swarm.stackContainers(name, svc)).find((x) => x.State === 'running');
    return c ? c.Id : null;
  },
  logsOf: async (svc) => {
    const c = (await swarm.stackContainers(name, svc))[0];
    return c ? docker.containerLogs(c.Id, { tail: 2000 }).catch(() => '') : '';
  },
});

/** Every service of the run's stack: the node, the monitoring, the network's nodes, a fleet's replicas and HAProxy. */
function stackServicesOf(p) {
  const { network, fleet } = p.around;
  return [
    'node',
    'cadvisor',
    'prometheus',
    ...(p.grafana ? ['grafana'] : []),
    ...(network ? network.peers.map((x) => x.name) : []),
    ...(fleet ? [...fleet.replicas.slice(1).map((r) => r.service), 'haproxy'] : []),
  ];
}

/** The stack's removal (after saving the node's log) as a cleanup, and what a killed run leaves. */
function registerRemoval(stack, { s, name, workDir, log }) {
  let removed = false;
  stack.nodeLog = path.join(workDir, 'node.log');
  stack.leftovers.unshift(() =>
    removed
      ? null
      : {
          what: `swarm stack ${name} (services, volumes, network)`,
          command: `docker stack rm ${name}`,
          swarm: { stack: name },
        },
  );
  stack.cleanups.push(async () => {
    const node = (await swarm.stackContainers(name, 'node'))[0];
    if (node) fs.writeFileSync(stack.nodeLog, await docker.containerLogs(node.Id, { tail: 2000 }).catch(() => ''));
    // SWARM_NODE: its task runs on another machine; the swarm brings its log here
    else fs.writeFileSync(stack.nodeLog, await swarm.serviceLogs(`${name}_node`).catch(() => ''));
    if (s.KEEP === 'stack') {
      log(`KEEP=stack: leaving swarm stack ${name} deployed; remove it with: docker stack rm ${name}`);
      return;
    }
    const left = await swarm.removeStack(name, { keepVolumes: s.KEEP === 'volume' });
    // NETWORK_NODES: the volumes the network's init made through Compose carry its labels, not the stack's
    if (s.KEEP !== 'volume') await docker.removeProject(name);
    const what = Object.entries(left).filter(([k, v]) => v.length && !(k === 'volumes' && s.KEEP === 'volume'));
    if (what.length)
      throw new Error(`swarm stack ${name} not wholly removed: ${JSON.stringify(Object.fromEntries(what))}`);
    removed = true;
    log(`swarm stack ${name} is removed${s.KEEP === 'volume' ? ' (volumes kept: KEEP=volume)' : ' with its volumes'}`);
  });
}

/** The run's stack before anything is deployed: what run.json records of the compose rendering and the swarm. */
function newStack(p, st, ipvs) {
  const { s, c, images, project: name } = p;
  return {
    cleanups: [],
    leftovers: [],
    runtime: 'swarm',
    generatorCpus: p.generatorCpus,
    compose: {
      command: c.argv.join(' '),
      version: c.version,
      engine: p.engineVersion,
      project: name,
      files: p.files.map((f) => path.relative(ROOT, f)),
    },
    swarm: {
      stack: name,
      node: st.hostname,
      node_id: st.nodeId,
      nodes: st.nodes,
      ipvs,
      endpoint_mode: 'dnsrr',
      ports: 'host mode, every interface',
    },
    images,
    client: { name: s.CLIENT, version: null, image: images.node.ref, image_id: images.node.id },
  };
}

/** SWARM_NODE: the services it places by hostname (the node, a fleet's other replicas) and where. */
const placedServices = (remote) => (remote ? { node: remote, ...(remote.replicas || {}) } : {});

/**
 * The deployed stack's running containers, pinned, the node's watched for an exit (SWARM_NODE: its task on the other
 * node, through the swarm; SWARM_BALANCER_NODE: HAProxy's task there); nodeGone says why the node is gone while the
 * stack starts (null: the compose runtime's).
 */
async function deployedContainers(stack, p, { remote, balancer }, { log, signal }) {
  const { s, project: name } = p;
  stack.startWarnings = []; // a task restarted once (swarm-tasks.js), for the report
  const opts = { timeoutS: s.STACK_TIMEOUT_S, signal, log, warnings: stack.startWarnings };
  const placed = { ...placedServices(remote), ...(balancer ? { haproxy: balancer } : {}) };
  const here = stackServicesOf(p).filter((x) => !placed[x]);
  const containers = await runningContainers(name, here, opts);
  for (const [svc, place] of Object.entries(placed)) containers[svc] = await remoteContainer(name, svc, place, opts);
  await pinAll(containers, p);
  stack.containers = containers;
  if (balancer)
    log(
      `SWARM_BALANCER_NODE=${s.SWARM_BALANCER_NODE}: HAProxy on ${balancer.hostname} (${balancer.addr}) with a quota of ${balancer.cpus} CPU${balancer.cpus === 1 ? '' : 's'}; its CPU from that node's cAdvisor`,
    );
  if (!remote) {
    await watchNodeContainer(stack, containers);
    return { containers, nodeGone: null };
  }
  const where = Object.entries(placedServices(remote)).map(([svc, x]) => `${svc} on ${x.hostname} (${x.addr})`);
  log(
    `SWARM_NODE=${s.SWARM_NODE}: ${where.join(', ')}, CORES as a quota of ${remote.cpus} CPU${remote.cpus === 1 ? '' : 's'} each; CPU and memory${p.around.fleet ? '' : ' and disk'} from those nodes' cAdvisors, no engine cross-check; the generator on every core of this machine`,
  );
  return { containers, nodeGone: watchRemoteNode(stack, name, containers.node) };
}

/**
 * The stack file (stack.yml) from the project Compose renders, with what SWARM_NODE and SWARM_BALANCER_NODE place on
 * other swarm nodes (null each without them).
 */
async function writeStack(p, st, workDir) {
  const rendered = await p.run(['config']);
  if (rendered.code !== 0)
    throw new Error(`compose config exited with status ${rendered.code}: ${rendered.out.trim()}`);
  const remote = await remotePlacement(p.s, st, p.nodeCpus);
  if (remote) p.generatorCpus = null; // the node is elsewhere: the generator has every core of this machine
  if (remote && p.network) remote.init = await remoteInit(p);
  const balancer = p.around.fleet ? await balancerPlacement(p.s, st, p.around.fleet.balancerCpus) : null;
  const gens = await generatorPlacement(p.s, workDir);
  const generators = gens && { ...gens, image: p.images.generator.ref };
  const file = path.join(workDir, 'stack.yml');
  const doc = swarmStack(yaml.load(rendered.out), { nodeId: st.nodeId, remote, balancer, generators });
  fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  return { file, remote, balancer, gens };
}

/**
 * Starts the stack on the swarm; resolves once every service is ready.
 * @param {import('../contracts').Scenario} scenario
 * @param {import('../contracts').RuntimeContext} ctx
 * @returns {Promise<any>} the stack (a Stack: src/contracts.js)
 */
async function startSwarm(scenario, { runId, workDir, log, signal, onStack }) {
  const st = await managerState();
  const p = await planCompose(scenario, { runId, workDir, log });
  const { s, project: name, ports } = p;
  const { file, remote, balancer, gens } = await writeStack(p, st, workDir);
  const ipvs = swarm.ipvsAvailable();
  const stack = newStack(p, st, ipvs);
  if (remote) stack.swarm.node_placement = placementRecord(remote);
  if (balancer) stack.swarm.balancer_placement = balancerRecord(balancer);
  attachTeardown(stack, log);
  if (onStack) onStack(stack);
  try {
    await prepareComposeNode(stack, p, { runId, workDir, log, signal });
    registerRemoval(stack, { s, name, workDir, log });
    log(
      `deploying swarm stack ${name} on ${st.hostname} (${st.nodes} node${st.nodes === 1 ? '' : 's'} in the swarm; services by DNS round robin, ports in host mode on every interface${ipvs ? '' : '; this kernel has no IPVS, which the routing mesh would need'})`,
    );
    if (p.network) {
      // SWARM_NODE: the node's volume is there, and its container runs the init before the node (swarm-render.js)
      const skip = Object.keys(placedServices(remote));
      await initAround(s, p.around, { client: p.client, run: p.run, log, state: stack.state, workDir, skip });
      await p.run(['down']); // the one-off runs' bridge network, whose name the stack's own network takes
    }
    if (s.GENERATORS > 1 && !gens)
      log(
        `GENERATORS=${s.GENERATORS}: the generators run as processes on this machine (${st.hostname}), each in its own cgroup, as in the compose runtime`,
      );
    await deploy(file, name, log);
    const { containers, nodeGone } = await deployedContainers(stack, p, { remote, balancer }, { log, signal });
    const opts = { hereAddr: st.addr, timeoutS: s.STACK_TIMEOUT_S, signal, log };
    if (gens) await connectGenerators(stack, name, gens, opts);
    const host = '127.0.0.1';
    const nodeHost = remote ? remote.addr : host; // its ports are published on the machine it runs on
    stack.rpcUrl = `${p.client.compose.rpc.scheme}://${nodeHost}:${ports.rpc}`;
    stack.wsUrl = stack.rpcUrl.startsWith('ws') ? stack.rpcUrl : `ws://${nodeHost}:${ports.ws}`;
    const promUrl = `http://${host}:${ports.prometheus}`;
    await waitForServices(stack, p, containers, { host, promUrl, log, signal, nodeGone });
    await describeNode(stack, p, containers, promUrl);
    const services = stackServices(name);
    const placed = remote && p.around.fleet ? placedFleet(name, promUrl) : null;
    const lb = balancer ? placedBalancer(name, promUrl, containers.haproxy, p.around.fleet) : null;
    await startAround(s, stack, p.around, {
      client: p.client,
      containers,
      services,
      log,
      signal,
      nodeHost,
      placed,
      lb,
    });
    log(`Prometheus at ${promUrl}, cAdvisor at http://${host}:${ports.cadvisor}, node RPC at ${stack.rpcUrl}`);
    return stack;
  } catch (err) {
    await stack.teardown();
    throw err;
  }
}

module.exports = { startSwarm };
