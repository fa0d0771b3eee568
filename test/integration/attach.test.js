'use strict';
// Attach mode: chainperf measures a geth it did not start, reading its CPU
// from the node's metrics endpoint, and leaves it running. Then a fleet it
// did not start: two geth nodes behind an HAProxy of the test's own, read
// through each replica's metrics endpoint (REPLICA_METRICS).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, watchCpu, readRun } = require('./harness');
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

describe("attach runtime: a fleet that already runs, read through each replica's metrics endpoint", () => {
  const nodes = [];
  const watches = [];
  let lb;
  let res;
  let run;

  before(async () => {
    // two dev chains of their own, started together so that their heads stay within the blocks the harvest leaves
    // below the head it sees (a real fleet shares one chain; these only need to answer the same reads)
    nodes.push(...(await Promise.all([startGeth(), startGeth()])));
    const { port, statsPort } = await freePorts(['port', 'statsPort']);
    const bin = await ensureDebianTool('haproxy', 'haproxy', (m) => process.stderr.write(`${m}\n`));
    const servers = nodes.map((n, i) => ({
      name: `geth-${i + 1}`,
      host: '127.0.0.1',
      port: Number(new URL(n.rpcUrl).port),
    }));
    const config = renderConfig({ port, statsPort, servers, algorithm: 'roundrobin', healthBody: HEALTH_BODY });
    lb = await startHaproxy({ bin, dir: tmpDir('chainperf-lb-'), config, port, statsPort });
    const file = writeScenario(
      tmpDir(),
      'attach-fleet',
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
      ].join('\n'),
    );
    for (const n of nodes) watches.push(watchCpu(() => n.pid));
    res = await startRun(file).done;
    watches.forEach((w) => w.stop());
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });
  after(async () => {
    watches.forEach((w) => w.stop());
    if (lb) await lb.stop();
    await Promise.all(nodes.map((n) => n.stop()));
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
