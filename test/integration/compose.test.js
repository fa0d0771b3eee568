'use strict';
// The compose runtime end to end on a real Docker engine: geth, cAdvisor and
// Prometheus as one compose project, images built locally. The figures are
// checked against the container's own cgroup counters, read by this test
// while the run goes on; the dashboards' queries against the run's Prometheus.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, readRun, watchContainerCpu, LIGHT_LOAD } = require('./harness');
const { schemaErrors, ROOT, tmpDir, writeScenario } = require('../helpers');
const docker = require('../../src/platform/docker');

const GETH_DEV = path.join(ROOT, 'scenarios', 'geth-dev.env');
const SHORT = {
  RUNTIME: 'compose',
  GRAFANA: 'auto',
  DURATION_S: '12',
  WARMUP_S: '3',
  IDLE_S: '4',
  HISTORY_TRANSFERS: '30',
  HISTORY_CONTRACT_CALLS: '16',
  MAX_ERROR_RATE: '0',
};

/** The run's compose project and Prometheus URL, from its log. */
function fromLog(stderr) {
  const project = /starting compose project (\S+)/.exec(stderr);
  const prom = /Prometheus at (http:\/\/\S+?),/.exec(stderr);
  return { project: project && project[1], promUrl: prom && prom[1] };
}

async function nodeContainerId(project) {
  const filter = encodeURIComponent(
    JSON.stringify({ label: [`com.docker.compose.project=${project}`, 'com.docker.compose.service=node'] }),
  );
  const r = await docker.engine('GET', `/containers/json?filters=${filter}`);
  return r.body.length ? r.body[0].Id : null;
}

/** Every PromQL expression of the committed dashboards, with Grafana's variables filled in (the run: runId). */
function dashboardQueries(runId) {
  const dir = path.join(ROOT, 'grafana', 'dashboards');
  const out = [];
  for (const f of fs.readdirSync(dir)) {
    for (const p of JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).panels) {
      for (const t of p.targets)
        out.push({
          panel: `${f}: ${p.title}`,
          expr: t.expr.replaceAll('$__rate_interval', '10s').replaceAll('$__interval', '1s').replaceAll('$run', runId),
        });
    }
  }
  return out;
}

async function promQuery(promUrl, expr) {
  const body = await (await fetch(`${promUrl}/api/v1/query?${new URLSearchParams({ query: expr })}`)).json();
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data.result;
}

describe('compose runtime: geth, cAdvisor and Prometheus end to end', () => {
  let res;
  let run;
  let project;
  let cpuWatch;
  const dashboards = [];
  let runValues = null;

  before(async () => {
    const r = startRun(GETH_DEV, SHORT);
    await r.waitFor(/starting compose project/);
    ({ project } = fromLog(r.stderrText()));
    cpuWatch = watchContainerCpu(() => nodeContainerId(project));
    // While the window runs, every dashboard query must return data from the run's real Prometheus.
    await r.waitFor(/measure: measuring for/);
    await r.waitFor(/measure: 10 s of/);
    const { promUrl } = fromLog(r.stderrText());
    const runId = /run (\d{8}-\d{6}-[0-9a-f]{4}): scenario/.exec(r.stderrText())[1];
    for (const q of dashboardQueries(runId)) {
      dashboards.push({ ...q, result: await promQuery(promUrl, q.expr).catch((err) => ({ error: err.message })) });
    }
    // The run variable's query, label_values(up, run_id), as Grafana asks Prometheus for it.
    const labels = await fetch(`${promUrl}/api/v1/label/run_id/values?${new URLSearchParams({ 'match[]': 'up' })}`);
    runValues = { runId, values: (await labels.json()).data };
    res = await r.done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0, prints the report folder last, and writes a valid run.json for the compose runtime', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.runtime, 'compose');
    assert.equal(run.stack.compose.project, project);
    assert.match(run.provenance.client.version, /Geth\/v1\.16\.7/);
    for (const svc of ['node', 'prometheus', 'cadvisor']) assert.ok(run.stack.images[svc].id, `${svc} image recorded`);
  });

  it('node CPU comes from cAdvisor samples inside the window and matches the container cgroup read by this test', () => {
    assert.equal(run.node.cpu_source.kind, 'cadvisor');
    const w = run.node.cpu_window;
    assert.ok(w.start_ms >= run.window.start_ms && w.end_ms <= run.window.end_ms, 'CPU edges lie inside the window');
    assert.ok(w.end_ms - w.start_ms >= 7000, `CPU window ${w.end_ms - w.start_ms} ms`);
    const independent = cpuWatch.cpuAt(w.end_ms) - cpuWatch.cpuAt(w.start_ms);
    const diff = Math.abs(independent - run.node.cpu_total_s) / independent;
    assert.ok(diff < 0.05, `cAdvisor ${run.node.cpu_total_s} s, cgroup ${independent.toFixed(3)} s`);
    assert.ok(Math.abs(run.figures.cpu_ms_per_request - (run.node.cpu_total_s * 1000) / w.requests_ok) < 1e-5);
    assert.ok(w.requests_ok > 500 && w.requests_ok < run.figures.requests_ok);
  });

  it('cross-checks against the Docker engine stats of the same container', () => {
    const c = run.node.cpu_check;
    assert.equal(c.kind, 'docker');
    // the engine's reading over its own instants agrees with the cgroup read by this test over the same instants
    const independent = cpuWatch.cpuAt(c.end_ms) - cpuWatch.cpuAt(c.start_ms);
    assert.ok(
      Math.abs(c.total_s - independent) / independent < 0.05,
      `docker ${c.total_s} s, cgroup ${independent.toFixed(3)} s`,
    );
    assert.equal(c.seconds, (c.end_ms - c.start_ms) / 1000);
    // each source's rate is the cgroup's over that source's own span. The spans differ (the engine's edges, cAdvisor's
    // samples inside them), and so may the two rates on a machine whose load varies within the window: a CI run's
    // were 0.161 and 0.125 CPU s/s, the 1.4 s between the spans' edges busier than the rest
    const rate = (a, b) => (cpuWatch.cpuAt(b) - cpuWatch.cpuAt(a)) / ((b - a) / 1000);
    const w = run.node.cpu_window;
    for (const [name, got, want] of [
      ['docker', c.cpu_s_per_s, rate(c.start_ms, c.end_ms)],
      ['cAdvisor', run.node.cpu_s_per_s, rate(w.start_ms, w.end_ms)],
    ])
      assert.ok(
        Math.abs(got - want) / want < 0.05,
        `${name} ${got} CPU s/s, the cgroup ${want.toFixed(4)} over its span`,
      );
  });

  it('records memory, disk and network of the node container, and the steal time of its cpuset', () => {
    assert.ok(run.node.memory_peak_bytes > 10e6, `memory_peak_bytes ${run.node.memory_peak_bytes}`);
    assert.ok(run.node.network_rx_bytes > 1000 && run.node.network_tx_bytes > 1000);
    assert.equal(typeof run.node.disk_write_bytes, 'number');
    assert.equal(run.node.steal.cpus, run.node.cpus, "the container's cpuset");
    assert.ok(run.node.steal.share >= 0 && run.node.steal.share <= 1);
  });

  it("every query of the dashboards returns data from the run's Prometheus, the run's series chosen by its variable", () => {
    assert.deepEqual(runValues.values, [runValues.runId], 'the run variable resolves to this run');
    assert.ok(dashboards.length >= 12);
    const perCore = dashboards.find((d) => /per core/.test(d.panel));
    assert.ok(
      perCore.result.length >= 1 && perCore.result.every((x) => /^cpu\d+$/.test(x.metric.cpu)),
      JSON.stringify(perCore.result),
    );
    const empty = dashboards
      .filter((d) => d.result.error || d.result.length === 0)
      .map((d) => `${d.panel}: ${d.expr} ${d.result.error || '(no data)'}`);
    assert.deepEqual(empty, []);
  });

  it('brings the project down with its volumes', async () => {
    assert.deepEqual(await docker.projectLeftovers(project), { containers: [], volumes: [], networks: [] });
  });
});

describe('compose runtime: failures', () => {
  const check = async (res, reason, project) => {
    assert.equal(res.code, 1, res.stderr);
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'failed');
    assert.match(run.error, reason);
    assert.deepEqual(
      await docker.projectLeftovers(project),
      { containers: [], volumes: [], networks: [] },
      'nothing left behind',
    );
    return run;
  };
  const QUICK = {
    ...SHORT,
    ...LIGHT_LOAD,
    GRAFANA: 'no',
    WARMUP_S: '0',
    IDLE_S: '4',
    HISTORY_TRANSFERS: '8',
    HISTORY_CONTRACT_CALLS: '4',
    DURATION_S: '60',
  };

  it('the node container exiting mid-run: torn down, report failed with the reason', async () => {
    const r = startRun(GETH_DEV, QUICK);
    await r.waitFor(/measure: measuring for/);
    const { project } = fromLog(r.stderrText());
    // the engine may answer late on a loaded machine (an image loaded by another test): what is tested is the exit
    await docker.engine('POST', `/containers/${await nodeContainerId(project)}/kill?signal=KILL`, { timeoutMs: 60000 });
    const run = await check(await r.done, /the node exited during measure \(status 137\)/, project);
    assert.ok(run.idle && run.idle.cpu_s >= 0, 'the idle baseline measured before is kept');
  });

  it('the node container restarting mid-run: the run stops and says the node restarted', async () => {
    const r = startRun(GETH_DEV, QUICK);
    await r.waitFor(/measure: measuring for/);
    const { project } = fromLog(r.stderrText());
    await docker.engine('POST', `/containers/${await nodeContainerId(project)}/restart?t=0`, { timeoutMs: 60000 });
    await check(await r.done, /the node restarted during measure/, project);
  });

  it('Ctrl-C: the stack comes down with its volumes and the report says so', async () => {
    const r = startRun(GETH_DEV, QUICK);
    await r.waitFor(/measure: measuring for/);
    const { project } = fromLog(r.stderrText());
    r.child.kill('SIGINT');
    await check(await r.done, /interrupted by SIGINT/, project);
  });

  it('a service that never becomes ready (Compose v1): a clear error after STACK_TIMEOUT_S', async () => {
    // An operator's override that moves cAdvisor to a port nothing is published on.
    const dir = tmpDir();
    const override = path.join(dir, 'cadvisor-elsewhere.yml');
    fs.writeFileSync(
      override,
      'services:\n  cadvisor:\n    command: ["--port=9999", "--housekeeping_interval=1s", "--docker_only=true"]\n',
    );
    const file = writeScenario(
      dir,
      'never-ready',
      `RUNTIME=compose\nGRAFANA=no\nSTACK_TIMEOUT_S=8\nCOMPOSE_FILES=${override}\n`,
    );
    const r = startRun(file, { COMPOSE_COMMAND: 'docker-compose' });
    await r.waitFor(/starting compose project \S+ \(docker-compose 1\./);
    const { project } = fromLog(r.stderrText());
    const run = await check(await r.done, /service cadvisor did not become ready in 8 s/, project);
    assert.equal(run.phase, 'provision');
  });
});

describe('compose runtime: node data kept in a volume, and restored from a snapshot (Compose v1)', () => {
  const tag = Math.random().toString(16).slice(2, 8);
  const kept = `chainperf-test-kept-${tag}`;
  const restored = `chainperf-test-restored-${tag}`;
  const OK = {
    ...SHORT,
    ...LIGHT_LOAD,
    GRAFANA: 'no',
    WARMUP_S: '0',
    IDLE_S: '0',
    DURATION_S: '5',
    HISTORY_TRANSFERS: '8',
    HISTORY_CONTRACT_CALLS: '4',
    COMPOSE_COMMAND: 'docker-compose',
  };

  after(async () => {
    for (const v of [kept, restored]) await docker.engine('DELETE', `/volumes/${v}`);
  });

  it('a run with NODE_VOLUME leaves the chain in that volume, and a snapshot of it starts a synced node elsewhere', async () => {
    const first = await startRun(GETH_DEV, { ...OK, NODE_VOLUME: kept }).done;
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, new RegExp(`node data: new volume ${kept}`));
    assert.match(first.stderr, /creating history/);
    assert.equal((await docker.engine('GET', `/volumes/${kept}`)).status, 200, 'the volume outlives the run');
    const head = readRun(first.reportDir).sync.head;

    // A snapshot file of the kept volume, as an operator would make one.
    const dir = tmpDir();
    const { execFileSync } = require('node:child_process');
    execFileSync('docker', [
      'run',
      '--rm',
      '-v',
      `${kept}:/data:ro`,
      '-v',
      `${dir}:/out`,
      'chainperf/debian-base:bookworm',
      'tar',
      '-C',
      '/data',
      '-cf',
      '/out/geth-dev.tar',
      '.',
    ]);

    const second = await startRun(GETH_DEV, { ...OK, NODE_VOLUME: restored, SNAPSHOT: path.join(dir, 'geth-dev.tar') })
      .done;
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, new RegExp(`restoring .*geth-dev\\.tar into new volume ${restored}`));
    assert.doesNotMatch(second.stderr, /creating history/, 'no history is created on a chain that has one');
    const run = readRun(second.reportDir);
    assert.equal(run.history, undefined);
    assert.ok(run.sync.head > head, `restored chain at ${run.sync.head}, after ${head}`);
    assert.equal(run.stack.compose.command, 'docker-compose');
    assert.ok(run.figures.requests_ok > 0);
  });
});
