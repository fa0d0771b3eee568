'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { parsePlan, expandValues, isPlanFile } = require('../../src/plan/parse');
const { runPlan } = require('../../src/plan/run');
const { writeReport } = require('../../src/report/write');
const { compare, renderCompare } = require('../../src/compare');
const { renderIndex } = require('../../src/report/index');
const { ROOT, tmpDir, writeScenario } = require('../helpers');

const BASE = path.join(ROOT, 'scenarios', 'geth-dev.env');

function fakeRun(
  dir,
  name,
  cpu,
  { rps = 1000, id = 'r1', perSecond = [cpu, cpu * 1.01, cpu * 0.99], reps = null } = {},
) {
  const runDir = path.join(dir, name, id);
  const run = {
    schema_version: 1,
    run_id: id,
    scenario_name: name,
    status: 'ok',
    phase: 'measure',
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:01:00.000Z',
    warnings: [],
    window: { start_ms: 0, end_ms: 3000 },
    figures: {
      requests_ok: 3000,
      requests_failed: 0,
      cpu_ms_per_request: cpu,
      cpu_ms_per_request_net: cpu * 0.9,
      rps,
      latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 },
      methods: {},
    },
    provenance: {
      toolkit: {},
      client: { name: 'geth', version: '1.16.7' },
      runtime: 'host',
      machine: { cpu_model: 'X', cores: 2, memory_bytes: 2 ** 34, kernel: 'k' },
      scenario: { CORES: 1 },
    },
  };
  if (reps)
    run.repetitions = reps.map((x) => ({
      figures: { ...run.figures, cpu_ms_per_request: x, cpu_ms_per_request_net: x * 0.9 },
    }));
  const series = {
    requests: perSecond.map((_, i) => ({
      t_ms: i * 1000,
      span_ms: 1000,
      ok: rps,
      failed: 0,
      latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 },
    })),
    cpu_per_request: perSecond.map((v, i) => ({ t_ms: i * 1000, cpu_ms_per_request: v })),
  };
  writeReport(runDir, run, series);
  return { runDir, run };
}

describe('plans', () => {
  it('expands lists, arithmetic and geometric ranges', () => {
    assert.deepEqual(expandValues('4, 10,50').values, ['4', '10', '50']);
    assert.deepEqual(expandValues('50..200+50').values, ['50', '100', '150', '200']);
    assert.deepEqual(expandValues('32..1024*2').values, ['32', '64', '128', '256', '512', '1024']);
    assert.match(expandValues('10..1+1').error, /ends below its start/);
    assert.match(expandValues('1..8*1').error, /factor must be above 1/);
  });

  it('makes one point per combination of the swept keys, named after their values', () => {
    const dir = tmpDir();
    const file = writeScenario(
      dir,
      'p',
      `BASE=${BASE}\nSWEEP=DB_CACHE_MB,PEERS\nDB_CACHE_MB=32,64\nPEERS=4,50\nREPETITIONS=2\nDURATION_S=5\n`,
    );
    assert.ok(isPlanFile(file));
    assert.ok(!isPlanFile(BASE));
    const { plan, errors } = parsePlan(file, { env: {} });
    assert.deepEqual(errors, []);
    assert.equal(plan.points.length, 4);
    assert.deepEqual(plan.points[1].values, { DB_CACHE_MB: '32', PEERS: '50' });
    assert.equal(plan.points[1].name, 'p-DB_CACHE_MB-32-PEERS-50');
    assert.deepEqual(plan.fixed, { DURATION_S: '5' });
    assert.equal(plan.repetitions, 2);
  });

  it('validates every point before anything starts, naming the point', () => {
    const dir = tmpDir();
    const file = writeScenario(dir, 'bad', `BASE=${BASE}\nSWEEP=CORES,PEERZ\nCORES=1,64\nDURATON_S=5\n`);
    const { errors } = parsePlan(file, { env: {} });
    assert.ok(
      errors.some((e) => /unknown key DURATON_S \(did you mean DURATION_S\?\)/.test(e)),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((e) => /SWEEP: PEERZ is not a scenario key \(did you mean PEERS\?\)/.test(e)),
      errors.join('\n'),
    );
    const file2 = writeScenario(dir, 'bad2', `BASE=${BASE}\nSWEEP=CORES\nCORES=1,64\n`);
    const r2 = parsePlan(file2, { env: {} });
    assert.equal(r2.errors.length, 1);
    assert.match(r2.errors[0], /^point CORES=64: .*CORES: 64 cores asked but this machine has/);
  });

  it('the shipped plans are valid', () => {
    for (const f of fs.readdirSync(path.join(ROOT, 'plans'))) {
      assert.deepEqual(parsePlan(path.join(ROOT, 'plans', f), { env: {} }).errors, [], f);
    }
  });

  it('runs every point, and resumes an interrupted plan where it stopped', async () => {
    const dir = tmpDir();
    const reports = path.join(dir, 'reports');
    const file = writeScenario(dir, 'sweep', `BASE=${BASE}\nSWEEP=DB_CACHE_MB\nDB_CACHE_MB=32,64,128\nREPETITIONS=2\n`);
    const calls = [];
    let interruptAt = 3;
    // A runner standing in for runScenario: it writes a real report folder for the point.
    const runner = async (base, { env }) => {
      calls.push(env.DB_CACHE_MB);
      if (calls.length === interruptAt)
        return { exitCode: 1, run: { status: 'failed', error: 'interrupted by SIGINT' } };
      const { runDir, run } = fakeRun(path.join(env.REPORTS_DIR), env.NAME, Number(env.DB_CACHE_MB) / 100, {
        id: `r${calls.length}`,
      });
      return { exitCode: 0, reportDir: runDir, run };
    };
    const quiet = { env: { REPORTS_DIR: reports }, out: () => {}, runner };
    const first = await runPlan(file, quiet);
    assert.equal(first.exitCode, 1);
    assert.equal(first.state.status, 'interrupted');
    // Round 1 measures every point once, in a shuffled order; the third run was interrupted.
    assert.deepEqual([...calls].sort(), ['128', '32', '64']);
    const interruptedPoint = calls[2];

    interruptAt = -1;
    const second = await runPlan(file, quiet);
    assert.equal(second.planDir, first.planDir, 'the same folder is resumed');
    assert.equal(second.state.status, 'complete');
    // Measured runs are kept; the rest run in rounds: every point once (round 2, shuffled), then the point
    // whose round-1 run was interrupted once more. Never every repetition of a point in a row.
    const resumed = calls.slice(3);
    assert.deepEqual(resumed.slice(0, 3).sort(), ['128', '32', '64']);
    assert.deepEqual(resumed.slice(3), [interruptedPoint]);
    const md = fs.readFileSync(path.join(second.planDir, 'plan.md'), 'utf8');
    const p = Number(interruptedPoint);
    assert.match(
      md,
      new RegExp(`\\| ${p} \\| 2 \\| 1 \\| ${(p / 100).toFixed(3).replace('.', '\\.')} \\[`),
      'two ok runs, one interrupted, with an interval',
    );
    for (const c of ['cpu_ms_per_request.svg', 'rps.svg', 'p99_ms.svg'])
      assert.ok(fs.existsSync(path.join(second.planDir, 'charts', c)));
    const third = await runPlan(file, quiet);
    assert.notEqual(third.planDir, first.planDir, 'a complete plan is not resumed: a new one starts');
    assert.match(
      fs.readFileSync(path.join(reports, 'INDEX.md'), 'utf8'),
      /\| sweep \| DB_CACHE_MB \| 3 \| complete \|/,
    );
  });
});

describe('plans: the order of runs', () => {
  it('each round is a permutation of the points, the same for the same plan, not the same in every round', () => {
    const { roundOrder } = require('../../src/plan/run');
    const orders = [0, 1, 2, 3, 4, 5].map((r) => roundOrder(6, 'a1b2c3d4e5f60718', r));
    for (const o of orders) assert.deepEqual([...o].sort(), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(roundOrder(6, 'a1b2c3d4e5f60718', 2), orders[2], 'repeatable, so a resumed plan keeps its order');
    assert.ok(new Set(orders.map((o) => o.join())).size > 1, 'the order changes between rounds');
  });
});

describe('plans and Ctrl-C', () => {
  it('Ctrl-C between two runs stops the plan before the next run and writes the plan report', async () => {
    const dir = tmpDir();
    const file = writeScenario(dir, 'stop', `BASE=${BASE}\nSWEEP=PEERS\nPEERS=4,10,25\n`);
    const calls = [];
    const runner = async (base, { env }) => {
      calls.push(env.PEERS);
      const { runDir, run } = fakeRun(env.REPORTS_DIR, env.NAME, 0.1, { id: `r${calls.length}` });
      if (calls.length === 1) setImmediate(() => process.emit('SIGINT')); // pressed just after the first run
      await new Promise((r) => setTimeout(r, 10));
      return { exitCode: 0, reportDir: runDir, run };
    };
    const res = await runPlan(file, { env: { REPORTS_DIR: path.join(dir, 'reports') }, out: () => {}, runner });
    assert.equal(calls.length, 1, 'no run after the one Ctrl-C came in');
    assert.equal(res.state.status, 'interrupted');
    assert.match(fs.readFileSync(path.join(res.planDir, 'plan.md'), 'utf8'), /— interrupted/);
    assert.equal(process.listenerCount('SIGINT'), 0, "the plan's handler is gone after it");
  });
});

describe('compare', () => {
  it('two runs with repetitions: ratios, and whether each difference is beyond the variation between windows', () => {
    const dir = tmpDir();
    const a = fakeRun(dir, 'a', 0.2, { reps: [0.2, 0.202, 0.198] });
    const b = fakeRun(dir, 'b', 0.3, { reps: [0.3, 0.302, 0.298] });
    const c = compare(a.runDir, b.runDir);
    const cpu = c.rows.find((r) => r.figure.startsWith('CPU ms per request (gross)'));
    assert.ok(Math.abs(cpu.ratio - 1.5) < 1e-9);
    assert.equal(cpu.beyond_noise, true);
    assert.match(c.noise, /repetitions of each run/);
    const same = compare(a.runDir, fakeRun(dir, 'c', 0.2005, { reps: [0.19, 0.21, 0.2] }).runDir);
    assert.equal(same.rows[0].beyond_noise, false);
    assert.match(renderCompare(c), /\| CPU ms per request \(gross\) \| 0\.200 \| 0\.300 \| 1\.500 \| yes \|/);
  });

  it('two single windows: no verdict from the seconds inside them, and a pointer to ./run.sh ab', () => {
    const dir = tmpDir();
    // The per-second values are tight: judged by them, this difference would be called beyond the noise.
    const c = compare(
      fakeRun(dir, 'a', 0.2).runDir,
      fakeRun(dir, 'b', 0.23, { perSecond: [0.23, 0.231, 0.229] }).runDir,
    );
    assert.equal(c.noise, null);
    for (const r of c.rows) assert.equal(r.beyond_noise, null);
    const md = renderCompare(c);
    assert.match(md, /\| 1\.150 \| cannot tell: one window a side \|/);
    assert.match(md, /\.\/run\.sh ab A\.env B\.env/);
  });

  it('refuses a run against a plan, and a folder that is neither', () => {
    const dir = tmpDir();
    const a = fakeRun(dir, 'a', 0.2);
    fs.mkdirSync(path.join(dir, 'plan'));
    fs.writeFileSync(path.join(dir, 'plan', 'plan.json'), JSON.stringify({ plan: 'p', sweep: ['X'], points: [] }));
    assert.throws(() => compare(a.runDir, path.join(dir, 'plan')), /cannot compare a run with a plan/);
    assert.throws(() => compare(a.runDir, dir), /neither a run folder/);
  });

  it('the index lists every run with its headline figures', () => {
    const dir = tmpDir();
    fakeRun(dir, 'a', 0.2);
    fakeRun(dir, 'b', 0.3, { id: 'r2' });
    const md = renderIndex(dir);
    assert.match(
      md,
      /\| geth 1\.16\.7 \| host \| 0\.200 \| 0\.180 \| 1000 \| 3\.0 \| \[summary\]\(a\/r1\/summary\.md\) \|/,
    );
    assert.match(md, /\[summary\]\(b\/r2\/summary\.md\)/);
  });
});
