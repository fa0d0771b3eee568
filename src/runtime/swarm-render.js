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
//   machine it runs on (swarm.js);
// - a memory limit (MEMORY_MB: mem_limit, on the node and each replica) is the
//   service's deploy.resources.limits.memory, which the scheduler knows; a
//   swarm has no memswap_limit, so the engine sets swap to the same limit when
//   the container runs (swarm.js), as the cpuset;
// - tasks are not restarted (restart_policy none): a node that exits ends the
//   run, as in the compose runtime;
// - every service is placed on this machine's swarm node, cAdvisor on every
//   node (mode global).

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

/**
 * @param {any} doc the project as `compose config` renders it (parsed)
 * @param {{nodeId: string}} o the swarm node everything is placed on (this machine's)
 * @returns {{version: string, services: Object<string, any>, volumes: Object<string, any>}}
 */
function swarmStack(doc, { nodeId }) {
  const services = {};
  for (const [name, svc] of Object.entries(doc.services)) {
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
    services[name] = out;
  }
  const volumes = {};
  for (const [name, v] of Object.entries(doc.volumes || {}))
    volumes[name] = v && v.external ? { external: true, name: v.name } : {};
  return { version: '3.8', services, volumes };
}

module.exports = { swarmStack, DROPPED };
