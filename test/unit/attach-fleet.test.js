'use strict';
// RUNTIME=attach with REPLICA_METRICS: the fleet's CPU source sums every
// replica's refreshed counter, each read at its own refresh nearest an edge,
// and each replica's requests come from the same answer as its CPU.

const assert = require('node:assert/strict');
const http = require('node:http');
const { attachedReplicas, fleetCpuSource, attachFleetHooks } = require('../../src/runtime/attach-fleet');
const { resolveScenario, redactScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

/**
 * A replica's metrics endpoint: its CPU counter (seconds since t0 times `load`) refreshed every `period` ms from its
 * own phase, like geth's every 3 s; its request counter live (`rate` per second since t0).
 */
async function replicaEndpoint({ t0, period, phaseMs, load, rate }) {
  const refreshed = () => {
    const since = Date.now() - t0 - phaseMs;
    return (Math.floor(since / period) * period * load) / 1000;
  };
  const server = http.createServer((req, res) =>
    res.end(
      `system_cpu_procload_total ${refreshed()}\nrpc_requests ${Math.floor(((Date.now() - t0) * rate) / 1000)}\n`,
    ),
  );
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/debug/metrics/prometheus`, close: () => server.close() };
}

describe('attach to a fleet (REPLICA_METRICS)', function () {
  this.timeout(30000);
  const metrics = { cpu: 'system_cpu_procload_total', requests: 'rpc_requests' };

  it("sums the replicas' CPU at each edge, each replica at its own refresh; each one's requests from the same answer", async () => {
    const t0 = Date.now();
    // refreshes 400 ms apart, replica-2's 160 ms after replica-1's: wide enough that a poll late on a busy machine
    // still tells them apart
    const a = await replicaEndpoint({ t0, period: 400, phaseMs: 0, load: 0.5, rate: 1000 });
    const b = await replicaEndpoint({ t0, period: 400, phaseMs: 160, load: 0.25, rate: 3000 });
    try {
      const replicas = attachedReplicas(`${a.url}, ${b.url}`, metrics);
      assert.deepEqual(
        replicas.map((r) => r.name),
        ['replica-1', 'replica-2'],
      );
      replicas.forEach((r) => {
        r.source = require('../../src/measure/cpu').metricsSource(r.url, metrics.cpu, {
          pollMs: 5,
          also: ['rpc_requests'],
          label: r.name,
        });
      });
      const src = fleetCpuSource(replicas);
      assert.equal(await src.calibrate(), 400);
      const hooks = attachFleetHooks(replicas, src, { requestsMetric: 'rpc_requests', cpuMetric: metrics.cpu });
      const start = src.align(Date.now() + 100);
      const window = { start, end: start + 6 * 400 };
      const first = await src.readEdge(window.start);
      const hook = hooks.windowHook(window);
      const last = await src.readEdge(window.end);
      // 2.4 s at half a core plus 2.4 s at a quarter: each replica's span is as long as the window
      assert.ok(Math.abs(last.total_s - first.total_s - 1.8) < 1e-9, `${last.total_s - first.total_s}`);
      const f = await hook.stop();
      assert.deepEqual(
        f.replicas.map((r) => r.cpu_s),
        [1.2, 0.6],
      );
      const [r1, r2] = f.replicas;
      // the request counters are live: a poll answered late on a loaded machine (one CI run: 87 ms) counts more
      assert.ok(Math.abs(r1.requests - 2400) <= 150 && Math.abs(r2.requests - 7200) <= 450, JSON.stringify(f.replicas));
      assert.ok(Math.abs(r1.share + r2.share - 1) <= 1e-4, 'the shares (each rounded to 4 places) add up to 1');
      assert.ok(r2.span_ms[0] - r1.span_ms[0] > 80, 'replica-2 read at its own refresh, not at the window edge');
      assert.ok(f.spread.cpu_per_request_max_over_min > 5, 'half a core for a third of the requests');
      assert.equal(f.balancer.cpu_s, null, 'a balancer chainperf did not start is not measured');
      assert.equal(hooks.record().algorithm, null);
      assert.match(hooks.record().per_replica, /replica-2 http:\/\/127\.0\.0\.1:\d+\/debug\/metrics\/prometheus/);
    } finally {
      a.close();
      b.close();
    }
  });

  it('a window whose start edge failed gets no per-replica figures', async () => {
    const hooks = attachFleetHooks([{ name: 'replica-1' }], { last: [{ at_ms: 1 }] }, { requestsMetric: 'x' });
    const hook = hooks.windowHook({ start: 2, end: 3 });
    assert.equal(await hook.stop(), null);
  });

  it("a replica whose metrics endpoint stops answering is lost (which, when, why); the fleet's CPU is then null", async () => {
    let down = false; // replica-2's endpoint, from the second edge on
    const calls = { 'replica-2': 0 };
    const reading = (edge, cpu) => ({ total_s: cpu, at_ms: edge, seen_ms: edge + 5, also: { rpc_requests: edge } });
    const replicas = [
      { name: 'replica-1', source: { readEdge: async (edge) => reading(edge, edge / 1000), align: (x) => x } },
      {
        name: 'replica-2',
        source: {
          readEdge: async (edge) => {
            calls['replica-2']++;
            if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:6060');
            return reading(edge, edge / 2000);
          },
        },
      },
    ];
    const src = fleetCpuSource(replicas);
    const hooks = attachFleetHooks(replicas, src, { requestsMetric: 'rpc_requests', cpuMetric: 'cpu' });
    assert.equal((await src.readEdge(1000)).total_s, 1.5);
    const hook = hooks.windowHook({ start: 1000, end: 3000 });
    down = true;
    const end = await src.readEdge(3000);
    assert.equal(end.total_s, null, "the lost replica's CPU is unknown: so is the fleet's");
    assert.equal(end.seen_ms, 3005);
    const f = await hook.stop();
    assert.deepEqual(f.replicas_lost, [
      { replica: 'replica-2', at_ms: 3000, reason: 'connect ECONNREFUSED 127.0.0.1:6060' },
    ]);
    assert.deepEqual(
      f.replicas.map((r) => [r.name, r.cpu_s, r.requests, r.up_at_end]),
      [
        ['replica-1', 2, 2000, true],
        ['replica-2', null, null, false],
      ],
    );
    assert.match(hooks.problems()[0], /replica replica-2's metrics endpoint stopped answering at .*ECONNREFUSED/);
    // a later edge does not ask the lost replica again; when no replica is left, the edge fails
    await src.readEdge(4000);
    assert.equal(calls['replica-2'], 2);
    replicas[0].source.readEdge = async () => {
      throw new Error('gone too');
    };
    await assert.rejects(src.readEdge(5000), /gone too/);
  });

  it('refuses replicas that refresh at different periods', async () => {
    const t0 = Date.now();
    const a = await replicaEndpoint({ t0, period: 100, phaseMs: 0, load: 1, rate: 1 });
    const b = await replicaEndpoint({ t0, period: 200, phaseMs: 0, load: 1, rate: 1 });
    try {
      const replicas = attachedReplicas(`${a.url},${b.url}`, metrics);
      await assert.rejects(fleetCpuSource(replicas).calibrate(), /refresh their CPU counters at different periods/);
    } finally {
      a.close();
      b.close();
    }
  });

  it('takes REPLICA_METRICS in attach only, in place of METRICS_URL and NODE_PID; keeps its URLs out of reports', () => {
    const dir = tmpDir();
    const resolve = (text) =>
      resolveScenario(writeScenario(dir, 'f.env', text), { env: {}, cpuCount: 2, dockerEngine: null });
    const ok = resolve(
      'RUNTIME=attach\nRPC_URL=http://127.0.0.1:8000\nREPLICA_METRICS=http://u:secretpw@10.0.0.1:6060/m,http://10.0.0.2:6060/m\n',
    );
    assert.deepEqual(ok.errors, []);
    const stored = redactScenario(ok.scenario).REPLICA_METRICS;
    assert.doesNotMatch(stored, /secretpw/);
    assert.match(stored, /^http:\/\/<redacted>@10\.0\.0\.1:6060\/m,http:\/\/10\.0\.0\.2:6060\/m$/);
    const { addSecretValue, scrub, resetSecrets } = require('../../src/util/scrub');
    const { KEYS } = require('../../src/scenario/keys');
    addSecretValue(KEYS.REPLICA_METRICS, ok.scenario.REPLICA_METRICS);
    assert.doesNotMatch(scrub('replica-1: GET http://u:secretpw@10.0.0.1:6060/m failed'), /secretpw/);
    resetSecrets();
    const errs = (text) => resolve(`RUNTIME=attach\nRPC_URL=http://127.0.0.1:8000\n${text}`).errors.join('\n');
    assert.match(errs('REPLICA_METRICS=http://a:1/m\nNODE_PID=1\n'), /NODE_PID: REPLICA_METRICS reads each replica/);
    assert.match(errs('REPLICA_METRICS=http://a:1/m\nMETRICS_URL=http://a:1/m\n'), /leave METRICS_URL unset/);
    assert.match(
      errs('REPLICA_METRICS=http://a:1/m,ftp://b\n'),
      /REPLICA_METRICS.*expected http:\/\/ or https:\/\/ URL/,
    );
    assert.match(
      resolve('RUNTIME=host\nREPLICA_METRICS=http://a:1/m\n').errors.join('\n'),
      /REPLICA_METRICS is only used with RUNTIME=attach/,
    );
  });
});
