'use strict';
// REPLICAS=2 on the host runtime: two geth replicas on a one-node network,
// each on its own copy of STATE=small, behind a real HAProxy; one replica is killed on purpose inside the window
// (FAULT=kill-replica@6s) and the fleet keeps serving, the lag check (LB_LAG_CHECK) draining the dead one. Then
// one frozen (SIGSTOP) for 9 s: HAProxy takes it out of rotation and puts it back. Last,
// SYNC=network: each replica starts at the genesis and syncs from its peers.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, processesWith, readRun, memoryLimitsOf } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');

const GETH_DEV = path.join(ROOT, 'scenarios', 'geth-dev.env');
/** Both runs: two replicas and one network node, each on a copy of STATE=small, the lean generator. */
const FLEET = {
  REPLICAS: '2',
  NETWORK_NODES: '1',
  PEERS: '4',
  GENERATOR: 'lean',
  WARMUP_S: '2',
  IDLE_S: '2',
  STATE: 'small',
};

describe('REPLICAS=2 behind HAProxy, one killed in the window', () => {
  let res;
  let run;
  let tmp;
  const limits = {};

  before(async () => {
    // MAX_HEAD_LAG_S turns the lag check on (LB_LAG_CHECK's default for a fleet): a bound no live replica reaches
    const r = startRun(GETH_DEV, {
      ...FLEET,
      FAULT: 'kill-replica@6s',
      DURATION_S: '12',
      MEMORY_MB: '2048',
      MAX_HEAD_LAG_S: '30',
    });
    tmp = r.tmp;
    await r.waitFor(/measure: measuring for/);
    for (const name of ['replica-1', 'replica-2']) {
      const geth = processesWith(tmp).find((x) => x.cmd.includes(`/${name}/data`) && !x.cmd.startsWith('sh '));
      limits[name] = geth ? memoryLimitsOf(geth.pid) : null;
    }
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 with a valid run.json; the balancer configuration, generated from the scenario, is in the report', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.fleet.replicas, 2);
    assert.equal(run.fleet.algorithm, 'roundrobin');
    const cfg = fs.readFileSync(path.join(res.reportDir, 'haproxy.cfg'), 'utf8');
    const server =
      /^ {2}server replica-\d 127\.0\.0\.1:\d+ check agent-check agent-addr 127\.0\.0\.1 agent-port \d+ agent-inter 1000$/gm;
    assert.equal((cfg.match(server) || []).length, 2, 'each replica: its health check and its lag agent');
    assert.match(cfg, /eth_blockNumber/, 'the health check is a JSON-RPC call');
  });

  it('starts each replica on its own copy of the STATE profile, as the network node', () => {
    assert.equal(run.state.profile, 'small');
    assert.match(
      res.stderr,
      /starting 2 replicas of geth, each on cpus \S+ in its own cgroup and on its own copy of STATE=small/,
    );
    assert.match(res.stderr, /network: starting 1 more geth nodes on cpus [^,]+, each on a copy of STATE=small/);
    assert.ok(
      !/copied .* into the run's data directory/.test(res.stderr),
      'no copy for a node under test a fleet has not',
    );
  });

  it('MEMORY_MB applies to each replica: its own group has the limit, memory and swap (read from the kernel)', () => {
    const bytes = 2048 * 1024 * 1024;
    assert.deepEqual(limits, {
      'replica-1': { memory: bytes, memsw: bytes },
      'replica-2': { memory: bytes, memsw: bytes },
    });
    assert.equal(run.node.limits.applies_to, 'each replica');
    assert.equal(run.node.limits.memory_bytes, bytes);
  });

  it("counts each replica's requests from HAProxy, and they add up to what the clients got", () => {
    const f = run.node.fleet;
    const sum = f.replicas.reduce((t, r) => t + r.requests, 0);
    assert.equal(sum, f.requests);
    const clients = run.figures.requests_ok + run.figures.requests_failed;
    assert.ok(Math.abs(sum - clients) / clients < 0.05, `HAProxy ${sum}, clients ${clients}`);
    assert.ok(Math.abs(f.replicas[0].share + f.replicas[1].share - 1) < 0.001);
    assert.ok(f.balancer.cpu_s > 0 && f.balancer.cpu_ms_per_request > 0);
  });

  it("Prometheus beside the fleet scrapes every replica: the request counters' rise is the fleet's", () => {
    const clients = run.figures.requests_ok + run.figures.requests_failed;
    const counted = run.node.rpc_requests;
    const byReplica = run.node.fleet.replicas.map((r) => r.requests);
    assert.ok(typeof counted === 'number', `node.rpc_requests: ${counted}`);
    // Scrapes a second apart, so approximate at the edges, and the killed replica counts up to its last scrape (on a
    // loaded machine seconds before the kill): bounds, not equality. A replica scraped alone would count its own.
    const detail = `Prometheus ${counted}, clients ${clients}, HAProxy per replica ${byReplica}`;
    assert.ok(counted > 0.6 * clients && counted < 1.1 * clients, detail);
    assert.ok(counted > Math.max(...byReplica), detail);
    // each replica's rise apart (its series' replica label), and they make the sum
    const rises = run.node.rpc_requests_by_replica;
    assert.deepEqual(Object.keys(rises), ['replica-1', 'replica-2'], JSON.stringify(rises));
    assert.equal(rises['replica-1'] + rises['replica-2'], counted, JSON.stringify(rises));
  });

  it("reads each replica's own peers (each has the network node), not only the watched one's", () => {
    const byReplica = run.node.network.peers_by_replica;
    assert.deepEqual(
      byReplica.map((r) => r.replica),
      ['replica-1', 'replica-2'],
    );
    assert.equal(byReplica[0].max, 1, JSON.stringify(byReplica));
    assert.equal(byReplica[1].max, 1, 'replica-2 had its peer until it was killed');
    assert.ok(byReplica[0].samples >= byReplica[1].samples, 'a killed replica answers no more reads');
  });

  it("the fleet's CPU is its replicas' CPU together", () => {
    const replicas = run.node.fleet.replicas.reduce((t, r) => t + r.cpu_s, 0);
    const fleet = run.node.cpu_total_s;
    assert.ok(Math.abs(replicas - fleet) / fleet < 0.05, `replicas ${replicas} s, fleet ${fleet} s`);
  });

  it('the killed replica is named; the other one took its traffic', () => {
    const f = run.node.fleet;
    assert.ok(f.fault, `no fault in the window; the run's warnings: ${JSON.stringify(run.warnings)}`);
    assert.equal(f.fault.replica, 'replica-2');
    assert.equal(f.fault.served_by_killed_after, 0);
    assert.ok(f.fault.served_by_others_after > 1000, JSON.stringify(f.fault));
    assert.equal(f.replicas[1].up_at_end, false);
    assert.equal(f.replicas[0].up_at_end, true);
    assert.ok(f.replicas[0].share > f.replicas[1].share);
    assert.ok(
      run.warnings.some((w) => /replica replica-2 exited/.test(w)),
      run.warnings.join('\n'),
    );
    assert.match(fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'), /Fault kill-replica/);
  });

  it("LB_LAG_CHECK: HAProxy asks each replica's agent every second; the killed one, its head no longer seen, is drained", () => {
    assert.equal(run.fleet.lag_check.bound_s, 30);
    const w = run.node.fleet.lag_check;
    const seconds = (run.window.end_ms - run.window.start_ms) / 1000;
    for (const r of w.replicas) assert.ok(r.answers >= seconds / 2, `${r.replica} asked ${r.answers} times`);
    assert.equal(w.replicas[0].drain_answers, 0, 'replica-1 keeps up');
    const drained = w.changes.filter((c) => c.replica === 'replica-2' && c.answer === 'drain');
    assert.equal(drained.length, 1, JSON.stringify(w.changes));
    // 2 s without an answered look, counted from the last look answered before the kill (not from the kill)
    const quiet = drained[0].reason.match(/no look at its head answered for ([\d.]+) s/);
    assert.ok(quiet && Number(quiet[1]) >= 2, drained[0].reason);
    const killedAt = run.node.fleet.fault.at_ms;
    assert.ok(drained[0].at_ms > killedAt, `drained ${drained[0].at_ms - killedAt} ms after the kill`);
    assert.ok(drained[0].at_ms < killedAt + 10000, `drained ${drained[0].at_ms - killedAt} ms after the kill`);
    for (const c of w.changes)
      assert.ok(
        run.fleet.lag_check.changes.some((x) => x.at_ms === c.at_ms),
        'in the run too',
      );
    assert.match(fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'), /replica-2: \*\*drained\*\* at /);
  });

  it('draws the replicas side by side over the window, from each second of the access log', () => {
    const series = JSON.parse(fs.readFileSync(path.join(res.reportDir, 'series.json'), 'utf8'));
    const perSecond = series.replicas;
    assert.ok(perSecond.length >= 11, `${perSecond.length} seconds`);
    const killedAt = run.node.fleet.fault.at_ms;
    const late = perSecond.filter((p) => p.t_ms >= killedAt + 1000);
    assert.ok(late.length && late.every((p) => p.ok['replica-2'] === 0), 'nothing from the killed replica after it');
    assert.ok(
      perSecond.some((p) => p.ok['replica-2'] > 0),
      'replica-2 served before it was killed',
    );
    assert.match(fs.readFileSync(path.join(res.reportDir, 'charts', 'replicas.svg'), 'utf8'), /replica-1/);
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
  });
});

describe('REPLICAS=2 behind HAProxy: a replica frozen in the window is taken out of rotation, then put back', () => {
  let res;
  let run;
  let tmp;
  const froze = {};

  before(async () => {
    const r = startRun(GETH_DEV, { ...FLEET, RATE: '200', DURATION_S: '24' });
    tmp = r.tmp;
    await r.waitFor(/measure: measuring for \d+ s from (\S+)/);
    const start = Date.parse(/measure: measuring for \d+ s from (\S+)/.exec(r.stderrText())[1]);
    await new Promise((ok) => setTimeout(ok, Math.max(0, start + 4000 - Date.now())));
    const replica = processesWith(tmp).find((x) => x.cmd.includes('/replica-2/data') && !x.cmd.startsWith('sh '));
    assert.ok(replica, 'replica-2 runs');
    // frozen: its sockets still accept connections, nothing answers (a hung node, not a dead one)
    process.kill(replica.pid, 'SIGSTOP');
    froze.at = Date.now();
    await new Promise((ok) => setTimeout(ok, 9000));
    process.kill(replica.pid, 'SIGCONT');
    froze.until = Date.now();
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it("records when HAProxy took it out of rotation (its health check's reason) and put it back, both in the window", () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    const events = run.node.fleet.rotation.filter((e) => e.replica === 'replica-2');
    assert.deepEqual(
      events.map((e) => e.state),
      ['down', 'up'],
      JSON.stringify(run.node.fleet.rotation),
    );
    assert.ok(events[0].seen_at_ms > froze.at && events[0].seen_at_ms < froze.until, 'out while frozen');
    assert.ok(events[1].seen_at_ms > froze.until, 'back once it answers again');
    assert.ok(events[0].reason, 'the reason HAProxy logged');
    assert.equal(run.node.fleet.replicas[1].up_at_end, true);
    assert.deepEqual(run.node.fleet.replicas_lost, [], 'frozen, not lost');
  });

  it("says so in the run's warnings and in summary.md", () => {
    assert.ok(
      run.warnings.some((w) => /HAProxy took replica-2 out of rotation \(seen at .*\), and back at /.test(w)),
      run.warnings.join('\n'),
    );
    assert.match(fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'), /HAProxy took replica-2 out of/);
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
  });
});

describe('REPLICAS=2 with SYNC=network: each replica starts at the genesis and snap-syncs the state from its peers', () => {
  let res;
  let run;
  let tmp;

  before(async () => {
    const r = startRun(GETH_DEV, { ...FLEET, RATE: '100', SYNC: 'network', DURATION_S: '6' }); // a test of the syncs
    tmp = r.tmp;
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('starts each replica with the profile genesis block alone, not a copy of the state', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.match(
      res.stderr,
      /starting 2 replicas of geth, each on cpus \S+ in its own cgroup, each with STATE=small's genesis block alone/,
    );
  });

  it("syncs them one after another, each to the network's head with its own bytes and CPU, its state checked", () => {
    const reps = run.sync.replicas;
    assert.deepEqual(
      reps.map((x) => x.replica),
      ['replica-1', 'replica-2'],
    );
    for (const x of reps) {
      assert.equal(x.mode, 'network');
      assert.equal(x.sync_mode, 'snap');
      assert.equal(x.start_head, 0, JSON.stringify(x));
      assert.ok(x.head > 0 && x.blocks === x.head, JSON.stringify(x));
      assert.ok(
        x.p2p_in_bytes > 100000,
        `${x.replica} received ${x.p2p_in_bytes} bytes: the state came from its peers`,
      );
      assert.ok(x.cpu_s > 0, JSON.stringify(x));
      assert.equal(x.state_check.equal, true);
    }
    assert.equal(run.sync.seconds, reps[0].seconds, "the record's own figures are replica-1's");
    assert.match(fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'), /- replica-2: from block 0 to \d+/);
  });

  it('both replicas serve the window once synced', () => {
    for (const r of run.node.fleet.replicas) assert.ok(r.requests > 50, JSON.stringify(r));
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
  });
});
