'use strict';
// GENERATORS=2 on a real geth in the host runtime: two artillery processes,
// each in its own cgroup, share the load; run.json gives each one's share and
// CPU, and the window's requests are theirs together.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, readRun } = require('./harness');
const { schemaErrors, tmpDir, writeScenario } = require('../helpers');

/** Checks what every GENERATORS=2 run must give: two records that add up to the window's. */
function assertTwoGenerators(run, reportDir) {
  assert.deepEqual(schemaErrors(run), []);
  const g = run.generator;
  assert.equal(g.processes, 2);
  assert.equal(g.generators.length, 2);
  const answered = run.figures.requests_ok + run.figures.requests_failed;
  assert.equal(
    g.generators[0].requests + g.generators[1].requests,
    answered,
    "the generators' requests are the window's",
  );
  for (const one of g.generators) {
    assert.ok(one.requests > 0 && one.workers > 0, `generator ${one.index} sent requests: ${JSON.stringify(one)}`);
    assert.ok(one.cpu_s > 0, `generator ${one.index}'s own cgroup counted its CPU`);
  }
  // the generator's cgroup holds both generators' cgroups, and nothing else runs in it
  const both = g.generators[0].cpu_s + g.generators[1].cpu_s;
  assert.ok(Math.abs(both - g.cpu_s) <= 0.03 * g.cpu_s, `${both} s in the two cgroups against ${g.cpu_s} s in all`);
  for (const f of ['artillery.json', 'artillery-g1.json', 'artillery.log', 'artillery-g1.log'])
    assert.ok(fs.existsSync(path.join(reportDir, f)), `${f} in the report`);
  assert.match(fs.readFileSync(path.join(reportDir, 'summary.md'), 'utf8'), /generator 1 of 2 \(cpus /);
}

describe('several load generators (GENERATORS=2) on geth', () => {
  const dir = tmpDir();
  const common = ['RUNTIME=host', 'GENERATORS=2', 'WARMUP_S=1', 'IDLE_S=0', 'DURATION_S=6'];

  it('GENERATOR=lean, RATE=300: each generator offers 150 requests/s and serves about that', async () => {
    const file = writeScenario(dir, 'lean', [...common, 'GENERATOR=lean', 'RATE=300'].join('\n'));
    const res = await startRun(file).done;
    assert.equal(res.code, 0, res.stderr);
    const run = readRun(res.reportDir);
    assertTwoGenerators(run, res.reportDir);
    for (const f of ['artillery.json', 'artillery-g1.json']) {
      const out = JSON.parse(fs.readFileSync(path.join(res.reportDir, f), 'utf8'));
      assert.match(out.runner, /lean runner/, `${f}: LEAN_RUNNER=chainperf (the default) ran the pass`);
      assert.ok(out.aggregate.counters['chainperf.ok.eth_call'] > 0, f);
    }
    for (const one of run.generator.generators) {
      assert.deepEqual(one.offered, { rate: 150 });
      assert.ok(Math.abs(one.requests_per_s - 150) < 15, `generator ${one.index}: ${one.requests_per_s}/s of 150`);
    }
  });

  it('GENERATOR=ethers, CONCURRENCY=5: the users are divided 3 and 2, and both generators ran through ethers', async () => {
    const file = writeScenario(dir, 'ethers', [...common, 'CONCURRENCY=5'].join('\n'));
    const res = await startRun(file).done;
    assert.equal(res.code, 0, res.stderr);
    const run = readRun(res.reportDir);
    assertTwoGenerators(run, res.reportDir);
    assert.deepEqual(
      run.generator.generators.map((x) => x.offered.users),
      [3, 2],
    );
    const script = fs.readFileSync(path.join(res.reportDir, 'artillery-g1.yml'), 'utf8');
    assert.match(script, /arrivalCount: 2/, 'the second generator starts its 2 users');
  });
});
