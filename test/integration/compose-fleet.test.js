'use strict';
// REPLICAS=2 in the compose runtime on a real Docker engine: the node service
// and a replica-2 service behind HAProxy (a service built locally), on a
// network of one more geth node, each on a copy of STATE=small in its
// volume. Each replica's requests from HAProxy's own counters add up to the
// clients'; each replica's CPU agrees with its container's cgroup read by
// this test; replica-2's container is killed in
// the window (FAULT) and the other replica takes its traffic without the
// window stalling; the project goes down whole. Then SYNC=network: each
// replica service starts at the profile's genesis block and syncs in turn.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, readRun, watchContainerCpu, assertBalancerCounts, assertReplicaCpu } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const docker = require('../../src/platform/docker');

/** The running container of a service of the run's compose project. */
async function serviceContainer(project, service) {
  const filter = encodeURIComponent(
    JSON.stringify({ label: [`com.docker.compose.project=${project}`, `com.docker.compose.service=${service}`] }),
  );
  const r = await docker.engine('GET', `/containers/json?filters=${filter}`);
  return r.body.length ? r.body[0].Id : null;
}

/** What both runs share: two replicas and a network node in the compose runtime, loaded by the lean engine. */
const FLEET = {
  RUNTIME: 'compose',
  GRAFANA: 'no',
  REPLICAS: '2',
  NETWORK_NODES: '1',
  PEERS: '4',
  GENERATOR: 'lean',
};

describe('REPLICAS=2 in the compose runtime: two geth services behind an HAProxy service', () => {
  let res;
  let run;
  let project;
  const watches = {};
  const limits = {};

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      ...FLEET,
      DURATION_S: '12',
      FAULT: 'kill-replica@6s',
      WARMUP_S: '2',
      IDLE_S: '4',
      STATE: 'small',
      MEMORY_MB: '2048',
    });
    await r.waitFor(/starting compose project (\S+)/);
    project = /starting compose project (\S+)/.exec(r.stderrText())[1];
    watches['replica-1'] = watchContainerCpu(() => serviceContainer(project, 'node'));
    watches['replica-2'] = watchContainerCpu(() => serviceContainer(project, 'replica-2'));
    await r.waitFor(/measure: measuring for/);
    for (const [name, svc] of [
      ['replica-1', 'node'],
      ['replica-2', 'replica-2'],
    ]) {
      const { HostConfig } = await docker.inspectContainer(await serviceContainer(project, svc));
      limits[name] = { memory: HostConfig.Memory, swap: HostConfig.MemorySwap };
    }
    res = await r.done;
    for (const w of Object.values(watches)) w.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  after(() => Object.values(watches).forEach((w) => w.stop()));

  it('exits 0 with a valid run.json; the balancer configuration names the replicas by service', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.fleet.replicas, 2);
    const cfg = fs.readFileSync(path.join(res.reportDir, 'haproxy.cfg'), 'utf8');
    assert.match(cfg, /^ {2}server replica-1 node:8545 check$/m);
    assert.match(cfg, /^ {2}server replica-2 replica-2:8545 check$/m);
  });

  it('gives every replica and the network node a copy of the STATE profile in its own volume', () => {
    assert.equal(run.state.profile, 'small');
    assert.match(res.stderr, /STATE=small: copied \S+ into volume \S+-state/, "the node service's (replica-1's) own");
    assert.match(res.stderr, /network: copying STATE=small into the volumes of replica-2, network-1/);
  });

  it("MEMORY_MB applies to each replica: every replica's container has the limit, memory and swap", () => {
    const bytes = 2048 * 1024 * 1024;
    assert.deepEqual(limits, {
      'replica-1': { memory: bytes, swap: bytes },
      'replica-2': { memory: bytes, swap: bytes },
    });
    assert.equal(run.node.limits.applies_to, 'each replica');
  });

  it("counts each replica's requests from HAProxy; they add up to the clients' and to Prometheus' scrapes of both", () => {
    assertBalancerCounts(run, res.reportDir);
    const f = run.node.fleet;
    const byReplica = run.node.rpc_requests_by_replica;
    const seen = `${JSON.stringify(byReplica)} requests by Prometheus' scrapes, ${JSON.stringify(f.replicas.map((r) => r.requests))} by HAProxy`;
    assert.ok(byReplica['replica-1'] > 0, seen);
    // replica-2, killed 6 s in, by its scrapes before; one whose scrapes all failed in the window (1 s scrape timeout,
    // a loaded machine) must be named, not counted as zero
    if (byReplica['replica-2'] === null)
      assert.ok(
        run.node.rpc_requests_unscraped.includes('replica-2') &&
          run.warnings.some((x) => /no scrape of replica-2 inside the window/.test(x)),
        `${seen}; warnings: ${run.warnings.join('\n')}`,
      );
    else assert.ok(byReplica['replica-2'] > 0, seen);
    assert.equal(run.node.rpc_requests, byReplica['replica-1'] + (byReplica['replica-2'] || 0));
    assert.ok(
      f.replicas.every((r) => r.latency_ms && r.latency_ms.p50 !== null),
      'from the access log',
    );
  });

  it("each replica's CPU agrees within 3% with its container's cgroup, read by this test; the fleet's is their sum", () => {
    assertReplicaCpu(run, watches); // the killed replica by its last reading
    const sum = run.node.fleet.replicas.reduce((t, r) => t + r.cpu_s, 0);
    assert.ok(Math.abs(sum - run.node.cpu_total_s) / run.node.cpu_total_s < 0.05);
  });

  it("a killed replica's container: the other replica takes its traffic at once, the window does not stall", () => {
    const f = run.node.fleet;
    assert.ok(f.fault, `no fault in the window; the run's warnings: ${JSON.stringify(run.warnings)}`);
    assert.equal(f.fault.replica, 'replica-2');
    assert.deepEqual(
      f.replicas.map((r) => r.up_at_end),
      [true, false],
    );
    assert.equal(f.fault.served_by_killed_after, 0);
    // requests in flight to a vanished address get no reset: without HAProxy's 1 s connect and check time-outs and
    // its marking a replica down on live traffic's failures, they waited about 16 s and every user with them
    assert.ok(run.figures.latency_ms.max < 8000, `max latency ${run.figures.latency_ms.max} ms`);
    // the others took the traffic: a stall serves nothing (how much they serve in the 6 s left depends on the machine's
    // load, which the replicas share with two other test files)
    assert.ok(f.fault.served_by_others_after > 0.1 * f.fault.served_before, JSON.stringify(f.fault));
    assert.equal(typeof f.fault.client_errors_after, 'number');
    assert.ok(
      run.warnings.some((x) => /replica replica-2 exited/.test(x)),
      run.warnings.join('\n'),
    );
  });

  it('brings the project down with every volume', async () => {
    assert.deepEqual(await docker.projectLeftovers(project), { containers: [], volumes: [], networks: [] });
  });
});

describe('REPLICAS=2 with SYNC=network in the compose runtime: each replica service snap-syncs the state in turn', () => {
  let res;
  let run;
  let project;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      ...FLEET,
      RATE: '100', // an open loop: a test of the syncs, not of the window's figures
      SYNC: 'network',
      STATE: 'small',
      DURATION_S: '8',
      WARMUP_S: '2',
      IDLE_S: '4',
    });
    await r.waitFor(/starting compose project (\S+)/);
    project = /starting compose project (\S+)/.exec(r.stderrText())[1];
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it("gives replica-2's volume the profile's genesis block alone, the network node's the state", () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.match(res.stderr, /copying STATE=small's genesis block alone into the volumes of replica-2/);
    assert.match(res.stderr, /copying STATE=small into the volumes of network-1/);
  });

  it("syncs both replicas from the network, one after another, each with its container's own CPU", () => {
    const reps = run.sync.replicas;
    assert.deepEqual(
      reps.map((x) => x.replica),
      ['replica-1', 'replica-2'],
    );
    for (const x of reps) {
      assert.equal(x.sync_mode, 'snap');
      assert.equal(x.start_head, 0, JSON.stringify(x));
      assert.ok(x.head > 0 && x.p2p_in_bytes > 100000 && x.cpu_s > 0, JSON.stringify(x));
      assert.equal(x.state_check.equal, true);
    }
    for (const r of run.node.fleet.replicas) assert.ok(r.requests > 50, JSON.stringify(r));
  });

  it('brings the project down with every volume', async () => {
    assert.deepEqual(await docker.projectLeftovers(project), { containers: [], volumes: [], networks: [] });
  });
});
