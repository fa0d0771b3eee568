'use strict';
// Failure paths with real parts (geth, Prometheus, cgroups, artillery): a
// signal while tearing down, a forced exit, an attached node dying in the
// window, a frozen node, Prometheus killed in the window, two runs at once.
// Each checks that a report is written (or, forced, that the printed commands
// remove what is left) and that no process of the run survives.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { startRun, processesWith, gethOf, readRun, untilLoaded, LIGHT_LOAD } = require('./harness');
const { startGeth } = require('./node');
const { schemaErrors, tmpDir, writeScenario, ROOT } = require('../helpers');
const { runsRoot } = require('../../src/platform/cgroup');
const docker = require('../../src/platform/docker');

const GETH_DEV = path.join(ROOT, 'scenarios', 'geth-dev.env');
// No warm-up, no history (a method that needs none) and a light load: these tests are about what happens around the
// window, not about its figures; a dev chain's history takes 8 blocks to mine, about 10 s a run.
const SHORT = { ...LIGHT_LOAD, WARMUP_S: '0', IDLE_S: '2', CREATE_HISTORY: 'no', WORKLOAD: 'method:eth_blockNumber' };
/** Keys as the lines of a scenario file. */
const asLines = (keys) => Object.entries(keys).map(([k, v]) => `${k}=${v}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The run id a run logged first. */
const runIdOf = (stderr) => /run (\d{8}-\d{6}-[0-9a-f]{4}): scenario/.exec(stderr)[1];

/** What a run left: its processes (by its TMPDIR), its cgroup folder, its work folder. */
function leftBehind(r, runId) {
  const root = runsRoot();
  return {
    processes: processesWith(r.tmp).map((p) => p.cmd.slice(0, 120)),
    cgroup: Boolean(root && fs.existsSync(path.join(root, runId))),
    work: fs.readdirSync(r.tmp).filter((f) => f.startsWith('chainperf-')),
  };
}
const NOTHING = { processes: [], cgroup: false, work: [] };

/** look() once it returns an empty list, or its last answer after 3 s: a process sent SIGKILL takes a moment to go. */
async function settled(look) {
  const deadline = Date.now() + 3000;
  let found = look();
  while (found.length && Date.now() < deadline) {
    await sleep(100);
    found = look();
  }
  return found;
}

/** Artillery processes anywhere on the machine whose script lies under dir. */
const artilleryUnder = (dir) => processesWith(dir).filter((p) => /artillery/.test(p.cmd));

describe('failure paths', () => {
  it('signals while tearing down wait for the teardown: run.json written, nothing left', async () => {
    const r = startRun(GETH_DEV, { ...SHORT, DURATION_S: '5' });
    await r.waitFor(/tearing down/);
    r.child.kill('SIGTERM');
    await sleep(50);
    r.child.kill('SIGINT');
    const res = await r.done;
    assert.equal(res.code, 0, res.stderr);
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok', 'the measurement was complete');
    assert.ok(run.figures.requests_ok > 0);
    assert.match(
      run.warnings.join('\n'),
      /SIGTERM received while tearing down: the teardown was completed and the report written/,
    );
    assert.match(res.stderr, /SIGTERM: still tearing down; chainperf exits once the report is written/);
    assert.deepEqual(leftBehind(r, run.run_id), NOTHING);
  });

  it('compose: signals while tearing down wait for compose down: run.json written, no container, volume or network left', async () => {
    const r = startRun(GETH_DEV, { ...SHORT, RUNTIME: 'compose', GRAFANA: 'no', DURATION_S: '5', IDLE_S: '4' });
    await r.waitFor(/tearing down/);
    r.child.kill('SIGTERM');
    await sleep(200);
    r.child.kill('SIGINT');
    const res = await r.done;
    const project = /starting compose project (\S+)/.exec(res.stderr)[1];
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.match(run.warnings.join('\n'), /SIGTERM received while (tearing down|writing the report)/);
    assert.deepEqual(await docker.projectLeftovers(project), { containers: [], volumes: [], networks: [] });
    assert.deepEqual(leftBehind(r, run.run_id), NOTHING);
  });

  it('a third signal forces an exit that prints what is left with the commands that remove it', async () => {
    // Its own runs folder: a run another test starts meanwhile would reclaim what this one left before the test looks.
    const r = startRun(GETH_DEV, { ...SHORT, DURATION_S: '30', CHAINPERF_RUNS_DIR: tmpDir('chainperf-runs-') });
    await r.waitFor(/measure: measuring for/);
    await sleep(7000); // the load is running
    // Three kinds, sent at once: one kind sent repeatedly may arrive as one, and the teardown may finish meanwhile.
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) r.child.kill(sig);
    const res = await r.done;
    assert.equal(res.code, 130, res.stderr);
    const runId = runIdOf(res.stderr);
    assert.deepEqual(await settled(() => artilleryUnder(r.tmp)), [], 'the load generator is killed even when forced');
    const commands = [...res.stderr.matchAll(/left: (.*); remove it with: (.*)$/gm)].map((m) => ({
      what: m[1],
      command: m[2],
    }));
    assert.ok(
      commands.some((c) => /^cgroups chainperf\//.test(c.what)),
      res.stderr,
    );
    assert.ok(
      commands.some((c) => /^work folder /.test(c.what)),
      res.stderr,
    );
    assert.notDeepEqual(leftBehind(r, runId), NOTHING, 'something was left to remove');
    for (const c of commands) {
      try {
        execFileSync('sh', ['-c', c.command], { stdio: 'ignore' });
      } catch (err) {
        // A process listed as left may finish exiting on its own before its kill command runs.
        if (!/^kill -9 \d+$/.test(c.command)) throw err;
      }
    }
    await sleep(500);
    assert.deepEqual(leftBehind(r, runId), NOTHING);
  });

  it('kill -9 in the window: a later run kills what it started, removes its cgroups and work folder, and writes its run.json (killed)', async () => {
    const runs = tmpDir('chainperf-runs-');
    const r = startRun(GETH_DEV, { ...SHORT, DURATION_S: '30', CHAINPERF_RUNS_DIR: runs });
    await r.waitFor(/measure: measuring for/);
    await sleep(4000);
    r.child.kill('SIGKILL');
    const res = await r.done;
    const runId = runIdOf(res.stderr);
    const reportDir = path.join(r.reports, 'geth-dev', runId);
    await sleep(500);
    const left = leftBehind(r, runId);
    assert.ok(
      left.processes.length && left.cgroup && left.work.length,
      `the killed run left its parts: ${JSON.stringify(left)}`,
    );
    assert.ok(!fs.existsSync(path.join(reportDir, 'run.json')));
    // Any later run reclaims it first: here one that fails at once (nothing answers at its RPC_URL).
    const dead = writeScenario(
      tmpDir(),
      'dead',
      `RUNTIME=attach\nRPC_URL=http://127.0.0.1:9\nNODE_PID=${process.pid}\n`,
    );
    // (RETRY_S=0: nothing answers there, and the run need not retry for a minute to show that it reclaimed the other)
    const later = await startRun(dead, { CHAINPERF_RUNS_DIR: runs, SYNC_TIMEOUT_S: '2', RETRY_S: '0' }).done;
    assert.match(
      later.stderr,
      new RegExp(`run ${runId} was killed before it could tear down: removed .*cgroups.*work folder`),
    );
    assert.deepEqual(leftBehind(r, runId), NOTHING);
    const run = readRun(reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'killed');
    assert.equal(run.phase, 'measure');
    assert.match(run.error, /was killed during measure/);
    assert.ok(run.sync && run.sync.head >= 1, 'what was measured before the kill is kept');
    assert.match(fs.readFileSync(path.join(reportDir, 'summary.md'), 'utf8').split('\n')[0], /KILLED/);
    assert.deepEqual(fs.readdirSync(runs), [], 'no lock is left: the killed one reclaimed, the later one released');
  });

  it('attach with NODE_PID: the node killed in the window fails the run at once, the generator with it', async () => {
    const node = await startGeth();
    try {
      const file = writeScenario(
        tmpDir(),
        'attach-dies',
        asLines({ RUNTIME: 'attach', RPC_URL: node.rpcUrl, NODE_PID: node.pid, ...SHORT, DURATION_S: 40 }).join('\n'),
      );
      const r = startRun(file);
      await r.waitFor(/measure: measuring for/);
      await untilLoaded(r, node.metricsUrl); // inside the window, with its load coming in
      process.kill(node.pid, 'SIGKILL');
      const killedAt = Date.now();
      const res = await r.done;
      assert.ok(Date.now() - killedAt < 15000, "the run stopped soon after the node died, not at the window's end");
      assert.equal(res.code, 1, res.stderr);
      const run = readRun(res.reportDir);
      assert.deepEqual(schemaErrors(run), []);
      assert.equal(run.status, 'failed');
      assert.match(run.error, /the node \(NODE_PID=\d+\) exited during measure/);
      // The window cut short keeps its figures and series up to the failure.
      assert.equal(run.window.partial, true);
      assert.ok(
        run.window.end_ms <= killedAt && run.window.end_ms > run.window.start_ms,
        'the window ends before the node died',
      );
      assert.ok(run.figures.requests_ok > 0 && run.figures.cpu_ms_per_request > 0, JSON.stringify(run.figures));
      const series = JSON.parse(fs.readFileSync(path.join(res.reportDir, 'series.json'), 'utf8'));
      assert.ok(series.requests.length > 0 && series.requests.every((p) => p.t_ms < run.window.end_ms));
      assert.deepEqual(await settled(() => artilleryUnder(r.tmp)), [], 'no artillery process survives');
      assert.deepEqual(processesWith(r.tmp), []);
    } finally {
      await node.stop();
    }
  });

  it('attach with METRICS_URL: the node killed in the window is noticed before the window ends', async () => {
    const node = await startGeth();
    try {
      const file = writeScenario(
        tmpDir(),
        'attach-gone',
        asLines({
          RUNTIME: 'attach',
          RPC_URL: node.rpcUrl,
          METRICS_URL: node.metricsUrl,
          ...SHORT,
          IDLE_S: 3,
          DURATION_S: 45,
        }).join('\n'),
      );
      const r = startRun(file);
      await r.waitFor(/measure: measuring for/);
      await sleep(16000); // past the start edge, which waits for a refresh of the node's CPU counter (3 s)
      process.kill(node.pid, 'SIGKILL');
      const killedAt = Date.now();
      const res = await r.done;
      assert.ok(Date.now() - killedAt < 20000, "noticed within seconds, not at the window's end");
      const run = readRun(res.reportDir);
      assert.equal(run.status, 'failed');
      assert.match(
        run.error,
        /the node stopped answering: neither its metrics endpoint \(METRICS_URL\) nor RPC_URL answered/,
      );
      assert.deepEqual(await settled(() => artilleryUnder(r.tmp)), [], 'no artillery process survives');
    } finally {
      await node.stop();
    }
  });

  it('a node frozen in the window (SIGSTOP) fails the run as stalled, the waiting requests counted and the figures kept', async () => {
    // no timeout inside the window; the scenario's closed loop, whose 32 users wait on the frozen node (an open loop
    // would pile up a request every 10 ms, each waiting out its REQUEST_TIMEOUT_MS in the teardown)
    const closedLoop = Object.fromEntries(Object.entries(SHORT).filter(([k]) => k !== 'RATE'));
    const r = startRun(GETH_DEV, { ...closedLoop, DURATION_S: '16', REQUEST_TIMEOUT_MS: '25000' });
    await r.waitFor(/measure: measuring for/);
    const port = /--metrics\.port (\d+)/.exec(r.stderrText())[1];
    await untilLoaded(r, `http://127.0.0.1:${port}/debug/metrics/prometheus`); // 3 s into the window, load coming in
    const geth = gethOf(r.tmp);
    process.kill(geth.pid, 'SIGSTOP');
    const res = await r.done;
    assert.equal(res.code, 1, res.stderr);
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'failed');
    assert.match(run.error, /the node stalled: no request completed in the last \d+ s of the window/);
    assert.equal(run.generator.stall.at_end, true);
    assert.ok(run.generator.stall.seconds >= 5);
    assert.ok(run.generator.stall.requests_waiting > 0, 'the stalled requests are counted');
    assert.ok(run.figures.requests_ok > 0, 'what was measured before the stall is kept');
    assert.deepEqual(leftBehind(r, run.run_id), NOTHING);
  });

  it('Prometheus killed in the window: the figures kept, the cross-check marked missing', async () => {
    const r = startRun(GETH_DEV, { ...SHORT, DURATION_S: '8' });
    await r.waitFor(/measure: measuring for/);
    await sleep(8000);
    const prom = processesWith(r.tmp).find((p) => /prometheus.*--config\.file/.test(p.cmd) && !p.cmd.startsWith('sh '));
    assert.ok(prom, 'Prometheus is running');
    process.kill(prom.pid, 'SIGKILL');
    const res = await r.done;
    assert.equal(res.code, 0, res.stderr);
    const run = readRun(res.reportDir);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.ok(run.figures.cpu_ms_per_request > 0);
    assert.equal(run.node.rpc_requests, null);
    assert.match(run.warnings.join('\n'), /the Prometheus cross-check is missing for measure/);
  });

  it('two runs at once on one machine: both reports warn', async () => {
    const env = { ...SHORT, DURATION_S: '6' };
    const [a, b] = [startRun(GETH_DEV, env), startRun(GETH_DEV, env)];
    const [ra, rb] = await Promise.all([a.done, b.done]);
    const [runA, runB] = [readRun(ra.reportDir), readRun(rb.reportDir)];
    assert.match(
      runA.warnings.join('\n'),
      new RegExp(`another chainperf run \\(${runB.run_id}\\) was running on this machine`),
    );
    assert.match(
      runB.warnings.join('\n'),
      new RegExp(`another chainperf run \\(${runA.run_id}\\) was running on this machine`),
    );
    assert.deepEqual(schemaErrors(runA), []);
  });
});
