// @ts-check
'use strict';
// Docker Swarm through the engine's own API: whether this engine is a manager
// of an active swarm, whether the kernel has IPVS (the routing mesh's load
// balancer), a deployed stack's services, tasks and containers, and its removal
// (services, then its containers, volumes and networks once they are gone).

const fs = require('node:fs');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const docker = require('./docker');
const { sleep } = require('../util/time');

const NAMESPACE = 'com.docker.stack.namespace';
const filterOf = (labels) => encodeURIComponent(JSON.stringify({ label: labels }));

/** This engine's part in a swarm: {active, manager, nodeId, hostname, addr}; active false outside one. */
async function swarmState() {
  const r = await docker.engine('GET', '/info');
  if (r.status !== 200) throw new Error(`Docker engine: /info: HTTP ${r.status}`);
  const sw = r.body.Swarm || {};
  return {
    active: sw.LocalNodeState === 'active',
    manager: Boolean(sw.ControlAvailable),
    nodeId: sw.NodeID || null,
    hostname: r.body.Name,
    addr: sw.NodeAddr || null,
    nodes: sw.Nodes || 0,
  };
}

/** The swarm's nodes as a manager lists them: [{id, hostname, addr, state, availability, role}]. */
async function swarmNodes() {
  const r = await docker.engine('GET', '/nodes');
  if (r.status !== 200) throw new Error(`Docker engine: /nodes: HTTP ${r.status}`);
  return r.body.map((n) => ({
    id: n.ID,
    hostname: n.Description.Hostname,
    addr: n.Status.Addr,
    state: n.Status.State,
    availability: n.Spec.Availability,
    role: n.Spec.Role,
  }));
}

/**
 * A service's log through the swarm (`docker service logs`): its tasks' output wherever they run (tail: a count of
 * lines, or 'all'; stdoutOnly: their standard output alone, as an access log written there).
 * @param {string} service
 * @param {{tail?: number|string, stdoutOnly?: boolean}} [opts]
 */
async function serviceLogs(service, { tail = 2000, stdoutOnly = false } = {}) {
  const r = await promisify(execFile)('docker', ['service', 'logs', '--raw', '--tail', String(tail), service], {
    maxBuffer: 1 << 30,
  });
  return stdoutOnly ? r.stdout : `${r.stdout}${r.stderr}`;
}

/**
 * Whether this kernel has IPVS, which the swarm's routing mesh (ingress ports, virtual-IP services) needs; without it
 * a service published through the mesh never answers.
 */
function ipvsAvailable(procFile = '/proc/net/ip_vs') {
  return fs.existsSync(procFile);
}

/** The containers (all states) of a stack's service, or of the whole stack. */
async function stackContainers(stack, service = null) {
  const labels = [`${NAMESPACE}=${stack}`, ...(service ? [`com.docker.swarm.service.name=${stack}_${service}`] : [])];
  const r = await docker.engine('GET', `/containers/json?all=true&filters=${filterOf(labels)}`);
  return r.status === 200 ? r.body : [];
}

/** A stack's service's tasks, newest first, with their state and error. */
async function serviceTasks(stack, service) {
  const filters = encodeURIComponent(JSON.stringify({ service: [`${stack}_${service}`] }));
  const r = await docker.engine('GET', `/tasks?filters=${filters}`);
  if (r.status !== 200) return [];
  return r.body.sort((a, b) => Date.parse(b.CreatedAt) - Date.parse(a.CreatedAt));
}

/** Updates a stack's service through the managers, its spec changed by change(spec); what: the update, for an error. */
async function updateService(stack, service, change, what) {
  const name = encodeURIComponent(`${stack}_${service}`);
  const r = await docker.engine('GET', `/services/${name}`);
  if (r.status !== 200) throw new Error(`Docker engine: service ${stack}_${service}: HTTP ${r.status}`);
  const u = await docker.engine('POST', `/services/${name}/update?version=${r.body.Version.Index}`, {
    body: change(r.body.Spec),
  });
  if (u.status !== 200)
    throw new Error(`Docker engine: ${stack}_${service}: ${what}: HTTP ${u.status} ${JSON.stringify(u.body)}`);
}

/**
 * Scales a stack's replicated service to n tasks through the managers (`docker service scale`): the swarm node that
 * runs a task it drops stops its container with the service's stop signal, some seconds later (its agent's next
 * assignment).
 */
const scaleService = (stack, service, n) =>
  updateService(stack, service, (spec) => ({ ...spec, Mode: { Replicated: { Replicas: n } } }), `scaling to ${n}`);

/**
 * Gives a stack's service new tasks with its spec unchanged (`docker service update --force`): the managers fill a
 * slot whose task failed, which they do not on their own when the service restarts nothing.
 */
const forceUpdate = (stack, service) =>
  updateService(
    stack,
    service,
    (spec) => {
      const task = spec.TaskTemplate;
      return { ...spec, TaskTemplate: { ...task, ForceUpdate: (task.ForceUpdate || 0) + 1 } };
    },
    'updating with force',
  );

/** What is left of a stack: services, containers, volumes, networks (by the stack's namespace label). */
async function stackLeftovers(stack) {
  const f = filterOf([`${NAMESPACE}=${stack}`]);
  const s = await docker.engine('GET', `/services?filters=${f}`);
  const v = await docker.engine('GET', `/volumes?filters=${f}`);
  const n = await docker.engine('GET', `/networks?filters=${f}`);
  const c = await docker.engine('GET', `/configs?filters=${f}`);
  const k = await docker.engine('GET', `/secrets?filters=${f}`);
  return {
    services: s.status === 200 ? s.body.map((x) => x.Spec.Name) : [],
    containers: (await stackContainers(stack)).map((x) => x.Names[0].replace(/^\//, '')),
    volumes: v.status === 200 ? (v.body.Volumes || []).map((x) => x.Name) : [],
    networks: n.status === 200 ? n.body.map((x) => x.Name) : [],
    configs: c.status === 200 ? c.body.map((x) => x.Spec.Name) : [],
    secrets: k.status === 200 ? k.body.map((x) => x.Spec.Name) : [],
  };
}

/**
 * Removes a stack through the engine alone (what `docker stack rm` does, then the volumes it leaves): its services,
 * then, once their containers are gone (up to timeoutS), its volumes (unless keepVolumes), configs, secrets and
 * networks.
 */
async function removeStack(stack, { keepVolumes = false, timeoutS = 60 } = {}) {
  const left = await stackLeftovers(stack);
  for (const svc of left.services) await docker.engine('DELETE', `/services/${encodeURIComponent(svc)}`);
  const deadline = Date.now() + timeoutS * 1000;
  while ((await stackContainers(stack)).length && Date.now() < deadline) await sleep(500);
  for (const c of await stackContainers(stack))
    await docker.engine('DELETE', `/containers/${c.Id}?force=true&v=true`, { timeoutMs: 60000 });
  if (!keepVolumes)
    for (const v of left.volumes) await docker.engine('DELETE', `/volumes/${encodeURIComponent(v)}?force=true`);
  // the network's genesis and engine secret (SWARM_NODE), free once no task uses them
  for (const name of left.configs) await docker.engine('DELETE', `/configs/${encodeURIComponent(name)}`);
  for (const name of left.secrets) await docker.engine('DELETE', `/secrets/${encodeURIComponent(name)}`);
  // a network is freed a moment after its last container: try for a few seconds
  for (const name of left.networks)
    for (let k = 0; k < 20; k++) {
      const r = await docker.engine('DELETE', `/networks/${encodeURIComponent(name)}`);
      if (r.status < 300 || r.status === 404) break;
      await sleep(500);
    }
  return stackLeftovers(stack);
}

module.exports = {
  swarmState,
  swarmNodes,
  serviceLogs,
  ipvsAvailable,
  stackContainers,
  serviceTasks,
  scaleService,
  forceUpdate,
  stackLeftovers,
  removeStack,
  NAMESPACE,
};
