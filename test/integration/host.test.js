'use strict';
// A real short scenario on geth with the host runtime, run as a user runs it.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { startRun, watchGethCpu, processesWith, readRun, artilleryCount, assertScrapedClose } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const { readSteal } = require('../../src/measure/steal');

const SHORT = {
  DURATION_S: '10',
  WARMUP_S: '3',
  IDLE_S: '4',
  HISTORY_TRANSFERS: '40',
  HISTORY_CONTRACT_CALLS: '24',
  ARCHIVE: 'git',
  MIN_RPS: '100',
  MAX_ERROR_RATE: '0',
};

describe('host runtime: geth --dev end to end', () => {
  let res;
  let run;
  let cpuWatch;
  let tmp;
  let stealAround;

  before(async () => {
    const stealBefore = readSteal('0');
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), SHORT);
    tmp = r.tmp;
    // An independent reading of geth's CPU: /proc/PID/stat of the geth process, sampled by this test.
    cpuWatch = watchGethCpu(tmp);
    res = await r.done;
    cpuWatch.stop();
    stealAround = readSteal('0').steal_s - stealBefore.steal_s;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 and prints the report folder as its last line', () => {
    assert.equal(res.code, 0);
    assert.ok(fs.statSync(res.reportDir).isDirectory());
    assert.match(res.reportDir, /reports\/geth-dev\/\d{8}-\d{6}-[0-9a-f]{4}$/);
  });

  it('runs the warm-up and the window on one load generator: the window has a 1 s lead-in, no start-up of its own', () => {
    assert.deepEqual(run.window_generator, { mode: 'kept', reason: null });
    assert.match(res.stderr, /window: one load generator runs the warm-up and the window \(REPEAT_GENERATOR=kept\)/);
    assert.match(
      res.stderr,
      /measure: measuring for \d+ s from \S+ \(after a 1 s lead-in of the generator kept running\)/,
    );
  });

  it('writes run.json valid against the schema, with status ok and provenance', () => {
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.client.name, 'geth');
    assert.match(run.provenance.client.version, /^1\.16\.7/);
    assert.match(run.provenance.toolkit.commit, /^[0-9a-f]{40}$/);
    assert.equal(run.provenance.scenario.DURATION_S, 10, 'the environment override is in the resolved scenario');
    assert.equal(run.provenance.scenario_sources.DURATION_S, 'environment DURATION_S');
    assert.ok(run.provenance.machine.cores >= 1);
  });

  it('measures the window it says, with requests answered and node CPU split in user and system', () => {
    const f = run.figures;
    assert.equal(run.window.end_ms - run.window.start_ms, 10000);
    assert.ok(f.requests_ok > 1000, `requests_ok ${f.requests_ok}`);
    assert.equal(f.requests_failed, 0, JSON.stringify(run.errors));
    assert.ok(run.node.cpu_user_s > 0 && run.node.cpu_system_s > 0);
    // The total is cpuacct.usage (exact); user and system are the kernel's tick-sampled split of it.
    const split = run.node.cpu_user_s + run.node.cpu_system_s;
    assert.ok(
      Math.abs(split - run.node.cpu_total_s) <= 0.25 * run.node.cpu_total_s,
      `split ${split} against total ${run.node.cpu_total_s}`,
    );
    // CPU read at the window's edges is divided by the requests completed between the two reads (cpu_window)
    const cw = run.node.cpu_window;
    assert.ok(Math.abs(f.cpu_ms_per_request - (run.node.cpu_total_s * 1000) / cw.requests_ok) < 1e-5);
    assert.ok(
      Math.abs(cw.start_ms - run.window.start_ms) < 500 && Math.abs(cw.end_ms - run.window.end_ms) < 500,
      'read close to the planned edges',
    );
    assert.ok(
      Math.abs(cw.requests_ok - f.requests_ok) <= f.requests_ok * 0.05,
      `${cw.requests_ok} of ${f.requests_ok}`,
    );
    assert.ok(f.cpu_ms_per_request_net < f.cpu_ms_per_request && f.cpu_ms_per_request_net > 0);
    assert.ok(Math.abs(f.rps - f.requests_ok / 10) < 0.01);
    const l = f.latency_ms;
    assert.ok(l.p50 > 0 && l.p50 <= l.p95 && l.p95 <= l.p99 && l.p99 <= l.max);
  });

  it("reads the steal time of the node's core over the window, within what the whole run saw", () => {
    const st = run.node.steal;
    assert.equal(st.cpus, '0', 'geth is pinned to cpu 0 on 2 cores');
    assert.ok(st.share >= 0 && st.share <= 1 && st.steal_s >= 0, JSON.stringify(st));
    assert.ok(st.steal_s <= stealAround + 0.01, `window ${st.steal_s} s, whole run ${stealAround} s`);
  });

  it('node CPU agrees with an independent reading of /proc/PID/stat over the same window', () => {
    const independent = cpuWatch.cpuAt(run.node.cpu_window.end_ms) - cpuWatch.cpuAt(run.node.cpu_window.start_ms);
    const measured = run.node.cpu_total_s;
    assert.ok(
      Math.abs(independent - measured) / measured < 0.05,
      `chainperf ${measured} s, /proc ${independent.toFixed(3)} s`,
    );
  });

  it('every method of the mix was called, and per-method counts add up', () => {
    const methods = run.figures.methods;
    assert.equal(Object.keys(methods).length, 10);
    const sum = Object.values(methods).reduce((s, m) => s + m.requests_ok, 0);
    assert.equal(sum, run.figures.requests_ok);
    for (const [name, m] of Object.entries(methods)) assert.ok(m.requests_ok > 0 && m.latency_ms.p50 > 0, name);
  });

  it("artillery's own counters and the node's request counter agree with the figures", () => {
    assert.equal(artilleryCount(res.reportDir, 'chainperf.ok.'), run.figures.requests_ok);
    assert.equal(artilleryCount(res.reportDir, 'chainperf.failed.'), run.figures.requests_failed);
    // geth's rpc_requests through Prometheus, scraped every second: close, not exact, at the edges
    assertScrapedClose(run);
  });

  it('keeps the raw artillery output, a summary and three SVG charts', () => {
    for (const f of [
      'artillery.json',
      'summary.md',
      'params.json',
      'series.json',
      'run.log',
      'node.log',
      'charts/cpu-per-request.svg',
      'charts/throughput.svg',
      'charts/latency.svg',
    ]) {
      assert.ok(fs.existsSync(path.join(res.reportDir, f)), f);
    }
    const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    assert.match(md, /CPU time per request \(gross\) \| \d+\.\d{3} ms/);
  });

  it('bounds that hold give a passing verdict and exit status 0', () => {
    assert.equal(run.verdict.pass, true);
    assert.deepEqual(
      run.verdict.checks.map((c) => [c.key, c.pass]),
      [
        ['MAX_ERROR_RATE', true],
        ['MIN_RPS', true],
      ],
    );
    assert.match(res.stderr, /verdict: pass \(MAX_ERROR_RATE, MIN_RPS\)/);
  });

  it('ARCHIVE=git commits the report with the scenario and the headline figure', () => {
    const git = (...a) => execFileSync('git', a, { cwd: res.reportDir, encoding: 'utf8' }).trim();
    assert.match(git('log', '-1', '--format=%s'), /^chainperf: geth-dev ok: \d+\.\d{3} ms CPU\/request/);
    assert.equal(git('status', '--porcelain', '.'), '', 'everything in the folder is committed');
    const files = git('show', '--name-only', '--format=', 'HEAD');
    assert.match(files, /geth-dev\/[^/]+\/run\.json/);
    assert.match(files, /^INDEX\.md$/m, 'the index of the reports is committed with the run');
  });

  it('leaves no process, cgroup or temporary folder behind', () => {
    assert.deepEqual(processesWith(tmp), []);
    assert.ok(!fs.existsSync(`/proc/${run.node.pid}`), 'geth is gone');
    const leftovers = fs.readdirSync(tmp).filter((f) => f.startsWith('chainperf-'));
    assert.deepEqual(leftovers, []);
    const own = fs.readFileSync('/proc/self/cgroup', 'utf8').match(/cpuacct[^:]*:(.*)/);
    if (own) assert.ok(!fs.existsSync(path.join('/sys/fs/cgroup/cpuacct', own[1], 'chainperf', run.run_id)));
  });
});

describe("host runtime with GENERATOR=lean and LEAN_RUNNER=artillery: chainperf's engine in artillery on geth", () => {
  let res;
  let run;
  let cpuWatch;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      ...SHORT,
      ARCHIVE: 'none',
      DURATION_S: '6',
      GENERATOR: 'lean',
      LEAN_RUNNER: 'artillery', // artillery's own counters, an independent count (the other lean tests use the runner)
    });
    cpuWatch = watchGethCpu(r.tmp);
    res = await r.done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('runs the default mix with every method answered and none failed', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.provenance.scenario.GENERATOR, 'lean');
    assert.match(fs.readFileSync(path.join(res.reportDir, 'artillery.log'), 'utf8'), /All VUs finished/);
    assert.equal(run.figures.requests_failed, 0, JSON.stringify(run.errors));
    assert.equal(Object.keys(run.figures.methods).length, 10);
  });

  it("its counts agree with artillery's counters and the node's, its CPU with /proc", () => {
    assert.equal(artilleryCount(res.reportDir, 'chainperf.ok.'), run.figures.requests_ok);
    assertScrapedClose(run);
    const independent = cpuWatch.cpuAt(run.node.cpu_window.end_ms) - cpuWatch.cpuAt(run.node.cpu_window.start_ms);
    assert.ok(Math.abs(independent - run.node.cpu_total_s) / run.node.cpu_total_s < 0.05);
  });

  it("reports the generator's own CPU per request (its speed is measured by npm run bench, not here)", () => {
    assert.ok(run.generator.cpu_us_per_request > 0);
    assert.ok(run.generator.cpu_s > 0);
  });
});
