'use strict';
// Attach mode: chainperf measures a geth it did not start, reading its CPU
// from the node's metrics endpoint, and leaves it running. Then a fleet it
// did not start: two geth nodes behind an HAProxy of the test's own, read
// through each replica's metrics endpoint (REPLICA_METRICS), and the same
// fleet losing a replica's metrics endpoint inside the window.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, watchCpu, readRun, untilLoaded, LIGHT_LOAD } = require('./harness');
const { startGeth } = require('./node');
const { schemaErrors, tmpDir, writeScenario } = require('../helpers');
const { renderConfig, startHaproxy, HEALTH_BODY } = require('../../src/runtime/haproxy');
const { ensureDebianTool } = require('../../src/install/debian');
const { freePorts } = require('../../src/util/net');

describe('attach runtime: a running geth measured through its metrics endpoint', () => {
  let node;
  let res;
  let run;
  let cpuWatch;

  before(async () => {
    node = await startGeth();
    const file = writeScenario(
      tmpDir(),
      'attach-geth',
      [
        'RUNTIME=attach',
        `RPC_URL=${node.rpcUrl}`,
        `METRICS_URL=${node.metricsUrl}`,
        'CREATE_HISTORY=yes',
        'ALLOW_WRITES=yes', // history is transactions: a node chainperf did not start gets them only when allowed
        'HISTORY_TRANSFERS=40',
        'HISTORY_CONTRACT_CALLS=24',
        'CONCURRENCY=16',
        'WARMUP_S=2',
        'IDLE_S=3',
        'DURATION_S=9',
        'MIN_RPS=1', // holds
        'MAX_P99_MS=0.001', // cannot hold: the verdict must fail on it alone
      ].join('\n'),
    );
    cpuWatch = watchCpu(() => node.pid);
    res = await startRun(file).done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });
  after(() => node && node.stop());

  it('runs to a valid ok report', () => {
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.runtime, 'attach');
    assert.match(run.provenance.client.version, /^Geth\/v1\.16\.7/);
    assert.equal(path.basename(path.dirname(res.reportDir)), 'attach-geth');
  });

  it("aligns the window to the counter's 3 s refreshes and reports total CPU without a user/system split", () => {
    assert.equal(run.node.cpu_source.kind, 'metrics');
    assert.equal((run.window.end_ms - run.window.start_ms) % 3000, 0);
    assert.equal(run.node.cpu_user_s, null);
    assert.equal(run.node.cpu_system_s, null);
    assert.ok(run.figures.requests_ok > 500);
    assert.ok(
      Math.abs(run.figures.cpu_ms_per_request - (run.node.cpu_total_s * 1000) / run.figures.requests_ok) < 1e-5,
    );
  });

  it('node CPU agrees with an independent reading of /proc/PID/stat', () => {
    const independent = cpuWatch.cpuAt(run.window.end_ms) - cpuWatch.cpuAt(run.window.start_ms);
    const measured = run.node.cpu_total_s;
    assert.ok(
      Math.abs(independent - measured) / measured < 0.08,
      `chainperf ${measured} s, /proc ${independent.toFixed(3)} s`,
    );
  });

  it('validates the deployment: exit status 1 naming the bound that failed, and only that one', () => {
    assert.equal(res.code, 1);
    assert.equal(run.verdict.pass, false);
    assert.equal(run.verdict.failed.length, 1);
    assert.match(run.verdict.failed[0], /^MAX_P99_MS=0\.001: latency_ms\.p99 was \d/);
    assert.match(res.stderr, /verdict: FAIL: MAX_P99_MS=0\.001/);
    assert.match(fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'), /\*\*Verdict: FAIL\*\*/);
  });

  it('leaves the node running', () => {
    assert.ok(node.alive());
  });
});

/** Two geth nodes of their own behind an HAProxy of the test's, and a scenario that attaches to them as a fleet. */
async function attachedFleet(name, extra = []) {
  // two dev chains of their own, started together so that their heads stay within the blocks the harvest leaves
  // below the head it sees (a real fleet shares one chain; these only need to answer the same reads)
  const nodes = await Promise.all([startGeth(), startGeth()]);
  const { port, statsPort } = await freePorts(['port', 'statsPort']);
  const bin = await ensureDebianTool('haproxy', 'haproxy', (m) => process.stderr.write(`${m}\n`));
  const servers = nodes.map((n, i) => ({
    name: `geth-${i + 1}`,
    host: '127.0.0.1',
    port: Number(new URL(n.rpcUrl).port),
  }));
  const config = renderConfig({ port, statsPort, servers, algorithm: 'roundrobin', healthBody: HEALTH_BODY });
  const lb = await startHaproxy({ bin, dir: tmpDir('chainperf-lb-'), config, port, statsPort });
  const file = writeScenario(
    tmpDir(),
    name,
    [
      'RUNTIME=attach',
      `RPC_URL=${lb.url}`,
      `REPLICA_METRICS=${nodes.map((n) => n.metricsUrl).join(',')}`,
      'CREATE_HISTORY=no', // two separate dev chains: reads only
      'WORKLOAD=method:eth_getBlockByNumber',
      'CONCURRENCY=16',
      'WARMUP_S=2',
      'IDLE_S=3',
      'DURATION_S=9',
      ...extra,
    ].join('\n'),
  );
  const stop = async () => {
    await lb.stop();
    await Promise.all(nodes.map((n) => n.stop()));
  };
  return { nodes, lb, file, stop };
}

describe("attach runtime: a fleet that already runs, read through each replica's metrics endpoint", () => {
  let fleet;
  let nodes;
  const watches = [];
  let res;
  let run;

  before(async () => {
    fleet = await attachedFleet('attach-fleet');
    nodes = fleet.nodes;
    for (const n of nodes) watches.push(watchCpu(() => n.pid));
    res = await startRun(fleet.file).done;
    watches.forEach((w) => w.stop());
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });
  after(async () => {
    watches.forEach((w) => w.stop());
    if (fleet) await fleet.stop();
  });

  it("runs to a valid ok report that records the fleet as the user's", () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.fleet.replicas, 2);
    assert.equal(run.fleet.algorithm, null);
    assert.equal(run.node.cpu_source.kind, 'metrics');
  });

  it("gives each replica its requests, share and CPU from its own counters; the fleet's CPU is their sum", () => {
    const f = run.node.fleet;
    assert.ok(
      f.replicas.every((r) => r.share > 0.3 && r.requests > 100),
      JSON.stringify(f.replicas),
    );
    const clients = run.figures.requests_ok + run.figures.requests_failed;
    // each replica's span is as long as the window and within half a refresh (1.5 s) of its edges
    assert.ok(Math.abs(f.requests - clients) / clients < 0.2, `replicas ${f.requests}, clients ${clients}`);
    const sum = f.replicas.reduce((t, r) => t + r.cpu_s, 0);
    assert.ok(Math.abs(sum - run.node.cpu_total_s) < 1e-5, `replicas ${sum} s, fleet ${run.node.cpu_total_s} s`);
  });

  it("each replica's CPU agrees with /proc/PID/stat over its own span", () => {
    run.node.fleet.replicas.forEach((r, i) => {
      const [a, b] = r.span_ms;
      const independent = watches[i].cpuAt(b) - watches[i].cpuAt(a);
      assert.ok(
        Math.abs(independent - r.cpu_s) / r.cpu_s < 0.1,
        `${r.name}: chainperf ${r.cpu_s} s, /proc ${independent.toFixed(3)} s`,
      );
    });
  });

  it('leaves the fleet running', () => {
    assert.ok(nodes.every((n) => n.alive()));
  });
});

describe('attach runtime: a fleet replica whose metrics endpoint dies mid-window is recorded lost, the window kept', () => {
  let fleet;
  let res;
  let run;
  let killedAt;

  before(async () => {
    fleet = await attachedFleet('attach-fleet-lost');
    const r = startRun(fleet.file, LIGHT_LOAD); // a test of a replica lost, not of the window's figures
    await untilLoaded(r, fleet.nodes[1].metricsUrl, { afterS: 2 });
    killedAt = Date.now();
    await fleet.nodes[1].stop(); // replica-2 goes, its metrics endpoint with it
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });
  after(async () => {
    if (fleet) await fleet.stop();
  });

  it('ends with a valid report whose window was measured, and a warning naming the replica', () => {
    assert.equal(res.code, 0, res.stderr.slice(-2000));
    assert.deepEqual(schemaErrors(run), []);
    assert.ok(run.figures.requests_ok > 100);
    assert.ok(
      run.warnings.some((w) => /replica replica-2's metrics endpoint stopped answering/.test(w)),
      JSON.stringify(run.warnings),
    );
  });

  it("records replica-2 lost at the end edge, replica-1 measured, and no fleet CPU (the lost one's is unknown)", () => {
    const f = run.node.fleet;
    assert.equal(f.replicas_lost.length, 1, JSON.stringify(f.replicas_lost));
    const [lost] = f.replicas_lost;
    assert.equal(lost.replica, 'replica-2');
    assert.equal(lost.at_ms, run.window.end_ms);
    assert.ok(lost.at_ms > killedAt);
    assert.ok(lost.reason.length > 0);
    const [one, two] = f.replicas;
    assert.ok(one.cpu_s > 0 && one.requests > 100 && one.up_at_end, JSON.stringify(one));
    assert.equal(two.cpu_s, null);
    assert.equal(two.requests, null);
    assert.equal(two.up_at_end, false);
    assert.equal(run.node.cpu_total_s, null);
    assert.equal(run.figures.cpu_ms_per_request, null);
    assert.match(fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'), /\*\*replica-2 lost\*\*/);
  });

  it('leaves the replica that stayed running', () => {
    assert.ok(fleet.nodes[0].alive());
  });
});
