'use strict';
// REPEAT and PROFILE=methods on real geth: several windows on one warm node,
// their load from one generator kept across them.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, readRun } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');

describe('REPEAT=3 and PROFILE=methods on geth --dev', () => {
  let res;
  let run;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      GENERATOR: 'lean',
      WORKLOAD: 'eth-reads-light',
      REPEAT: '3',
      DURATION_S: '3',
      PROFILE: 'methods',
      PROFILE_DURATION_S: '2',
      WARMUP_S: '1',
      IDLE_S: '1',
      HISTORY_TRANSFERS: '8',
      HISTORY_CONTRACT_CALLS: '0',
    });
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('keeps one load generator across the repetitions (REPEAT_GENERATOR=kept, the default): a 1 s lead-in per window', () => {
    assert.deepEqual(run.repetitions_generator, { mode: 'kept', reason: null });
    assert.match(res.stderr, /repetitions: one load generator runs the warm-up and the 3 windows/);
    const leads = res.stderr.match(
      /rep\d: measuring for \d+ s from \S+ \(after a 1 s lead-in of the generator kept running\)/g,
    );
    assert.equal((leads || []).length, 3, 'every repetition with a lead-in, none with a start-up of its own');
    assert.ok(fs.existsSync(path.join(res.reportDir, 'artillery-repeat.json')), "the kept pass's own output");
  });

  it('keeps every repetition, each after its own idle baseline, and summarizes them', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.repetitions.length, 3);
    for (const r of run.repetitions) {
      assert.ok(r.idle && r.idle.seconds > 0);
      assert.ok(r.figures.requests_ok > 0);
    }
    const windows = run.repetitions.map((r) => r.window);
    for (let i = 1; i < 3; i++) assert.ok(windows[i].start_ms >= windows[i - 1].end_ms, 'windows do not overlap');
    const cpu = run.repetitions.map((r) => r.figures.cpu_ms_per_request).sort((a, b) => a - b);
    assert.equal(run.summary.cpu_ms_per_request.median, cpu[1]);
    assert.equal(run.figures.cpu_ms_per_request, cpu[1], "the top-level figures are the median repetition's");
    assert.equal(run.summary.cpu_ms_per_request.n, 3);
    assert.ok(run.summary.cpu_ms_per_request.ci95[0] <= run.summary.cpu_ms_per_request.mean);
    assert.ok(Array.isArray(run.outliers));
    // the generator's own CPU per request, summarized beside the node's figures as the machine's noise
    const gen = run.repetitions.map((r) => r.generator.cpu_us_per_request).sort((a, b) => a - b);
    assert.ok(gen[0] > 0);
    assert.equal(run.summary.generator_us_per_request.median, gen[1]);
  });

  it('measures each method of the mix alone, and charts it', () => {
    assert.deepEqual(Object.keys(run.methods_profile).sort(), [
      'eth_blockNumber',
      'eth_getBalance',
      'eth_getBlockByNumber',
    ]);
    for (const [name, m] of Object.entries(run.methods_profile)) {
      assert.ok(m.requests_ok > 0 && m.cpu_ms_per_request > 0, name);
      assert.equal(m.requests_failed, 0, name);
    }
    assert.ok(fs.existsSync(path.join(res.reportDir, 'charts', 'methods.svg')));
    assert.ok(fs.existsSync(path.join(res.reportDir, 'artillery-method-eth_getBalance.json')));
    const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    assert.match(md, /## Repetitions \(3, on the warm stack\)/);
    assert.match(md, /## CPU per method \(PROFILE=methods\)/);
  });
});
