'use strict';
// The compose runtime's pure parts: which files a scenario combines, the
// variables they get, the Prometheus configuration, RUNTIME=auto, and the
// cAdvisor CPU source read from a stand-in Prometheus API.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const yaml = require('js-yaml');
const { composeFiles, composeEnv, prometheusConfig, projectName } = require('../../src/runtime/compose-render');
const { rulesFile, RULES } = require('../../src/runtime/prometheus-rules');
const clients = require('../../src/clients');
const {
  cadvisorSource,
  containersCadvisorSource,
  sharedCounters,
  interpolateAt,
} = require('../../src/measure/cadvisor');
const { resolveScenario } = require('../../src/scenario/resolve');
const { computeFigures, cpuPerRequestBetween } = require('../../src/figures');
const { mergeSamples, newRecorder } = require('../../src/workload/samples');
const { ROOT, tmpDir, writeScenario } = require('../helpers');

const resolve = (text, { env = {}, dockerEngine = null } = {}) =>
  resolveScenario(writeScenario(tmpDir(), 'c', text), { env, cpuCount: 2, dockerEngine });

describe('compose runtime: scenario to compose project', () => {
  it('RUNTIME=auto is compose where a Docker engine answers and host where none does, and says why', () => {
    const withDocker = resolve('', { dockerEngine: '20.10.24' });
    assert.equal(withDocker.scenario.RUNTIME, 'compose');
    assert.match(withDocker.sources.RUNTIME, /auto: a Docker engine 20\.10\.24 answers/);
    const without = resolve('');
    assert.equal(without.scenario.RUNTIME, 'host');
    assert.match(without.sources.RUNTIME, /no Docker engine answers/);
    assert.equal(
      resolve('RUNTIME=host\n', { dockerEngine: '20.10.24' }).scenario.RUNTIME,
      'host',
      'an explicit RUNTIME is kept',
    );
  });

  it('compose-only keys are refused with another runtime, and SNAPSHOT needs NODE_VOLUME', () => {
    const r = resolve('RUNTIME=host\nKEEP=volume\nNODE_VOLUME=geth-data\n');
    assert.equal(r.errors.length, 2);
    assert.match(r.errors[0], /KEEP is only used with RUNTIME=compose or swarm \(RUNTIME is host\)/);
    assert.match(r.errors[1], /NODE_VOLUME is only used with RUNTIME=compose \(RUNTIME is host\)/);
    const snap = resolve('RUNTIME=compose\nSNAPSHOT=/nonexistent/snap.tar\n');
    assert.ok(
      snap.errors.some((e) => /SNAPSHOT is unpacked into NODE_VOLUME/.test(e)),
      snap.errors.join('\n'),
    );
    assert.ok(
      snap.errors.some((e) => /SNAPSHOT: no such file/.test(e)),
      snap.errors.join('\n'),
    );
    assert.match(resolve('RUNTIME=compose\nNODE_VOLUME=bad/name\n').errors[0], /expected a Docker volume name/);
    const short = resolve('RUNTIME=compose\nDURATION_S=3\nIDLE_S=2\n').errors;
    assert.match(short[0], /DURATION_S: at least 5 s with RUNTIME=compose \(cAdvisor samples every 1 to 2 s/);
    assert.match(short[1], /IDLE_S: at least 4 s .*or 0 for no idle baseline/);
    assert.deepEqual(resolve('RUNTIME=compose\nDURATION_S=5\nIDLE_S=0\n').errors, []);
  });

  it('combines one file per service, Grafana only when it runs, the kept volume only when named', () => {
    const { scenario } = resolve('RUNTIME=compose\n');
    const names = (files) => files.map((f) => path.relative(ROOT, f));
    assert.deepEqual(names(composeFiles(scenario, { grafana: false })), [
      'compose/node-geth.yml',
      'compose/cadvisor.yml',
      'compose/prometheus.yml',
    ]);
    const kept = resolve('RUNTIME=compose\nNODE_VOLUME=geth-dev-data\n').scenario;
    assert.deepEqual(names(composeFiles(kept, { grafana: true })).slice(3), [
      'compose/grafana.yml',
      'compose/volume-kept.yml',
    ]);
    for (const f of composeFiles(kept, { grafana: true })) assert.ok(fs.existsSync(f), f);
  });

  it('sets every variable the compose files read, from the scenario', () => {
    const { scenario } = resolve('RUNTIME=compose\nDB_CACHE_MB=32\nPEERS=4\nCORES=1\n');
    const images = {
      node: { ref: 'n:1' },
      prometheus: { ref: 'p:1' },
      cadvisor: { ref: 'c:1' },
      grafana: { skipped: 'no image' },
    };
    const env = composeEnv(scenario, {
      images,
      ports: { rpc: 1, ws: 2, prometheus: 3, cadvisor: 4, grafana: 5 },
      nodeCpus: '0',
      promConfig: '/tmp/p.yml',
      promRules: '/tmp/r.yml',
      grafanaPassword: 'x',
    });
    assert.equal(env.DB_CACHE_MB, '32');
    assert.equal(env.PEERS, '4');
    assert.equal(env.NODE_CPUSET, '0');
    assert.equal(env.BIND_ADDR, '127.0.0.1');
    assert.equal(env.GRAFANA_IMAGE, undefined, 'no Grafana variables when Grafana is skipped');
    // every ${VAR} the files use is either set here or has a default in the file
    const used = new Set();
    for (const f of ['node-geth.yml', 'cadvisor.yml', 'prometheus.yml']) {
      const text = fs.readFileSync(path.join(ROOT, 'compose', f), 'utf8');
      for (const m of text.matchAll(/\$\{([A-Z0-9_]+)(:-[^}]*)?\}/g)) {
        used.add(m[1]);
        assert.ok(m[2] !== undefined, `${f}: \${${m[1]}} has no default`);
      }
    }
    for (const v of used) if (v !== 'PROMETHEUS_RETENTION') assert.ok(v in env, `${v} is not set by composeEnv`);
  });

  it('every image in the compose files is pinned to a version', () => {
    for (const f of fs.readdirSync(path.join(ROOT, 'compose'))) {
      for (const m of fs
        .readFileSync(path.join(ROOT, 'compose', f), 'utf8')
        .matchAll(/image: \$\{[A-Z_]+:-([^}]+)\}/g)) {
        assert.match(m[1], /:v?\d+\.\d+\.\d+$/, `${f}: ${m[1]}`);
      }
    }
  });

  it('writes the Prometheus configuration with the run id and the client metrics path', () => {
    const { scenario } = resolve('RUNTIME=compose\n');
    const text = prometheusConfig(scenario, '20261122-101010-abcd');
    assert.match(text, /metrics_path: \/debug\/metrics\/prometheus/);
    assert.match(text, /targets: \['node:6060'\]/);
    assert.match(text, /run_id: '20261122-101010-abcd'/);
    assert.doesNotMatch(text, /__[A-Z_]+__/);
    assert.equal(projectName('20261122-101010-ABcd'), 'chainperf-20261122-101010-abcd');
    assert.match(text, /rule_files:\n {2}- \/etc\/chainperf\/rules.yml/);
  });

  it("records the client's request, failure and latency metrics under the names the dashboard queries", () => {
    const geth = yaml.load(rulesFile(clients.geth)).groups[0].rules;
    assert.deepEqual(
      geth.map((r) => r.record),
      [RULES.requests, RULES.failures, RULES.latency],
    );
    assert.equal(geth[0].expr, 'sum by (run_id) (rate(rpc_requests{job="node"}[5s]))');
    assert.match(
      geth[2].expr,
      /rpc_duration_all\{job="node", quantile=~"0.5\|0.95\|0.99"\}\) \* 1e-9$/,
      "geth's summary is in nanoseconds",
    );
    assert.deepEqual(
      yaml.load(rulesFile(clients['polkadot-omni-node'])).groups[0].rules.map((r) => r.expr),
      ['sum by (run_id) (rate(substrate_rpc_calls_finished{job="node"}[5s]))'],
    );
    assert.deepEqual(yaml.load(rulesFile(clients.chopsticks)).groups[0].rules, [], 'no metrics: no rule');
    assert.deepEqual(yaml.load(fs.readFileSync(path.join(ROOT, 'prometheus', 'rules.yml'), 'utf8')), { groups: [] });
  });

  it("the Grafana dashboard queries cAdvisor and the recording rules, no client's own metric names", () => {
    const dash = JSON.parse(fs.readFileSync(path.join(ROOT, 'grafana', 'dashboards', 'chainperf-node.json'), 'utf8'));
    const exprs = dash.panels.flatMap((p) => (p.targets || []).map((t) => t.expr));
    const clientNames = new Set(
      Object.values(clients).flatMap((c) => {
        const m = c.metrics || {};
        return [m.cpu, m.requests, m.failures, m.latency && m.latency.summary].filter(Boolean);
      }),
    );
    for (const e of exprs) {
      for (const name of clientNames) assert.ok(!new RegExp(`\\b${name}\\b`).test(e), `${e} queries ${name}`);
      // the metric names: what is left once label matchers, ranges, grouping and function calls are taken out
      const bare = e.replace(/\{[^}]*\}|\[[^\]]*\]|by \([^)]*\)/g, ' ').replace(/[A-Za-z_][\w]*\s*\(/g, ' ');
      const metrics = bare.match(/[A-Za-z_:][\w:]*/g) || [];
      assert.ok(metrics.length > 0, e);
      for (const metric of metrics) {
        assert.ok(metric.startsWith('container_') || Object.values(RULES).includes(metric), `${e}: ${metric}`);
      }
    }
    for (const rule of Object.values(RULES))
      assert.ok(
        exprs.some((e) => e.includes(rule)),
        `no panel shows ${rule}`,
      );
  });
});

/** A stand-in Prometheus API answering range selectors from fixed samples. */
function fakePrometheus(seriesByMetric, ownMetrics = '', targets = ['cadvisor']) {
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname === '/metrics') return res.end(ownMetrics); // Prometheus's own
    if (u.pathname === '/api/v1/targets')
      return res.end(
        JSON.stringify({ status: 'success', data: { activeTargets: targets.map((job) => ({ labels: { job } })) } }),
      );
    const q = u.searchParams.get('query');
    const metric = q.slice(0, q.indexOf('{'));
    const values = (seriesByMetric[metric] || []).map(([t, v]) => [t / 1000, String(v)]);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'matrix', result: values.length ? [{ metric: { name: 'node' }, values }] : [] },
      }),
    );
  });
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () =>
      r({ url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() }),
    ),
  );
}

describe('compose runtime: node CPU from cAdvisor samples', () => {
  it('takes the first and last samples inside the window, with their own timestamps', async () => {
    const t0 = Date.now() - 60000; // all in the past: nothing to wait for
    const at = (s) => t0 + s * 1000;
    // samples 1.0-1.9 s apart, as cAdvisor's jittered housekeeping gives them
    const ts = [0.4, 1.9, 3.1, 4.6, 6.0, 7.2, 9.0, 10.3, 11.5];
    const total = ts.map((s) => [at(s), 100 + s * 0.5]); // half a core
    const prom = await fakePrometheus({
      container_cpu_usage_seconds_total: total,
      container_cpu_user_seconds_total: ts.map((s) => [at(s), 80 + s * 0.4]),
      container_cpu_system_seconds_total: ts.map((s) => [at(s), 20 + s * 0.1]),
    });
    try {
      const src = cadvisorSource(prom.url, 'node', { lagMs: 0 });
      const { a, b, samples } = await src.edgesInside(at(1), at(10));
      assert.equal(a.at_ms, at(1.9));
      assert.equal(b.at_ms, at(9.0));
      assert.equal(samples.length, 6);
      assert.ok(Math.abs(b.total_s - a.total_s - 3.55) < 1e-9);
      assert.ok(Math.abs(b.user_s - a.user_s - 2.84) < 1e-9);
    } finally {
      prom.close();
    }
  });

  it("fails with the reason when cAdvisor has no sample after the window yet, and what Prometheus' scrapes said", async () => {
    const t0 = Date.now() - 60000;
    const prom = await fakePrometheus(
      {
        container_cpu_usage_seconds_total: [
          [t0, 1],
          [t0 + 1000, 2],
        ],
        up: [
          [t0 + 1000, 1],
          [t0 + 2000, 0],
          [t0 + 3000, 0],
        ],
        scrape_duration_seconds: [
          [t0 + 1000, 0.25],
          [t0 + 2000, 1],
          [t0 + 3000, 1],
        ],
      },
      [
        'prometheus_sd_dns_lookup_failures_total 3',
        'prometheus_sd_dns_lookups_total 40',
        'prometheus_target_interval_length_seconds{interval="1s",quantile="0.5"} 1.0001',
        'prometheus_target_interval_length_seconds{interval="1s",quantile="0.99"} 6.25',
      ].join('\n'),
    );
    try {
      const src = cadvisorSource(prom.url, 'node', { lagMs: 0, waitMs: 600 });
      await assert.rejects(
        src.edgesInside(t0, t0 + 5000),
        /no sample of container node after the window's end in Prometheus \(its last sample stamped 4\.0 s before it; of Prometheus' scrapes of cAdvisor in the last 30 s \(30 expected\) 3 were made, 2 failed, the slowest took 1\.00 s; 3 of its 40 DNS lookups of cAdvisor failed, 99% of its 1 s scrape intervals took up to 6\.25 s; it scrapes 1 cAdvisor target now\)/,
      );
    } finally {
      prom.close();
    }
  });

  it('says so when Prometheus has no cAdvisor target left (its DNS discovery found no address for the name)', async () => {
    const t0 = Date.now() - 60000;
    const prom = await fakePrometheus(
      {
        container_cpu_usage_seconds_total: [
          [t0, 1],
          [t0 + 1000, 2],
        ],
        up: [[t0 + 1000, 1]],
      },
      'prometheus_sd_dns_lookup_failures_total 0\nprometheus_sd_dns_lookups_total 20',
      ['node'],
    );
    try {
      const src = cadvisorSource(prom.url, 'node', { lagMs: 0, waitMs: 600 });
      await assert.rejects(
        src.edgesInside(t0, t0 + 5000),
        /0 of its 20 DNS lookups of cAdvisor failed; it has no cAdvisor target now: its DNS discovery finds no address for the name cadvisor .*moby\/moby#45144\)\); is cAdvisor running\?/,
      );
    } finally {
      prom.close();
    }
  });

  it('several containers (a placed fleet): each counter interpolated between its own samples at the latest first and earliest last instants inside the window, summed', async () => {
    const t0 = Math.floor((Date.now() - 60000) / 1000) * 1000; // a whole second: the chart's ticks fall on them
    const at = (s) => t0 + s * 1000;
    // replica a at half a core, sampled at whole seconds; replica b at a quarter, 0.4 s later; c exited at 6.3 s
    const a = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((s) => [at(s), 10 + s * 0.5]);
    const b = [0.4, 1.4, 2.4, 3.4, 4.4, 5.4, 6.4, 7.4, 8.4, 9.4, 10.4, 11.4].map((s) => [at(s), 20 + s * 0.25]);
    // c exited at 6.3 s: its cgroup sampled twice more, its counter still
    const c = [0.7, 1.7, 2.7, 3.7, 4.7, 5.7, 6.3]
      .map((s) => [at(s), 30 + s * 0.1])
      .concat([
        [at(6.7), 30.63],
        [at(7.1), 30.63],
      ]);
    const queries = [];
    const server = http.createServer((req, res) => {
      const q = new URL(req.url, 'http://x').searchParams.get('query');
      const name = /name="([^"]+)"/.exec(q)[1];
      queries.push(name);
      const values = ({ a, b, c }[name] || []).map(([tm, v]) => [tm / 1000, String(v)]);
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric: {}, values }] } }));
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${server.address().port}`;
      const counters = sharedCounters(url, { lagMs: 0, waitMs: 300 });
      const src = containersCadvisorSource(url, ['a', 'b', 'c'], counters);
      const w = await src.edgesInside(at(0.5), at(10));
      // a replica's own row: its first and last samples inside the window, from the read the fleet's CPU made
      const rowB = await counters.edgesIn('b', at(0.5), at(10));
      assert.deepEqual([rowB.a.at_ms, rowB.b.at_ms], [at(1.4), at(9.4)]);
      assert.ok(Math.abs(rowB.b.total_s - rowB.a.total_s - 2) < 1e-9, 'a quarter of a core over 8 s');
      assert.equal(queries.filter((n) => n === 'b').length, 1, "b's counter read once for the fleet and its row");
      assert.equal(rowB.lastRiseMs, at(9.4), 'b ran to the end');
      assert.equal((await counters.edgesIn('c', at(0.5), at(10))).lastRiseMs, at(6.3), 'the last instant c ran at');
      // first samples inside: a 1, b 1.4, c 0.7 -> 1.4; last: a 10, b 9.4 (c stopped, not counted) -> 9.4
      assert.equal(w.a.at_ms, at(1.4));
      assert.equal(w.b.at_ms, at(9.4));
      // over 8 s: a 4 s, b 2 s, c from 1.4 to its last sample at 6.3 (0.49 s)
      assert.ok(Math.abs(w.b.total_s - w.a.total_s - (4 + 2 + 0.49)) < 1e-9, `${w.b.total_s - w.a.total_s}`);
      assert.deepEqual(
        w.samples.map((x) => (x.at_ms - t0) / 1000),
        [1.4, 2, 3, 4, 5, 6, 7, 8, 9, 9.4],
      );
      assert.equal(
        interpolateAt(
          [
            { t_ms: 0, v: 1 },
            { t_ms: 1000, v: 2 },
          ],
          250,
        ),
        1.25,
      );
      assert.equal(interpolateAt([{ t_ms: 0, v: 1 }], 250), null, 'no sample after it');
    } finally {
      server.close();
    }
  });

  it('divides the CPU between sample instants by the requests completed between the same instants', () => {
    const start = 1_000_000;
    const end = 1_010_000;
    const rec = newRecorder({ start_at: start, end_at: end }, 'w');
    // 100 requests per second, evenly spread over the window
    for (let t = start; t < end; t += 10) {
      rec.started();
      rec.completed('eth_call', 1, null, t);
    }
    const samples = mergeSamples([rec.snapshot()]);
    assert.equal(samples.ok, 1000);
    assert.equal(samples.okBetween(start + 1500, start + 8500), 700);
    const cpuWindow = {
      start_ms: start + 1500,
      end_ms: start + 8500,
      requests_ok: samples.okBetween(start + 1500, start + 8500),
    };
    const f = computeFigures({
      window: { start_ms: start, end_ms: end },
      cpu: { user_s: 0.5, system_s: 0.2, total_s: 0.7 },
      idle: { cpu_s: 0.1, seconds: 10 },
      samples,
      cpuWindow,
    });
    // 0.7 s over the 700 requests of the CPU window, not the 1000 of the whole window
    assert.equal(f.cpu_ms_per_request, 1);
    assert.ok(Math.abs(f.cpu_ms_per_request_net - 0.9) < 1e-9); // idle 0.01 s/s over the 7 s CPU window
    assert.equal(f.rps, 100);
    const series = cpuPerRequestBetween(
      [
        { t_ms: start + 1500, total_s: 10 },
        { t_ms: start + 2500, total_s: 10.1 },
      ],
      samples,
    );
    assert.deepEqual(series, [{ t_ms: start + 2500, cpu_ms_per_request: 1 }]);
  });
});

describe('compose runtime: images', () => {
  it('pulls refused for the same reason (no registry answers) are said in one line; different reasons apart', () => {
    const { sayRefused } = require('../../src/runtime/images');
    const lines = [];
    const dns =
      'Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.0.0.53:53: no such host';
    const gcr =
      'Error response from daemon: Get "https://gcr.io/v2/": dial tcp: lookup gcr.io on 10.0.0.53:53: no such host';
    sayRefused(
      [
        { ref: 'prom/prometheus:v2.42.0', why: dns },
        { ref: 'gcr.io/cadvisor/cadvisor:v0.49.1', why: gcr },
      ],
      (m) => lines.push(m),
    );
    assert.deepEqual(lines, [
      `cannot pull prom/prometheus:v2.42.0, gcr.io/cadvisor/cadvisor:v0.49.1: no such host, each (prom/prometheus:v2.42.0: ${dns})`,
    ]);
    lines.length = 0;
    sayRefused(
      [
        { ref: 'a:1', why: dns },
        { ref: 'b:1', why: 'manifest unknown' },
      ],
      (m) => lines.push(m),
    );
    assert.deepEqual(lines, [`cannot pull a:1: ${dns}`, 'cannot pull b:1: manifest unknown']);
    sayRefused([], (m) => lines.push(m));
    assert.equal(lines.length, 2, 'nothing refused: nothing said');
  });

  it('the local cAdvisor image is tagged with the library version images/cadvisor/go.mod pins', () => {
    const { CADVISOR_LIB_VERSION } = require('../../src/runtime/images');
    const gomod = fs.readFileSync(path.join(ROOT, 'images', 'cadvisor', 'go.mod'), 'utf8');
    assert.match(gomod, new RegExp(`github\\.com/google/cadvisor v${CADVISOR_LIB_VERSION.replaceAll('.', '\\.')}\\b`));
  });

  it('every service image has a pinned upstream reference and, except Grafana, a local build', () => {
    const { imageSpecs, IMAGES_DIR } = require('../../src/runtime/images');
    const { scenario } = resolve('RUNTIME=compose\n');
    for (const [svc, spec] of Object.entries(imageSpecs(scenario))) {
      assert.match(spec.upstream, /:v?\d+\.\d+\.\d+$/, svc);
      if (svc === 'grafana') {
        assert.equal(spec.local, null);
        continue;
      }
      assert.ok(fs.existsSync(path.join(IMAGES_DIR, spec.dir, 'Dockerfile')), `${svc}: images/${spec.dir}/Dockerfile`);
    }
  });
});

describe('the Grafana dashboards, built as code', () => {
  const { build, PANELS } = require('../../grafana/dashboards');

  it('the committed JSON is what grafana/dashboards.js builds (npm run dashboards)', () => {
    for (const [file, text] of build())
      assert.equal(fs.readFileSync(path.join(ROOT, 'grafana', 'dashboards', file), 'utf8'), text, file);
  });

  it('a panel for each figure of the report, every query on the chosen run, the variables to choose it', () => {
    const [, text] = build()[0];
    const dash = JSON.parse(text);
    const titles = dash.panels.map((p) => p.title);
    for (const figure of [/CPU time per request/, /^Throughput/, /Latency percentiles/, /^Memory/, /^Disk/, /per core/])
      assert.ok(
        titles.some((t) => figure.test(t)),
        `${figure}: ${titles.join(', ')}`,
      );
    assert.equal(dash.panels.length, PANELS.length);
    for (const p of dash.panels) {
      assert.ok(p.targets.length > 0, p.title);
      for (const t of p.targets) assert.match(t.expr, /run_id="\$run"/, `${p.title}: ${t.expr}`);
      assert.equal(p.datasource.uid, '${datasource}');
    }
    const vars = Object.fromEntries(dash.templating.list.map((v) => [v.name, v]));
    assert.equal(vars.datasource.query, 'prometheus');
    assert.equal(vars.run.query, 'label_values(up, run_id)');
  });
});
