'use strict';
// An attached geth behind a balancer that answers HTTP 503 to 30% of calls
// from the start: the steps before the window retry (and count) what failed,
// the run completes, and the window reports the 503s as its error rate.

const assert = require('node:assert/strict');
const http = require('node:http');
const { startRun, readRun } = require('./harness');
const { startGeth } = require('./node');
const { schemaErrors, tmpDir, writeScenario } = require('../helpers');

/** A proxy in front of url that answers 503 to 3 calls in 10, the others forwarded. */
async function startFlakyBalancer(url) {
  let n = 0;
  const target = new URL(url);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (n++ % 10 < 3) {
        res.writeHead(503, { 'content-type': 'text/plain' });
        return res.end('no backend available');
      }
      const up = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: '/',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
        },
        (r) => {
          res.writeHead(r.statusCode, { 'content-type': 'application/json' });
          r.pipe(res);
        },
      );
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      up.end(Buffer.concat(chunks));
    });
  });
  server.keepAliveTimeout = 60000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close(), count: () => n };
}

describe('an endpoint behind a balancer that answers 503 to 30% of calls', () => {
  let node;
  let lb;
  before(async () => {
    node = await startGeth();
    lb = await startFlakyBalancer(node.rpcUrl);
  });
  after(async () => {
    if (lb) lb.close();
    if (node) await node.stop();
  });

  it("the run completes: calls before the window retried and counted, the window's error rate reported", async () => {
    const file = writeScenario(
      tmpDir(),
      'flaky',
      [
        'RUNTIME=attach',
        `RPC_URL=${lb.url}`,
        `NODE_PID=${node.pid}`,
        'CREATE_HISTORY=yes',
        'ALLOW_WRITES=yes',
        'HISTORY_TRANSFERS=24',
        'HISTORY_CONTRACT_CALLS=8',
        'WORKLOAD=eth-reads-light',
        'CONCURRENCY=8',
        'WARMUP_S=0',
        'IDLE_S=0',
        'DURATION_S=8',
      ].join('\n'),
    );
    const res = await startRun(file).done;
    assert.equal(res.code, 0, res.stderr);
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.ok(run.retries.calls > 10, JSON.stringify(run.retries));
    // sync makes a few calls: which of them meet a 503 depends on the order of calls, so it is not required here
    for (const step of ['history', 'harvest'])
      assert.ok(run.retries.by_phase[step] > 0, `${step}: ${JSON.stringify(run.retries)}`);
    assert.deepEqual(Object.keys(run.retries.by_reason), ['HTTP 503']);
    assert.match(res.stderr, /failed \(HTTP 503\) during (provision|sync|history|harvest): retrying/);
    const f = run.figures;
    const rate = f.requests_failed / (f.requests_ok + f.requests_failed);
    assert.ok(rate > 0.25 && rate < 0.35, `window error rate ${rate}`);
    assert.ok(
      run.warnings.some((w) => /calls before the window .* were tried again/.test(w)),
      run.warnings.join('\n'),
    );
  });
});
