'use strict';
// Where a swarm stack's containers run and how they are held to their cores.
// A swarm has no cpuset: the containers on the machine chainperf runs on are
// pinned by its engine once they run (CORES, MEMORY_MB's swap).
// SWARM_NODE: the node service on another node of the swarm than the one
// chainperf runs on. chainperf reaches no engine there: what it
// knows of the node's container comes from the swarm's managers (its task:
// state, container, exit code; its log through `docker service logs`), its
// RPC is reached at that node's address (ports in host mode), and its CPU,
// memory and disk come from that node's cAdvisor through Prometheus, which
// scrapes every node's (prometheus/compose.yml). The rendering is
// swarm-render.js's; what cannot follow the node there is refused before the
// run (runtime/checks.js).

const os = require('node:os');
const docker = require('../platform/docker');
const swarm = require('../platform/swarm');
const { cpusOf } = require('../measure/steal');
const { killPlaced, watchRemoteTasks } = require('./swarm-tasks');
const { MOUNT } = require('../network/compose-network');
const { serviceOf } = require('./compose-fleet');
const { cadvisorSource, containersCadvisorSource, sharedCounters } = require('../measure/cadvisor');

/**
 * Pins a container to cpus through this engine (a swarm has no cpuset); with a memory limit, sets its swap limit to the
 * same (a swarm has no memswap_limit).
 */
async function pin(container, cpus, memoryBytes = null) {
  const body = {
    ...(cpus ? { CpusetCpus: cpus } : {}), // none: a placed replica here keeps its quota (swarm-render.js)
    ...(memoryBytes ? { Memory: memoryBytes, MemorySwap: memoryBytes } : {}),
  };
  const r = await docker.engine('POST', `/containers/${container.id}/update`, { body });
  if (r.status !== 200)
    throw new Error(
      `cannot pin container ${container.name} to cpus ${cpus}${memoryBytes ? ` with ${memoryBytes} bytes of memory and swap` : ''}: HTTP ${r.status}`,
    );
}

/**
 * A swarm has no cpuset: the node's container and the fleet's replicas (CORES, per replica), the network's nodes and
 * HAProxy (the other cores) are pinned by this engine once they run, before anything is measured.
 */
async function pinAll(containers, p) {
  const { network, fleet } = p.around;
  const memory = p.limits ? p.limits.record.memory_bytes : null; // MEMORY_MB: the node's, each replica's
  // SWARM_NODE: CORES is the service's CPU quota there (swarm-render.js); no engine here reaches its container, but
  // one placed on this machine by its name: its swap is limited as the others' here
  const pinReplica = async (c, cpus) => {
    if (!c.remote) await pin(c, cpus, memory);
    else if (memory && placedHere(c)) await pin(c, null, memory);
  };
  await pinReplica(containers.node, p.nodeCpus);
  for (const peer of network ? network.peers : []) await pin(containers[peer.name], network.cpus);
  if (memory) p.limits.record.swarm = memoryRecord(memory, containers, fleet);
  if (!fleet) return;
  for (const r of fleet.replicas.slice(1)) await pinReplica(containers[r.service], fleet.nodeCpus);
  // SWARM_BALANCER_NODE: its cores are a CPU quota there (swarm-render.js)
  if (!containers.haproxy.remote) await pin(containers.haproxy, fleet.balancerCpus);
}

/** A container SWARM_NODE placed by name on the machine chainperf runs on, whose engine reaches it. */
const placedHere = (c) => c.remote && c.hostname === os.hostname();

/**
 * MEMORY_MB on a swarm: the limit in each replica's service; swap set to the same by this engine on those here, and on
 * those SWARM_NODE placed elsewhere not at all (no engine here reaches them; the window measures what they swapped).
 */
function memoryRecord(memory, containers, fleet) {
  const replicas = [containers.node, ...(fleet ? fleet.replicas.slice(1).map((r) => containers[r.service]) : [])];
  const away = [...new Set(replicas.filter((c) => c.remote && !placedHere(c)).map((c) => c.hostname))];
  return {
    deploy_resources_limits_memory: memory,
    engine_memory_and_swap: replicas.some((c) => !c.remote || placedHere(c)) ? memory : null,
    ...(away.length ? { swap_not_limited_on: away } : {}),
  };
}

/** A comma-separated list of swarm nodes' hostnames (SWARM_NODE, SWARM_GENERATOR_NODES), in order. */
const hostnames = (value) =>
  String(value || '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** SWARM_NODE's hostnames: the node's first, then the fleet's replicas' in turn. */
const swarmNodeNames = (s) => hostnames(s.SWARM_NODE);

/**
 * Where SWARM_NODE places the node service, with the CPU quota CORES becomes there; null when it names only the node
 * chainperf runs on (then the stack is placed as without it). With REPLICAS, `replicas` places each other replica's
 * service: replica i on the ((i - 1) mod n)-th name. A node the swarm does not list, or cannot place tasks on, is an
 * error.
 */
async function remotePlacement(s, st, nodeCpus) {
  const names = swarmNodeNames(s);
  if (!names.length || names.every((n) => n === st.hostname)) return null;
  const nodes = await swarm.swarmNodes();
  const placed = names.map((name) => placeableNode(nodes, name, 'SWARM_NODE'));
  const out = { ...placed[0], cpus: cpusOf(nodeCpus).length };
  if (s.REPLICAS > 1)
    out.replicas = Object.fromEntries(
      Array.from({ length: s.REPLICAS - 1 }, (_, k) => [serviceOf(k + 2), placed[(k + 1) % placed.length]]),
    );
  if (s.FAULT && s.REPLICAS > 1) out.killed = serviceOf(s.REPLICAS); // the last replica (fleet-hooks.js)
  return out;
}

/** A swarm node by its hostname, one that can take tasks ({hostname, id, addr}); key: the scenario's key naming it. */
function placeableNode(nodes, name, key) {
  const node = nodes.find((n) => n.hostname === name);
  if (!node)
    throw new Error(
      `${key}=${name}: the swarm has no such node (its nodes: ${nodes.map((n) => n.hostname).join(', ')})`,
    );
  if (node.state !== 'ready' || node.availability !== 'active')
    throw new Error(
      `${key}=${name}: the node is ${node.state} and ${node.availability}; the swarm places tasks only on a ready, active node`,
    );
  return { hostname: node.hostname, id: node.id, addr: node.addr };
}

/**
 * SWARM_BALANCER_NODE: the swarm node HAProxy is placed on, with the CPU quota its cores here become there; null
 * without it, or when it names the node chainperf runs on (then HAProxy is pinned here as without it).
 */
async function balancerPlacement(s, st, balancerCpus) {
  const name = String(s.SWARM_BALANCER_NODE || '').trim();
  if (!name || name === st.hostname) return null;
  return { ...placeableNode(await swarm.swarmNodes(), name, 'SWARM_BALANCER_NODE'), cpus: cpusOf(balancerCpus).length };
}

/** run.json's stack.swarm.balancer_placement: where SWARM_BALANCER_NODE placed HAProxy, and the source. */
function balancerRecord(balancer) {
  return {
    node: balancer.hostname,
    node_id: balancer.id,
    address: balancer.addr,
    cpu_quota: balancer.cpus,
    source:
      "HAProxy's CPU from that node's cAdvisor through Prometheus, between its own samples inside the window; its counters at that node's address, its access log through the swarm",
  };
}

/**
 * HAProxy on another swarm node (SWARM_BALANCER_NODE, its task's container c): its RPC and counters at that node's
 * address, its access log through the swarm (the task's standard output), its CPU from that node's cAdvisor between
 * its own first and last samples inside a window.
 */
function placedBalancer(stackName, promUrl, c, plan) {
  const counters = sharedCounters(promUrl);
  return {
    hostname: c.hostname,
    addr: c.addr,
    container: c.name,
    statsUrl: `http://${c.addr}:${plan.statsPort}/metrics`,
    rpcUrl: `http://${c.addr}:${plan.lbPort}`,
    logText: () => swarm.serviceLogs(`${stackName}_haproxy`, { tail: 'all', stdoutOnly: true }),
    cpuSpan: (start, end) => counters.edgesIn(c.name, start, end),
  };
}

/** run.json's stack.swarm.node_placement: where SWARM_NODE placed the node (and a fleet's replicas), and the source. */
function placementRecord(remote) {
  return {
    node: remote.hostname,
    node_id: remote.id,
    address: remote.addr,
    cpu_quota: remote.cpus,
    source: "the node's CPU, memory and disk from that node's cAdvisor through Prometheus; no engine cross-check",
    ...(remote.replicas
      ? {
          replicas: Object.fromEntries(Object.entries(remote.replicas).map(([svc, x]) => [svc, x.hostname])),
          source:
            "each replica's CPU and memory from its swarm node's cAdvisor through Prometheus (the fleet's CPU: every counter interpolated between its own samples at two instants inside the window); no engine cross-check",
        }
      : {}),
  };
}

/**
 * NETWORK_NODES with SWARM_NODE: what the node's container runs before the node, there, where no one-off `compose
 * run` reaches its volume: the client's init of the network's genesis, through the image's own entrypoint.
 */
async function remoteInit(p) {
  const ref = p.images.node.ref;
  const image = await docker.inspectImage(ref);
  const entrypoint = image && image.Config && image.Config.Entrypoint;
  if (!entrypoint || !entrypoint.length)
    throw new Error(`SWARM_NODE with NETWORK_NODES: image ${ref} has no entrypoint to run the client's init with`);
  const net = p.client.network;
  return { entrypoint, initArgs: net.initArgs('/data', `${MOUNT}/genesis.json`, p.s.DB_ENGINE) };
}

/**
 * A fleet SWARM_NODE placed on swarm nodes (compose-fleet.js's `placed`): each replica's container there, its CPU
 * between its own cAdvisor samples inside a window and its memory at the last (no cgroup of it here), the fleet's CPU
 * as those counters together (containersCadvisorSource), and each replica's exit from its task.
 */
function placedFleet(stackName, promUrl) {
  const counters = sharedCounters(promUrl); // each replica's counter read once a window, for its row and the fleet's
  return {
    describe:
      "each replica's cAdvisor through Prometheus (it runs on another swarm node): CPU between its first and last samples inside the window, divided by the requests HAProxy logged for it between those instants (span_ms); memory its working set at the last sample its CPU rose at (the last it ran at)",
    replica(r, c) {
      const gone = [];
      const own = cadvisorSource(promUrl, c.name);
      const fireGone = (info) => {
        for (const fn of gone.splice(0)) fn(info);
      };
      const replica = {
        name: r.name,
        service: r.service,
        container: c.name,
        id: c.id,
        task: c.task,
        host: c.addr,
        group: null,
        exited: false,
        gone,
        cpuSpan: (start, end) => counters.edgesIn(c.name, start, end),
        /** Its memory (working set) at cAdvisor's last sample in [a, b], or null; and the peak of its swap. */
        memoryIn: async (a, b) => {
          const { memory: m, swap_peak_bytes: swap } = await own.resources(a, b);
          return { memory: m.length ? m[m.length - 1].bytes : null, swap };
        },
        killing: false,
        kill: () => {
          replica.killing = true;
          return killPlaced(stackName, { service: r.service, task: c.task, hostname: c.hostname }, fireGone);
        },
        onGone: (fn) => gone.push(fn),
        fireGone,
      };
      return replica;
    },
    cpuOf: (replicas) =>
      containersCadvisorSource(
        promUrl,
        replicas.map((r) => r.container),
        counters,
      ),
    watch: (replicas, fleet, log) =>
      watchRemoteTasks(stackName, replicas, (r, exit) => {
        if (!r.killing) r.fireGone(); // a kill's own watch tells when its task stopped
        if (fleet.stopping) return;
        // its task's state too: a task the swarm removed (FAULT's scaling to 0 removes it) has no exit code left
        fleet.lost.push({ replica: r.name, at_ms: Date.now(), code: exit.code, signal: null, task: exit.status });
        log(`replica ${r.name} (task ${r.task} on ${r.host}) stopped: ${exit.status}, exit code ${exit.code}`);
      }),
  };
}

module.exports = {
  pin,
  pinAll,
  remotePlacement,
  placementRecord,
  balancerPlacement,
  balancerRecord,
  placedBalancer,
  remoteInit,
  placedFleet,
  placeableNode,
  hostnames,
};
