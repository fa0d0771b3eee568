// @ts-check
'use strict';
// The compose runtime's project, as Compose itself renders it (`compose
// config`: one source, the same files and values), turned into a stack file
// for `docker stack deploy`. What a swarm does differently is said here:
// - every service is reached by DNS round robin (endpoint_mode: dnsrr) and
//   publishes its ports in host mode, so nothing needs the routing mesh and
//   its IPVS, which some kernels lack;
// - a swarm cannot bind a published port to one address: the ports listen on
//   every interface of the swarm node (the run's log says so);
// - a swarm has no cpuset: the node's container (a fleet's replicas, the
//   network's nodes, HAProxy) is pinned after it starts, by the engine of the
//   machine it runs on (swarm-placement.js);
// - a memory limit (MEMORY_MB: mem_limit, on the node and each replica) is the
//   service's deploy.resources.limits.memory, which the scheduler knows; a
//   swarm has no memswap_limit, so the engine sets swap to the same limit when
//   the container runs (swarm-placement.js), as the cpuset;
// - tasks are not restarted (restart_policy none): a node that exits ends the
//   run, as in the compose runtime;
// - every service is placed on this machine's swarm node, cAdvisor on every
//   node (mode global); with SWARM_NODE the node service is placed on that
//   node instead, with CORES as a CPU quota (no engine here pins it there) and
//   its data in an anonymous volume, which the swarm removes with its
//   container (a named one would outlive the stack on a machine chainperf
//   does not reach); on a network, the network's folder goes there as a
//   config and a secret of the stack, and the container runs the client's
//   init before the node; FAULT's replica stops with SIGKILL (it is killed by
//   scaling its service to 0, swarm-tasks.js); with SWARM_BALANCER_NODE,
//   HAProxy is placed on that node, its configuration a config of the stack;
//   with SWARM_GENERATOR_NODES, each load generator is a service of its own on
//   its node (swarm-generators.js), the run's token a secret of the stack.

const path = require('node:path');
const { MOUNT } = require('../network/compose-network');

/** Keys of a rendered compose service that a version 3.8 stack file does not take, or that a swarm ignores. */
const DROPPED = [
  'cpuset',
  'restart',
  'networks',
  'container_name',
  'depends_on',
  'pull_policy',
  'mem_limit',
  'memswap_limit',
];

/**
 * FAULT=kill-replica with SWARM_NODE: the replica to kill is stopped by scaling its service to 0, and a swarm node
 * stops a task's container with the service's stop signal: SIGKILL at once, as the compose runtime's kill.
 */
const KILLED_BY_SCALING = { stop_signal: 'SIGKILL', stop_grace_period: '0s' };

/** A port as a swarm publishes it: host mode, on every interface. */
const hostModePort = (p) => ({
  target: Number(p.target),
  published: Number(p.published),
  protocol: p.protocol || 'tcp',
  mode: 'host',
});

/** A mount in the stack file's long syntax, without Compose v2's extras (create_host_path). */
function mount(v) {
  const out = { type: v.type, source: v.source, target: v.target };
  if (v.read_only) out.read_only = true;
  return out;
}

/** An argument as a POSIX shell reads it back unchanged. */
const shellQuote = (a) => (/^[A-Za-z0-9_./=:,@%+-]+$/.test(a) ? a : `'${String(a).replace(/'/g, `'\\''`)}'`);

/**
 * The node service (or a fleet's replica) on another swarm node: placed there by its hostname, CORES as a quota of as
 * many CPUs, its named volumes anonymous (removed with the container). A bind mount of a file on this machine cannot
 * follow it, except the network's folder (NETWORK_NODES): its genesis goes as a swarm config, its engine secret as a
 * swarm secret, and the client's init writes the genesis into the (empty) volume in the container before the node
 * starts.
 */
function remoteNode(out, svc, remote, stackFiles, name = 'node') {
  const binds = (svc.volumes || []).filter((v) => v.type === 'bind');
  const network = binds.find((v) => v.target === MOUNT && remote.init);
  const others = binds.filter((v) => v !== network);
  if (others.length)
    throw new Error(
      `SWARM_NODE=${remote.hostname}: the ${name} service mounts ${others.map((v) => v.source).join(', ')} from the machine chainperf runs on, which ${remote.hostname} does not have`,
    );
  out.volumes = (svc.volumes || []).filter((v) => v !== network).map((v) => ({ type: 'volume', target: v.target }));
  out.deploy.placement = { constraints: [`node.hostname == ${remote.hostname}`] };
  // MEMORY_MB stays the service's memory limit (swarmService); its swap limit cannot follow (swarm-placement.js)
  out.deploy.resources = { limits: { ...(out.deploy.resources || {}).limits, cpus: String(remote.cpus) } };
  if (!network) return;
  stackFiles.configs['network-genesis'] = { file: path.join(network.source, 'genesis.json') };
  stackFiles.secrets['network-jwt'] = { file: path.join(network.source, 'jwt.hex') };
  out.configs = [{ source: 'network-genesis', target: `${MOUNT}/genesis.json` }];
  out.secrets = [{ source: 'network-jwt', target: `${MOUNT}/jwt.hex` }];
  const { entrypoint, initArgs } = remote.init;
  const line = (args) => [...entrypoint, ...args].map(shellQuote).join(' ');
  out.entrypoint = ['/bin/sh', '-c'];
  out.command = [`${line(initArgs)} && exec ${line(svc.command || [])}`];
}

/**
 * HAProxy on another swarm node (SWARM_BALANCER_NODE): placed there by its hostname, the cores it would have had here
 * as a CPU quota, its configuration (a file on this machine) as a swarm config of the stack.
 */
function remoteBalancer(out, svc, place, stackFiles) {
  const binds = (svc.volumes || []).filter((v) => v.type === 'bind');
  stackFiles.configs['haproxy-config'] = { file: binds[0].source };
  out.configs = [{ source: 'haproxy-config', target: binds[0].target }];
  const others = (svc.volumes || []).filter((v) => v !== binds[0]);
  if (others.length) out.volumes = others.map(mount);
  else delete out.volumes;
  out.deploy.placement = { constraints: [`node.hostname == ${place.hostname}`] };
  out.deploy.resources = { limits: { cpus: String(place.cpus) } };
}

/**
 * SWARM_GENERATOR_NODES: a generator's service on its node, its agent at a port there (host mode), the run's token a
 * secret of the stack, the run's work folder its agent's.
 */
function generatorService(g, gens, stackFiles) {
  stackFiles.secrets['generator-token'] = { file: gens.tokenFile };
  return {
    image: gens.image,
    environment: {
      CHAINPERF_AGENT_ROOT: gens.root,
      CHAINPERF_AGENT_PORT: String(g.port),
      CHAINPERF_AGENT_TOKEN_FILE: '/run/secrets/generator-token',
    },
    ports: [hostModePort({ target: g.port, published: g.port })],
    secrets: [{ source: 'generator-token', target: 'generator-token' }],
    deploy: {
      endpoint_mode: 'dnsrr',
      restart_policy: { condition: 'none' },
      replicas: 1,
      placement: { constraints: [`node.hostname == ${g.hostname}`] },
    },
  };
}

/** A rendered compose service as a stack's service on chainperf's swarm node (cAdvisor: on every node). */
function swarmService(name, svc, nodeId) {
  const out = Object.fromEntries(Object.entries(svc).filter(([k]) => !DROPPED.includes(k)));
  if (svc.ports) out.ports = svc.ports.map(hostModePort);
  if (svc.volumes) out.volumes = svc.volumes.map(mount);
  out.deploy = {
    endpoint_mode: 'dnsrr',
    restart_policy: { condition: 'none' },
    ...(name === 'cadvisor'
      ? { mode: 'global' }
      : { replicas: 1, placement: { constraints: [`node.id == ${nodeId}`] } }),
  };
  if (svc.mem_limit) out.deploy.resources = { limits: { memory: String(svc.mem_limit) } };
  return out;
}

/**
 * @param {any} doc the project as `compose config` renders it (parsed)
 * @param {{nodeId: string, balancer?: {hostname: string, cpus: number}|null, generators?: any,
 *   remote?: {hostname: string, cpus: number, init?: {entrypoint: string[], initArgs: string[]},
 *   replicas?: Object<string, {hostname: string}>, killed?: string}|null}} o the swarm node everything is placed on
 *   (this machine's); remote: the node service's own (SWARM_NODE), its CPU quota, on a network the client's init,
 *   with REPLICAS each other replica's swarm node, and with FAULT the replica's service it kills; balancer: HAProxy's
 *   swarm node and CPU quota (SWARM_BALANCER_NODE);
 *   generators: the generators' services, their image, token file and work folder (SWARM_GENERATOR_NODES)
 * @returns {{version: string, services: Object<string, any>, volumes: Object<string, any>, configs?: any,
 *   secrets?: any}}
 */
function swarmStack(doc, { nodeId, remote = null, balancer = null, generators = null }) {
  const services = {};
  const stackFiles = { configs: {}, secrets: {} };
  for (const [name, svc] of Object.entries(doc.services)) {
    const out = swarmService(name, svc, nodeId);
    const place = !remote ? null : name === 'node' ? remote : remote.replicas && remote.replicas[name];
    if (place) remoteNode(out, svc, { ...remote, ...place }, stackFiles, name);
    if (place && remote.killed === name) Object.assign(out, KILLED_BY_SCALING);
    if (name === 'haproxy' && balancer) remoteBalancer(out, svc, balancer, stackFiles);
    services[name] = out;
  }
  for (const g of generators ? generators.list : []) services[g.service] = generatorService(g, generators, stackFiles);
  const files = Object.fromEntries(Object.entries(stackFiles).filter(([, v]) => Object.keys(v).length));
  return { version: '3.8', services, volumes: namedVolumes(doc, services), ...files };
}

/** The project's volumes the stack's services still mount by name. */
function namedVolumes(doc, services) {
  const named = new Set(
    Object.values(services).flatMap((x) => (x.volumes || []).filter((v) => v.source).map((v) => v.source)),
  );
  const volumes = {};
  for (const [name, v] of Object.entries(doc.volumes || {}))
    if (named.has(name) || named.has(v && v.name))
      volumes[name] = v && v.external ? { external: true, name: v.name } : {};
  return volumes;
}

module.exports = { swarmStack, DROPPED };
