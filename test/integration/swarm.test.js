'use strict';
// RUNTIME=swarm on a real Docker Swarm (test-swarm.js makes one when the
// engine is in none: the integration runner for all its files, or this file
// when it runs alone), of one node, then of two: the compose
// runtime's stack deployed with `docker stack deploy`, with a network of two
// more geth nodes (NETWORK_NODES=2) as services of the stack; the node's CPU
// checked against its container's own cgroup counter read by this test, the
// cpusets, the peers, and nothing left of the stack afterwards. Then a fleet
// (REPLICAS=2 behind HAProxy) on the same swarm joined by a worker (a Docker
// engine in a container: swarm-worker/), whose own cAdvisor Prometheus scrapes
// beside this machine's: HAProxy's counts against the
// clients', each replica's CPU against its container's cgroup, on STATE=small
// synced from the network (SYNC=network: each replica starts with the
// profile's genesis block alone and snap-syncs in turn), with MEMORY_MB on
// each replica and two generators. Then the node alone on the worker
// (SWARM_NODE), the generator and Prometheus here: its CPU from the worker's
// cAdvisor against its container's cgroup, and nothing of it left there.

const assert = require('node:assert/strict');
const os = require('node:os');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const {
  startRun,
  readRun,
  watchContainerCpu,
  assertBalancerCounts,
  assertReplicaCpu,
  KILLED_LATE_CPU_S,
} = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const docker = require('../../src/platform/docker');
const swarm = require('../../src/platform/swarm');
const { imageSpecs } = require('../../src/runtime/images');
const geth = require('../../src/clients/geth');
const { startSwarmWorker } = require('./swarm-worker');
const { holdSwarm } = require('./test-swarm');

/** What swarm.stackLeftovers says of a stack that is wholly removed. */
const NOTHING = { services: [], containers: [], volumes: [], networks: [], configs: [], secrets: [] };

let held = null;
let worker = null;

before(async () => {
  held = await holdSwarm();
});

after(async () => {
  if (worker) await worker.remove();
  if (held) held.leave();
});

/** The images a worker may need: the local build and the upstream one of each. */
const workerImageSpecs = () =>
  imageSpecs({
    CLIENT: 'geth',
    CLIENT_VERSION: geth.defaults.CLIENT_VERSION,
    GRAFANA: 'no',
    BALANCER: 'haproxy',
    SWARM_GENERATOR_NODES: 'worker',
  });

/** Builds the images the worker may need here (`./run.sh images`). */
function buildImages() {
  execFileSync(path.join(ROOT, 'run.sh'), ['images', path.join(ROOT, 'scenarios', 'geth-dev.env')], {
    stdio: 'pipe',
    // BALANCER (which needs NETWORK_NODES) so that HAProxy's image exists to load on the worker on a fresh machine
    env: {
      ...process.env,
      RUNTIME: 'swarm',
      SWARM_GENERATOR_NODES: 'worker',
      GRAFANA: 'no',
      BALANCER: 'haproxy',
      NETWORK_NODES: '1',
    },
  });
}

/**
 * A second node for the swarm, once: cAdvisor (a global service) runs there too, and SWARM_NODE places the node and
 * SWARM_BALANCER_NODE HAProxy there, so it gets the images of the three that the runs may choose (the local build or
 * the upstream one).
 */
async function ensureWorker() {
  if (worker) return;
  const { cadvisor, node, haproxy, generator } = workerImageSpecs();
  // SWARM_GENERATOR_NODES places a generator there: its image, built from this checkout, goes there too
  buildImages();
  const refs = [
    cadvisor.local,
    cadvisor.upstream,
    node.local,
    node.upstream,
    haproxy.local,
    haproxy.upstream,
    generator.local,
  ];
  const images = refs.filter((ref) => {
    try {
      execFileSync('docker', ['image', 'inspect', ref], { stdio: 'pipe' });
      return true;
    } catch {
      return false;
    }
  });
  worker = await startSwarmWorker(images);
}

/**
 * The generator image of this checkout as it is now, on the worker: its tag is a hash of the sources (src/,
 * workloads/), which an edit made while the tests run changes; the run then builds the image for the sources it
 * sees, which the worker must have too. (test/unit/mix.test.js once wrote into workloads/; it writes into a copy.)
 */
async function generatorOnWorker() {
  const ref = workerImageSpecs().generator.local;
  try {
    execFileSync('docker', ['image', 'inspect', ref], { stdio: 'pipe' });
  } catch {
    buildImages();
  }
  const there = await worker.docker(['image', 'inspect', ref]).then(
    () => true,
    () => false,
  );
  if (!there) await worker.load([ref]);
}

/** The node's CPU over its window (cAdvisor through Prometheus) within 3% of its container's cgroup, read here. */
function assertNodeCpu(run, cpuWatch) {
  const w = run.node.cpu_window;
  const independent = cpuWatch.cpuAt(w.end_ms) - cpuWatch.cpuAt(w.start_ms);
  const measured = run.node.cpu_total_s;
  assert.ok(Math.abs(independent - measured) / measured < 0.03, `chainperf ${measured} s, cgroup ${independent} s`);
}

/** The name of the stack a run deploys, once its log says it deploys it. */
async function deployedStack(r) {
  await r.waitFor(/deploying swarm stack (\S+)/);
  return /deploying swarm stack (\S+)/.exec(r.stderrText())[1];
}

/** The cAdvisor targets Prometheus scrapes: each one's URL, health and last scrape error. */
async function cadvisorTargets(promUrl) {
  const body = await (await fetch(`${promUrl}/api/v1/targets?state=active`)).json();
  return body.data.activeTargets
    .filter((x) => x.labels.job === 'cadvisor')
    .map((x) => ({ url: x.scrapeUrl, health: x.health, error: x.lastError }));
}

/** The running container of a service of a stack, or null. */
async function taskContainer(name, service) {
  const c = (await swarm.stackContainers(name, service)).find((x) => x.State === 'running');
  return c ? c.Id : null;
}

describe('RUNTIME=swarm: geth --dev as a stack on a one-machine swarm', () => {
  let res;
  let run;
  let name;
  let cpuset = null;
  let peerCpuset = null;
  let cpuWatch;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      RUNTIME: 'swarm',
      GRAFANA: 'no',
      NETWORK_NODES: '2',
      PEERS: '6',
      DURATION_S: '10',
      WARMUP_S: '2',
      IDLE_S: '4',
      HISTORY_TRANSFERS: '30',
      HISTORY_CONTRACT_CALLS: '16',
    });
    name = await deployedStack(r);
    const nodeId = () => taskContainer(name, 'node');
    cpuWatch = watchContainerCpu(nodeId);
    await r.waitFor(/measure: measuring for/);
    cpuset = (await docker.inspectContainer(await nodeId())).HostConfig.CpusetCpus;
    const peer = (await swarm.stackContainers(name, 'network-1')).find((x) => x.State === 'running');
    peerCpuset = peer ? (await docker.inspectContainer(peer.Id)).HostConfig.CpusetCpus : null;
    res = await r.done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  after(() => {
    if (cpuWatch) cpuWatch.stop(); // also when the run failed before its window: its timer would keep mocha alive
  });

  it('exits 0 with a valid run.json that records the stack and how it is reached', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.provenance.runtime, 'swarm');
    assert.equal(run.stack.swarm.stack, name);
    assert.equal(run.stack.swarm.endpoint_mode, 'dnsrr');
    assert.equal(typeof run.stack.swarm.ipvs, 'boolean');
    assert.match(run.node.container, new RegExp(`^${name}_node\\.1\\.`));
  });

  it("pins the node's container to CORES and the network's to the other core (a swarm has no cpuset of its own)", () => {
    assert.equal(cpuset, '0');
    assert.equal(run.node.cpus, '0');
    assert.equal(peerCpuset, '1');
  });

  it('the network nodes are tasks of the stack, peered with the node by service name, gossiping to it', () => {
    assert.deepEqual(
      run.network.containers.map((c) => c.replace(/\.1\.\w+$/, '')),
      [`${name}_network-1`, `${name}_network-2`],
    );
    const n = run.node.network;
    assert.equal(n.peers.max, 2, JSON.stringify(n.peers));
    assert.ok(n.gossip_transactions_in > 0 && n.network_nodes_cpu_s > 0, JSON.stringify(n));
  });

  it("node CPU (cAdvisor through Prometheus) agrees within 3% with the container's cgroup, read by this test", () => {
    assertNodeCpu(run, cpuWatch);
  });

  it('removes the stack: no service, container, volume or network left', async () => {
    assert.deepEqual(await swarm.stackLeftovers(name), NOTHING);
  });
});

describe('RUNTIME=swarm with REPLICAS=2 on STATE=small synced from the network, MEMORY_MB and GENERATORS=2 on SWARM_GENERATOR_NODES=<worker>,<this machine>: two geth services behind an HAProxy service of the stack, load from a generator on each swarm node', () => {
  let res;
  let run;
  let name;
  let here;
  const cpusets = {};
  const memory = {};
  const watches = {};

  let targets;
  let workerCadvisor;

  before(async () => {
    await ensureWorker();
    await generatorOnWorker();
    here = await swarm.swarmState();
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      RUNTIME: 'swarm',
      GRAFANA: 'no',
      REPLICAS: '2',
      NETWORK_NODES: '1',
      PEERS: '4',
      GENERATOR: 'lean',
      GENERATORS: '2',
      SWARM_GENERATOR_NODES: `${worker.hostname},${here.hostname}`,
      STATE: 'small',
      SYNC: 'network',
      MEMORY_MB: '2048',
      DURATION_S: '10',
      WARMUP_S: '2',
      IDLE_S: '4',
    });
    name = await deployedStack(r);
    watches['replica-1'] = watchContainerCpu(() => taskContainer(name, 'node'));
    watches['replica-2'] = watchContainerCpu(() => taskContainer(name, 'replica-2'));
    const idOf = (svc) => async () => {
      const t = (await swarm.serviceTasks(name, svc)).find((x) => x.Status.State === 'running');
      return t ? t.Status.ContainerStatus.ContainerID : null;
    };
    watches['generator-0'] = watchContainerCpu(idOf('generator-0'), { parent: worker.cgroupParent });
    watches['generator-1'] = watchContainerCpu(idOf('generator-1'));
    await r.waitFor(/measure: measuring for/);
    targets = await cadvisorTargets(/Prometheus at (\S+),/.exec(r.stderrText())[1]);
    workerCadvisor = (await swarm.serviceTasks(name, 'cadvisor')).find((x) => x.NodeID === worker.nodeId);
    for (const svc of ['node', 'replica-2', 'haproxy']) {
      const { HostConfig } = await docker.inspectContainer(await taskContainer(name, svc));
      cpusets[svc] = HostConfig.CpusetCpus;
      memory[svc] = { memory: HostConfig.Memory, swap: HostConfig.MemorySwap };
    }
    res = await r.done;
    for (const w of Object.values(watches)) w.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  after(() => Object.values(watches).forEach((w) => w.stop()));

  it('exits 0 with a valid run.json; HAProxy, a service of the stack, found both replicas by name', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.provenance.runtime, 'swarm');
    assert.equal(run.fleet.replicas, 2);
    assert.deepEqual(cpusets, { node: '0', 'replica-2': '0', haproxy: '1' }, 'replicas on CORES, HAProxy beside them');
  });

  it("runs on a swarm of two nodes: the worker's own cAdvisor task runs, and Prometheus scrapes both nodes' cAdvisors", () => {
    assert.equal(run.stack.swarm.nodes, 2);
    assert.equal(workerCadvisor && workerCadvisor.Status.State, 'running', JSON.stringify(workerCadvisor));
    assert.deepEqual(
      targets.map((t) => t.health),
      ['up', 'up'],
      JSON.stringify(targets),
    );
  });

  it("counts each replica's requests from HAProxy; they add up to the clients'", () => {
    assertBalancerCounts(run, res.reportDir);
  });

  it("the network node starts on a copy of the STATE profile, each replica on the profile's genesis block alone, restored into volumes of this engine", () => {
    assert.equal(run.state.profile, 'small');
    assert.match(
      res.stderr,
      /STATE=small: copied \S+genesis-only into volume \S+-state/,
      "the node service's (replica-1's)",
    );
    assert.match(res.stderr, /copying STATE=small's genesis block alone into the volumes of replica-2/);
    assert.match(res.stderr, /network: copying STATE=small into the volumes of network-1/);
  });

  it('SYNC=network: each replica snap-synced the state from the network in turn, with its own bytes and CPU', () => {
    assert.deepEqual(
      run.sync.replicas.map((x) => x.replica),
      ['replica-1', 'replica-2'],
    );
    for (const x of run.sync.replicas) {
      assert.equal(x.sync_mode, 'snap');
      assert.equal(x.start_head, 0, JSON.stringify(x));
      assert.ok(x.head > 0 && x.p2p_in_bytes > 100000 && x.cpu_s > 0, JSON.stringify(x));
      assert.equal(x.state_check.equal, true);
    }
  });

  it('MEMORY_MB applies to each replica: the limit in its service, memory and swap on its container; none on HAProxy', () => {
    const bytes = 2048 * 1024 * 1024;
    assert.deepEqual(memory, {
      node: { memory: bytes, swap: bytes },
      'replica-2': { memory: bytes, swap: bytes },
      haproxy: { memory: 0, swap: 0 },
    });
    assert.equal(run.node.limits.applies_to, 'each replica');
  });

  it('SWARM_GENERATOR_NODES: generator 0 a task on the worker, 1 a task here, their clocks checked; both shared the load', () => {
    const gens = run.generator.generators;
    assert.deepEqual(
      gens.map((g) => g.node),
      [worker.hostname, here.hostname],
    );
    assert.ok(
      gens.every((g) => g.requests > 0 && g.workers > 0),
      JSON.stringify(gens),
    );
    const placed = run.stack.swarm.generator_placement.generators;
    assert.ok(
      placed.every((g) => Math.abs(g.clock_offset_ms) <= 50),
      JSON.stringify(placed),
    );
    assert.match(res.stderr, /SWARM_GENERATOR_NODES: generators 0 on \S+ \(\S+, clock -?\d+ ms off\), 1 on/);
    // every latency of both came back: the clients' count (assertBalancerCounts: HAProxy's) is the sum of theirs
    assert.equal(gens[0].requests + gens[1].requests, run.figures.requests_ok + run.figures.requests_failed);
  });

  it("each generator's CPU (its agent's reading of its cgroup) agrees within 3% with its container's cgroup, read by this test", () => {
    for (const g of run.generator.generators) {
      const watch = watches[`generator-${g.index}`];
      const independent = watch.cpuAt(run.window.end_ms) - watch.cpuAt(run.window.start_ms);
      assert.ok(
        Math.abs(independent - g.cpu_s) / g.cpu_s < 0.03,
        `generator ${g.index}: chainperf ${g.cpu_s} s, cgroup ${independent} s`,
      );
    }
    const sum = run.generator.generators.reduce((a, g) => a + g.cpu_s, 0);
    assert.ok(Math.abs(run.generator.cpu_s - sum) < 0.01 * sum, `${run.generator.cpu_s} against ${sum}`);
  });

  it("each replica's CPU agrees within 3% with its container's cgroup, read by this test", () => {
    assertReplicaCpu(run, watches);
  });

  it('removes the stack: no service, container, volume or network left', async () => {
    assert.deepEqual(await swarm.stackLeftovers(name), NOTHING);
  });
});

describe('RUNTIME=swarm with SWARM_NODE=<worker>,<this machine>, SWARM_BALANCER_NODE=<worker>, REPLICAS=2 and FAULT: the node and HAProxy on the worker, replica-2 placed here and killed through the swarm, a network node and the generator here', () => {
  let res;
  let run;
  let name;
  let here;
  let tasks;
  const watches = {};
  let volumesBefore;
  let memory;

  before(async () => {
    await ensureWorker();
    here = await swarm.swarmState();
    volumesBefore = await worker.docker(['volume', 'ls', '-q']);
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      RUNTIME: 'swarm',
      GRAFANA: 'no',
      SWARM_NODE: `${worker.hostname},${here.hostname}`,
      SWARM_BALANCER_NODE: worker.hostname,
      REPLICAS: '2',
      NETWORK_NODES: '1',
      DURATION_S: '10',
      FAULT: 'kill-replica@2s', // through the swarm: it lands some 3 s after its order
      MEMORY_MB: '2048',
      WARMUP_S: '2',
      IDLE_S: '4',
      HISTORY_TRANSFERS: '30',
      HISTORY_CONTRACT_CALLS: '16',
    });
    name = await deployedStack(r);
    const taskOf = async (svc) => (await swarm.serviceTasks(name, svc)).find((t) => t.Status.State === 'running');
    const idOf = (svc) => async () => {
      const t = await taskOf(svc);
      return t ? t.Status.ContainerStatus.ContainerID : null;
    };
    watches['replica-1'] = watchContainerCpu(idOf('node'), { parent: worker.cgroupParent });
    watches['replica-2'] = watchContainerCpu(idOf('replica-2'));
    watches.haproxy = watchContainerCpu(idOf('haproxy'), { parent: worker.cgroupParent });
    await r.waitFor(/measure: measuring for/);
    tasks = { node: await taskOf('node'), 'replica-2': await taskOf('replica-2'), haproxy: await taskOf('haproxy') };
    const limitsOn = async (inspect) => (await inspect).trim().split(' ').map(Number);
    const format = ['inspect', '--format', '{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}}'];
    memory = {
      node: await limitsOn(worker.docker([...format, tasks.node.Status.ContainerStatus.ContainerID])),
      'replica-2': await limitsOn(
        docker
          .inspectContainer(tasks['replica-2'].Status.ContainerStatus.ContainerID)
          .then((c) => `${c.HostConfig.Memory} ${c.HostConfig.MemorySwap}`),
      ),
    };
    res = await r.done;
    Object.values(watches).forEach((w) => w.stop());
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  after(() => Object.values(watches).forEach((w) => w.stop()));

  it("exits 0 with a valid run.json; the node's task ran on the worker, replica-2's here by its hostname, the generator on every core here", () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(tasks.node && tasks.node.NodeID, worker.nodeId, JSON.stringify(tasks.node && tasks.node.Status));
    assert.equal(tasks['replica-2'] && tasks['replica-2'].NodeID, here.nodeId);
    const placed = run.stack.swarm.node_placement;
    assert.equal(placed.node, worker.hostname);
    assert.deepEqual(placed.replicas, { 'replica-2': here.hostname });
    assert.equal(placed.cpu_quota, 1, 'CORES=1 as a quota of one CPU, on each');
    assert.equal(run.node.cpus, null, 'no cores of this machine');
    assert.equal(run.node.cpu_check, undefined, 'no engine reached there for a cross-check');
    assert.ok(!run.node.steal, "this machine's steal time is not the node's");
    assert.equal(run.generator.cpus, null, 'the generator not held to the cores CORES leaves: the node is elsewhere');
    assert.equal(run.generator.cores, os.cpus().length);
    const summary = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    assert.match(summary, new RegExp(`node on swarm node ${worker.hostname} with a quota of 1 CPU`));
    assert.match(summary, new RegExp(`replica-2 on ${here.hostname}`));
    assert.ok(run.figures.requests_ok > 100, `requests_ok ${run.figures.requests_ok}`);
    assert.match(res.stderr, new RegExp(`SWARM_NODE=${worker.hostname},${here.hostname}: node on ${worker.hostname}`));
  });

  it('MEMORY_MB: the limit on each replica, placed or not; the swap limit only here, the swap used there measured', () => {
    const bytes = 2048 * 1024 * 1024;
    assert.equal(memory.node[0], bytes, `on the worker: ${memory.node}`);
    assert.notEqual(memory.node[1], bytes, 'no engine here reaches it to set its swap');
    assert.deepEqual(memory['replica-2'], [bytes, bytes], 'here, memory and swap pinned by this engine');
    assert.deepEqual(run.node.limits.swarm.swap_not_limited_on, [worker.hostname]);
    assert.equal(run.node.limits.swarm.engine_memory_and_swap, bytes);
    const placed = run.node.fleet.replicas.find((r) => r.name === 'replica-1');
    const noSwap = !fs.readFileSync('/proc/swaps', 'utf8').trim().includes('\n'); // a header line alone
    assert.ok(Number.isFinite(placed.swap_peak_bytes), JSON.stringify(placed));
    if (noSwap) assert.equal(placed.swap_peak_bytes, 0);
    const summary = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    assert.match(summary, new RegExp(`swap not limited on ${worker.hostname} .*replica-1 0\\.00 MiB`));
  });

  it("each replica's container wrote the network's genesis itself (config and secret from the swarm), then peered with the network node", () => {
    assert.match(res.stderr, /network: writing the network's genesis into the volumes of network-1\n/, 'no replica');
    const n = run.node.network;
    assert.ok(n.gossip_transactions_in > 0, JSON.stringify(n));
    const log = fs.readFileSync(path.join(res.reportDir, 'node.log'), 'utf8');
    assert.match(log, /Successfully wrote genesis state/, "geth init's own line, in the node's log");
  });

  it("HAProxy on the worker served both replicas over the stack's network; its counts add up to the clients'", () => {
    assert.equal(tasks.haproxy && tasks.haproxy.NodeID, worker.nodeId, 'SWARM_BALANCER_NODE placed it there');
    const placed = run.stack.swarm.balancer_placement;
    assert.equal(placed.node, worker.hostname);
    const at = new RegExp(
      `HAProxy \\(roundrobin\\) at http://${placed.address}:\\d+ in front of 2 replicas, on ${worker.hostname}`,
    );
    assert.match(res.stderr, at, 'the workload reached it at the worker');
    assert.equal(run.fleet.balancer_cpus, null, 'no cores of this machine');
    assertBalancerCounts(run, res.reportDir);
  });

  it("HAProxy's CPU from the worker's cAdvisor over its own samples' span agrees within 3% with its container's cgroup", () => {
    const b = run.node.fleet.balancer;
    const [from, to] = b.span_ms;
    assert.ok(from >= run.window.start_ms && to <= run.window.end_ms, JSON.stringify(b));
    const independent = watches.haproxy.cpuAt(to) - watches.haproxy.cpuAt(from);
    assert.ok(Math.abs(independent - b.cpu_s) / b.cpu_s < 0.03, `chainperf ${b.cpu_s} s, cgroup ${independent} s`);
    assert.ok(b.cpu_ms_per_request > 0, JSON.stringify(b));
  });

  it('FAULT: replica-2, placed by the swarm, killed by scaling its service to 0; the node took its traffic, the run says so', () => {
    const f = run.node.fleet;
    assert.ok(f.fault, `no fault in the window; the run's warnings: ${JSON.stringify(run.warnings)}`);
    assert.equal(f.fault.replica, 'replica-2');
    assert.match(
      f.fault.how,
      new RegExp(`scaled to 0 through the swarm's managers, its container stopped by ${here.hostname} with SIGKILL`),
    );
    const { ordered_ms: ordered, at_ms: at, reported_ms: reported, gone_ms: gone } = f.fault;
    assert.ok(ordered <= at && at <= reported && reported <= gone, JSON.stringify(f.fault));
    assert.ok(f.fault.at_ms < run.window.end_ms, 'it landed inside the window');
    assert.deepEqual(
      f.replicas.map((r) => r.up_at_end),
      [true, false],
    );
    assert.equal(f.fault.served_by_killed_after, 0);
    assert.ok(f.fault.served_by_others_after > 0, JSON.stringify(f.fault));
    const lost = f.replicas_lost.find((x) => x.replica === 'replica-2');
    assert.ok(lost && ['shutdown', 'removed'].includes(lost.task), `its task: ${JSON.stringify(f.replicas_lost)}`);
    assert.ok(
      run.warnings.some((x) => /replica replica-2 exited/.test(x)),
      run.warnings.join('\n'),
    );
  });

  it("each replica's CPU from its node's cAdvisor over its own samples' span agrees within 3% with its container's cgroup, read by this test", () => {
    for (const r of run.node.fleet.replicas) {
      const [from, to] = r.span_ms;
      assert.ok(watches[r.name], r.name);
      assert.ok(from >= run.window.start_ms && to <= run.window.end_ms, JSON.stringify(r));
      // The killed replica's span can end on cAdvisor's reading of its cgroup a moment after the kill, later than
      // this test's last reading before the cgroup went: that reading stands for the end, KILLED_LATE_CPU_S at most
      // short.
      const killed = !r.up_at_end;
      const independent = watches[r.name].cpuAt(to, { afterLast: killed }) - watches[r.name].cpuAt(from);
      const late = killed ? KILLED_LATE_CPU_S : 0;
      assert.ok(
        independent - r.cpu_s < 0.03 * r.cpu_s && r.cpu_s - independent < 0.03 * r.cpu_s + late,
        `${r.name}: chainperf ${r.cpu_s} s, cgroup ${independent} s`,
      );
      assert.ok(r.memory_bytes > 10e6, `${r.name}: its working set from cAdvisor, ${r.memory_bytes} bytes`);
    }
    assert.match(run.node.fleet.source, /cAdvisor/);
  });

  it('removes the stack: nothing left of it here (its config and secret included), nor on the worker, its data volume included', async () => {
    assert.deepEqual(await swarm.stackLeftovers(name), NOTHING);
    let left;
    for (let i = 0; i < 60; i++) {
      left = await worker.docker(['ps', '-aq', '--filter', `label=com.docker.stack.namespace=${name}`]);
      if (!left) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(left, '', "the node's container on the worker");
    assert.equal(await worker.docker(['volume', 'ls', '-q']), volumesBefore, "the worker's volumes as before the run");
  });
});

describe('RUNTIME=swarm with REPLICAS=2: Ctrl-C', () => {
  it('removes the stack, its replicas and HAProxy with it, and the report says it was interrupted', async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      RUNTIME: 'swarm',
      GRAFANA: 'no',
      REPLICAS: '2',
      NETWORK_NODES: '1',
      PEERS: '4',
      HISTORY_TRANSFERS: '8',
      HISTORY_CONTRACT_CALLS: '4',
    });
    const name = await deployedStack(r);
    await r.waitFor(/HAProxy \(roundrobin\) at/);
    assert.ok(await taskContainer(name, 'haproxy'), 'HAProxy runs as a task of the stack');
    r.child.kill('SIGINT');
    const res = await r.done;
    assert.equal(res.code, 1, res.stderr);
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /interrupted by SIGINT/);
    assert.deepEqual(await swarm.stackLeftovers(name), NOTHING);
    // the volumes the network's genesis was written into before the deploy carry Compose's labels
    assert.deepEqual(await docker.projectLeftovers(name), { containers: [], volumes: [], networks: [] });
  });
});
