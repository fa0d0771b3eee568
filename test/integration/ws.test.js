'use strict';
// TRANSPORT=ws on a real geth: the lean engine over geth's WebSocket in the
// host runtime, and an attached geth that serves JSON-RPC over WebSocket only,
// whose JSON-RPC errors must be counted as failures.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, watchGethCpu, readRun, artilleryCount, assertScrapedClose } = require('./harness');
const { startGeth } = require('./node');
const { schemaErrors, tmpDir, writeScenario, ROOT } = require('../helpers');

describe("TRANSPORT=ws, host runtime: the lean engine over geth's WebSocket", () => {
  let res;
  let run;
  let cpuWatch;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      TRANSPORT: 'ws',
      GENERATOR: 'lean',
      DURATION_S: '5',
      WARMUP_S: '2',
      IDLE_S: '2',
      HISTORY_TRANSFERS: '16',
      HISTORY_CONTRACT_CALLS: '8',
      MAX_ERROR_RATE: '0',
    });
    cpuWatch = watchGethCpu(r.tmp);
    res = await r.done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('runs the default mix over ws to an ok report, every method answered, none failed', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.scenario.TRANSPORT, 'ws');
    assert.match(res.stderr, /workload over WebSocket at ws:\/\/127\.0\.0\.1:\d+/);
    assert.equal(run.figures.requests_failed, 0, JSON.stringify(run.errors));
    assert.ok(run.figures.requests_ok > 500, `requests_ok ${run.figures.requests_ok}`);
    assert.equal(Object.keys(run.figures.methods).length, 10);
  });

  it("its counts agree with artillery's counters and the node's; node and generator CPU per request are measured", () => {
    assert.equal(artilleryCount(res.reportDir, 'chainperf.ok.'), run.figures.requests_ok);
    assertScrapedClose(run); // geth's rpc_requests through Prometheus: close, not exact, at the edges
    const independent = cpuWatch.cpuAt(run.node.cpu_window.end_ms) - cpuWatch.cpuAt(run.node.cpu_window.start_ms);
    assert.ok(
      Math.abs(independent - run.node.cpu_total_s) / run.node.cpu_total_s < 0.05,
      `chainperf ${run.node.cpu_total_s} s, /proc ${independent.toFixed(3)} s`,
    );
    assert.ok(run.figures.cpu_ms_per_request > 0);
    assert.ok(run.generator.cpu_us_per_request > 0);
    assert.match(
      fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'),
      /Load generator \(chainperf's lean engine over WebSocket\)/,
    );
  });
});

describe('TRANSPORT=ws, attach: a geth that serves only WebSocket, and its JSON-RPC errors', () => {
  let node;
  let res;
  let run;

  before(async () => {
    // --rpc.gascap 21000 leaves eth_call and eth_estimateGas too little gas: geth answers them with JSON-RPC errors.
    node = await startGeth({ transport: 'ws', extra: ['--rpc.gascap', '21000'] });
    const file = writeScenario(
      tmpDir(),
      'attach-ws',
      [
        'RUNTIME=attach',
        `RPC_URL=${node.rpcUrl}`,
        `NODE_PID=${node.pid}`,
        'CREATE_HISTORY=yes',
        'ALLOW_WRITES=yes', // history is transactions: a node chainperf did not start gets them only when allowed
        'HISTORY_TRANSFERS=16',
        'HISTORY_CONTRACT_CALLS=8',
        'GENERATOR=lean',
        'CONCURRENCY=8',
        'WARMUP_S=1',
        'IDLE_S=1',
        'DURATION_S=4',
      ].join('\n'),
    );
    res = await startRun(file).done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });
  after(() => node && node.stop());

  it('the sync check, history and harvest went over ws; the transport follows RPC_URL', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.scenario.TRANSPORT, 'ws');
    assert.match(run.provenance.scenario_sources.TRANSPORT, /^RPC_URL \(ws:\/\//);
    assert.ok(run.history && run.history.txs > 16, 'history was created through the WebSocket');
    assert.ok(node.alive());
  });

  it("counts geth's JSON-RPC errors as failures of their methods, and the other methods as answered", () => {
    const m = run.figures.methods;
    for (const failing of ['eth_call', 'eth_estimateGas']) {
      assert.ok(
        m[failing].requests_failed > 0 && m[failing].requests_ok === 0,
        `${failing}: ${JSON.stringify(m[failing])}`,
      );
      assert.equal(m[failing].failures.rpc, m[failing].requests_failed);
    }
    for (const [name, x] of Object.entries(m)) {
      if (name !== 'eth_call' && name !== 'eth_estimateGas')
        assert.ok(x.requests_ok > 0 && x.requests_failed === 0, `${name}: ${JSON.stringify(x)}`);
    }
    assert.equal(run.figures.requests_failed, m.eth_call.requests_failed + m.eth_estimateGas.requests_failed);
    assert.equal(run.figures.failures.rpc, run.figures.requests_failed);
    assert.ok(
      Object.keys(run.errors).every((msg) => /^JSON-RPC -32000: /.test(msg)),
      JSON.stringify(run.errors),
    );
    assert.equal(artilleryCount(res.reportDir, 'chainperf.failed.rpc'), run.figures.requests_failed);
  });
});
