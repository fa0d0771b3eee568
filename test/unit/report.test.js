'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { writeReport, renderReport } = require('../../src/report/write');
const { archiveGit } = require('../../src/report/archive');
const { provenance } = require('../../src/report/provenance');
const { lineChart } = require('../../src/report/charts');
const { tmpDir, schemaErrors } = require('../helpers');

function sampleRun(over = {}) {
  return {
    schema_version: 1,
    run_id: '20260101-000000-abcd',
    scenario_name: 'unit',
    status: 'ok',
    phase: 'measure',
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:01:00.000Z',
    warnings: [],
    window: { start_ms: 1000, end_ms: 11000 },
    idle: { cpu_s: 0.1, seconds: 10 },
    node: {
      pid: 1,
      cpus: '0',
      cpu_source: { kind: 'cgroup', describe: 'cgroup x' },
      cpu_user_s: 3,
      cpu_system_s: 1,
      cpu_total_s: 4,
    },
    figures: {
      window_s: 10,
      requests_ok: 2000,
      requests_failed: 1,
      failures: { rpc: 1, http: 0, timeout: 0, other: 0 },
      error_rate: 0.0005,
      cpu_ms_per_request: 2,
      cpu_ms_per_request_net: 1.995,
      idle_cpu_s_per_s: 0.01,
      rps: 200,
      latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 },
      methods: {
        eth_call: { requests_ok: 2000, requests_failed: 1, rps: 200, latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 } },
      },
    },
    errors: { 'JSON-RPC -32000: boom': 1 },
    provenance: provenance({
      scenario: { CORES: 1, WORKLOAD: 'eth-default', CONCURRENCY: 8 },
      sources: {},
      client: { name: 'geth', version: '1.16.7-stable' },
      runtime: 'host',
    }),
    ...over,
  };
}

const series = {
  requests: [
    { t_ms: 1000, span_ms: 1000, ok: 200, failed: 0, latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 } },
    { t_ms: 2000, span_ms: 1000, ok: 210, failed: 1, latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 } },
  ],
  cpu_per_request: [
    { t_ms: 1000, cpu_ms_per_request: 2 },
    { t_ms: 2000, cpu_ms_per_request: 2.1 },
  ],
};

describe('report writing', () => {
  it('writes run.json valid against the schema, series.json, summary.md and three SVG charts', () => {
    const dir = path.join(tmpDir(), 'r');
    const run = sampleRun();
    assert.deepEqual(schemaErrors(run), []);
    writeReport(dir, run, series);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')), run);
    const md = fs.readFileSync(path.join(dir, 'summary.md'), 'utf8');
    assert.match(md, /# chainperf: unit — ok/);
    assert.match(md, /\| CPU time per request \(gross\) \| 2\.000 ms \|/);
    assert.match(md, /\| eth_call \| 2000 \| 1 \|/);
    for (const c of ['cpu-per-request.svg', 'throughput.svg', 'latency.svg']) {
      const svg = fs.readFileSync(path.join(dir, 'charts', c), 'utf8');
      assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.match(svg, /<path d="M/, `${c} draws a line`);
      assert.match(svg, /<\/svg>\n$/);
    }
  });

  it('a failed run says so first, with the reason, and keeps what was measured', () => {
    const dir = path.join(tmpDir(), 'f');
    const run = sampleRun({ status: 'failed', error: 'the node exited during measure (status 1)', figures: undefined });
    delete run.figures;
    assert.deepEqual(schemaErrors(run), []);
    writeReport(dir, run, {});
    const md = fs.readFileSync(path.join(dir, 'summary.md'), 'utf8');
    assert.match(md, /— FAILED/);
    assert.match(md, /\*\*The run failed:\*\* the node exited during measure/);
    assert.match(md, /Idle baseline: 0\.100 s/);
  });

  it('the schema rejects a run.json without its required fields', () => {
    const run = sampleRun();
    delete run.status;
    run.figures.cpu_ms_per_request = 'fast';
    const errs = schemaErrors(run);
    assert.ok(
      errs.some((e) => /status/.test(e)),
      errs.join('\n'),
    );
    assert.ok(
      errs.some((e) => /cpu_ms_per_request/.test(e)),
      errs.join('\n'),
    );
  });

  it("says where the generator ran: its cpus, the node's shared, or every core when the node ran on another swarm node", () => {
    const generator = { cpus: '1', cores: 1, cpu_s: 0.5, cpu_us_per_request: 250, workers: 1 };
    const summaryOf = (over, stack) => {
      const dir = path.join(tmpDir(), 'g');
      writeReport(dir, sampleRun({ generator: { ...generator, ...over }, ...(stack ? { stack } : {}) }), series);
      return fs.readFileSync(path.join(dir, 'summary.md'), 'utf8');
    };
    assert.match(summaryOf({}), /Load generator \(.*\): 0\.500 s of CPU on cpus 1, 250\.0 us/);
    assert.match(summaryOf({ cpus: null }), /s of CPU on cpus shared with the node,/);
    const placed = { node: 'w1', address: '10.0.0.2', cpu_quota: 1, source: 'cAdvisor' };
    assert.match(
      summaryOf({ cpus: null }, { swarm: { stack: 'x', node_placement: placed } }),
      /s of CPU on every core of chainperf's machine \(the node ran on another\),/,
    );
  });

  it("says where the two scrapes of the node's request counter fall against the window's edges", () => {
    const dir = path.join(tmpDir(), 's');
    const node = { ...sampleRun().node, rpc_requests: 1990, rpc_requests_span_ms: [600, 10700] };
    const run = sampleRun({ node });
    assert.deepEqual(schemaErrors(run), []);
    writeReport(dir, run, series);
    assert.match(
      fs.readFileSync(path.join(dir, 'summary.md'), 'utf8'),
      /rose by 1990 over the window \(between its scrapes 0\.4 s before the window opened and 0\.3 s before it closed\)/,
    );
  });

  it("REPLICAS: names the replicas with no scrape inside the window, whose requests the counter's rise leaves out", () => {
    const dir = path.join(tmpDir(), 'u');
    const node = {
      ...sampleRun().node,
      rpc_requests: 3979,
      rpc_requests_by_replica: { 'replica-1': 3979, 'replica-2': null },
      rpc_requests_unscraped: ['replica-2'],
    };
    const run = sampleRun({ node });
    assert.deepEqual(schemaErrors(run), []);
    writeReport(dir, run, series);
    assert.match(
      fs.readFileSync(path.join(dir, 'summary.md'), 'utf8'),
      /rose by 3979 over the window, summed over the replicas scraped inside it: what replica-2 served is left out \(no scrape inside the window\)\./,
    );
  });

  it('an idle baseline measured again while the node settled: in the schema, the summary and, unsettled, a warning', () => {
    const { addWarnings } = require('../../src/session/run-warnings');
    const settling = [{ cpu_s_per_s: 0.3284, start_ms: 1000 }];
    const idle = { cpu_s: 0.03, seconds: 2, start_ms: 3200, end_ms: 5200, halves: [0.014, 0.016], settling };
    const summaryOf = (run) => {
      const dir = path.join(tmpDir(), 'i');
      writeReport(dir, run, series);
      return fs.readFileSync(path.join(dir, 'summary.md'), 'utf8');
    };
    const settled = sampleRun({ idle: { ...idle, settled: true } });
    assert.deepEqual(schemaErrors(settled), []);
    assert.match(
      summaryOf(settled),
      /over the window \(measured 2 times: the node was busy with work of its own before, at 328 ms\/s\)\./,
    );
    const samples = { before_window: 1, ok: 1, failed: 0, skipped: 0 };
    const warnings = (run) => {
      Object.assign(run, { warnings: [], generator: { cpus: '1', cores: 1, cpu_utilization: 0.2 } });
      addWarnings(run, { CHAIN: 'ethereum', RUNTIME: 'host', CORES: 1 }, samples);
      return run.warnings.filter((w) => /idle baselines/.test(w));
    };
    assert.deepEqual(warnings(settled), []);
    const unsettled = sampleRun({ idle: { ...idle, settled: false } });
    assert.match(summaryOf(unsettled), /, and had not settled\)/);
    assert.match(warnings(unsettled).join(), /still busy with work of its own after 2 idle baselines .* 0\.015 cores/);
    const coldRun = sampleRun();
    coldRun.node = { ...coldRun.node, cold_settle: { cpu_s_per_s: 0.31, looks: 5, settled: false } };
    assert.deepEqual(schemaErrors(coldRun), []);
    Object.assign(coldRun, { warnings: [], generator: { cpus: '1', cores: 1, cpu_utilization: 0.2 } });
    addWarnings(coldRun, { CHAIN: 'ethereum', RUNTIME: 'host', CORES: 1 }, samples);
    assert.match(coldRun.warnings.join(), /COLD=yes: the restarted node was still busy .* after 5 looks/);
    assert.doesNotMatch(coldRun.warnings.join(), /net CPU per request is not positive/);
  });

  it('a net CPU per request that is not positive is a warning: the gross figure is the one to read', () => {
    const { addWarnings } = require('../../src/session/run-warnings');
    const warned = (gross, net) => {
      const run = sampleRun();
      Object.assign(run.figures, { cpu_ms_per_request: gross, cpu_ms_per_request_net: net });
      Object.assign(run, { warnings: [], generator: { cpus: '1', cores: 1, cpu_utilization: 0.2 } });
      addWarnings(run, { CHAIN: 'ethereum', RUNTIME: 'host', CORES: 1 }, { before_window: 1, ok: 1, failed: 0 });
      return run.warnings.filter((w) => /net CPU per request/.test(w));
    };
    assert.match(warned(1.949, -1.191).join(), /not positive \(-1\.191 ms\).*read the gross figure/);
    assert.equal(warned(1.949, 0).length, 1, 'zero too');
    assert.deepEqual(warned(1.949, 1.2), []);
    assert.deepEqual(warned(1.949, null), [], 'no idle baseline (IDLE_S=0)');
    assert.deepEqual(warned(0, -0.1), [], 'a window with no CPU says so in its own way');
  });

  it('re-renders summary and charts from run.json and series.json alone', () => {
    const dir = path.join(tmpDir(), 'rr');
    writeReport(dir, sampleRun(), series);
    fs.rmSync(path.join(dir, 'summary.md'));
    fs.rmSync(path.join(dir, 'charts'), { recursive: true });
    renderReport(dir);
    assert.ok(fs.existsSync(path.join(dir, 'summary.md')));
    assert.equal(fs.readdirSync(path.join(dir, 'charts')).length, 3);
  });

  it('an empty chart says there is no data instead of drawing nothing', () => {
    const svg = lineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ name: 'a', points: [] }] });
    assert.match(svg, /no data in the measured window/);
  });
});

describe('git archive', () => {
  const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

  it('commits the report folder alone, with the scenario and headline in the message', () => {
    const repo = tmpDir();
    git(repo, 'init', '-q');
    fs.writeFileSync(path.join(repo, 'other.txt'), 'not mine');
    git(repo, 'add', 'other.txt'); // staged work of someone else stays staged, uncommitted
    const dir = path.join(repo, 'reports', 'unit', 'run1');
    writeReport(dir, sampleRun(), series);
    const res = archiveGit({
      reportsRoot: path.join(repo, 'reports'),
      reportDir: dir,
      message: 'chainperf: unit ok: 2.000 ms CPU/request',
      log: () => {},
    });
    assert.equal(res.repository, fs.realpathSync(repo));
    assert.equal(git(repo, 'log', '-1', '--format=%s'), 'chainperf: unit ok: 2.000 ms CPU/request');
    const files = git(repo, 'show', '--name-only', '--format=', 'HEAD').split('\n');
    assert.ok(files.includes('reports/unit/run1/run.json'));
    assert.ok(!files.includes('other.txt'));
    assert.match(git(repo, 'status', '--porcelain'), /^A {2}other\.txt$/m);
  });

  it('creates a repository at REPORTS_DIR when it is in none', () => {
    const root = path.join(tmpDir(), 'reports');
    const dir = path.join(root, 'unit', 'run1');
    writeReport(dir, sampleRun(), series);
    const res = archiveGit({ reportsRoot: root, reportDir: dir, message: 'm', log: () => {} });
    assert.equal(res.repository, fs.realpathSync(root));
    assert.equal(git(root, 'rev-list', '--count', 'HEAD'), '1');
  });
});
