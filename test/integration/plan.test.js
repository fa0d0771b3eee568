'use strict';
// A small real plan on geth (two points, short windows), its report, the
// index of the reports, and a comparison of its two runs.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { startRun, LIGHT_LOAD } = require('./harness');
const { ROOT, tmpDir, writeScenario } = require('../helpers');

describe('plan: a two-point cache sweep on geth, archived and compared', () => {
  let res;
  let state;
  let reports;

  before(async () => {
    const dir = tmpDir();
    reports = path.join(dir, 'reports');
    const file = writeScenario(
      dir,
      'cache-mini',
      [
        `BASE=${path.join(ROOT, 'scenarios', 'geth-dev.env')}`,
        'SWEEP=DB_CACHE_MB',
        'DB_CACHE_MB=32,1024',
        'REPETITIONS=1',
        'DURATION_S=6',
        'WARMUP_S=2',
        'IDLE_S=2',
        'HISTORY_TRANSFERS=16',
        'HISTORY_CONTRACT_CALLS=8',
        'ARCHIVE=git',
      ].join('\n'),
    );
    // a light load: the test is about the plan around its runs, not about their figures
    res = await startRun(file, { REPORTS_DIR: reports, ...LIGHT_LOAD }).done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    state = JSON.parse(fs.readFileSync(path.join(res.reportDir, 'plan.json'), 'utf8'));
  });

  it('runs every point unattended and prints the plan folder last', () => {
    assert.equal(res.code, 0);
    assert.equal(state.status, 'complete');
    assert.deepEqual(
      state.points.map((p) => [p.values.DB_CACHE_MB, p.runs.map((r) => r.status)]),
      [
        ['32', ['ok']],
        ['1024', ['ok']],
      ],
    );
    assert.equal(path.relative(reports, res.reportDir).split(path.sep).slice(0, 2).join('/'), 'plans/cache-mini');
  });

  it('each point ran with its value: geth got the cache size', () => {
    for (const p of state.points) {
      const run = JSON.parse(fs.readFileSync(path.join(res.reportDir, p.runs[0].dir, 'run.json'), 'utf8'));
      assert.equal(run.provenance.scenario.DB_CACHE_MB, Number(p.values.DB_CACHE_MB));
      assert.match(
        fs.readFileSync(path.join(res.reportDir, p.runs[0].dir, 'run.log'), 'utf8'),
        new RegExp(`--cache ${p.values.DB_CACHE_MB} `),
      );
      assert.ok(run.figures.cpu_ms_per_request > 0);
    }
  });

  it('writes the plan report: a table of every point and charts against the parameter', () => {
    const md = fs.readFileSync(path.join(res.reportDir, 'plan.md'), 'utf8');
    assert.match(md, /^\| 32 \| 1 \| 0 \| \d+\.\d{3} \|/m);
    assert.match(md, /^\| 1024 \| 1 \| 0 \| \d+\.\d{3} \|/m);
    for (const c of ['cpu_ms_per_request.svg', 'rps.svg', 'p99_ms.svg']) {
      assert.match(fs.readFileSync(path.join(res.reportDir, 'charts', c), 'utf8'), /<circle/);
    }
  });

  it('the index lists the plan, and the archive commits plan and index', () => {
    assert.match(
      fs.readFileSync(path.join(reports, 'INDEX.md'), 'utf8'),
      /\| cache-mini \| DB_CACHE_MB \| 2 \| complete \| \[plan\]\(plans\/cache-mini\//,
    );
    const git = (...a) => execFileSync('git', a, { cwd: reports, encoding: 'utf8' }).trim();
    assert.match(git('log', '-1', '--format=%s'), /^chainperf: plan cache-mini complete: 2\/2 runs/);
    assert.equal(git('status', '--porcelain'), '');
  });

  it('compare prints both runs side by side and writes compare.md', () => {
    const [a, b] = state.points.map((p) => path.join(res.reportDir, p.runs[0].dir));
    const out = execFileSync(path.join(ROOT, 'run.sh'), ['compare', a, b], {
      cwd: ROOT,
      env: { ...process.env, REPORTS_DIR: reports },
      encoding: 'utf8',
    });
    const lines = out.trim().split('\n');
    const folder = lines[lines.length - 1];
    // one window each: compare gives the ratio but no verdict, and points to ./run.sh ab
    assert.match(
      out,
      /\| CPU ms per request \(gross\) \| \d+\.\d{3} \| \d+\.\d{3} \| \d+\.\d{3} \| cannot tell: one window a side \|/,
    );
    assert.match(out, /\.\/run\.sh ab/);
    assert.ok(fs.existsSync(path.join(folder, 'compare.md')));
    assert.ok(folder.startsWith(path.join(reports, 'compare')));
  });
});
