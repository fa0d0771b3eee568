'use strict';
// ./run.sh capacity on real geth: two 1-vCPU instance profiles, one short saturation search each, a modest target,
// the choice verified behind a real HAProxy. The searches are cut short (two 2 s steps): the test is about the
// capacity run around them (a row per instance, the arithmetic on what was measured, the verification), not about
// geth's rate.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startRun, readRun } = require('./harness');
const { tmpDir, writeScenario, schemaErrors } = require('../helpers');

const PROFILES = {
  'm6g.medium': { MEMORY_MB: 4096, HOURLY_PRICE: 0.0385 },
  'do-s-1vcpu-2gb': { MEMORY_MB: 2048, HOURLY_PRICE: 0.01786 },
};

describe('capacity: two 1-vCPU profiles on geth --dev, a modest target, verified behind HAProxy', () => {
  let res;
  let cap;

  before(async () => {
    const file = writeScenario(
      tmpDir(),
      'capacity-mini',
      [
        'CHAIN=ethereum',
        'CLIENT=geth',
        'CLIENT_VERSION=1.16.7',
        'RUNTIME=host',
        'STATE=dev',
        'WORKLOAD=eth-default',
        'GENERATOR=lean',
        'TARGET_RPS=150',
        'MAX_P99_MS=200',
        'MAX_ERROR_RATE=0.01',
        `INSTANCES=${Object.keys(PROFILES).join(',')}`,
        'REDUNDANCY=N+1',
        'CAPACITY_REPEATS=1',
        // two steps from 100/s: both hold on a busy machine; the rate found is a lower bound, as the report says
        'SATURATE_START_RPS=100',
        'SATURATE_FACTOR=2',
        'SATURATE_MAX_STEPS=2',
        'SATURATE_BISECT=0',
        'SATURATE_STEP_S=2',
        'WARMUP_S=0',
        'IDLE_S=0',
        'DURATION_S=5',
        'HISTORY_TRANSFERS=16',
        'HISTORY_CONTRACT_CALLS=8',
      ].join('\n'),
    );
    res = await startRun(['capacity', file]).done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    cap = JSON.parse(fs.readFileSync(path.join(res.reportDir, 'capacity.json'), 'utf8'));
  });

  it('a row per instance, each searched with its own limits and price, and a choice', () => {
    assert.equal(res.code, 0, `exit status; verification: ${JSON.stringify(cap.verification)}`);
    assert.equal(cap.status, 'complete');
    assert.deepEqual(schemaErrors(cap, 'capacity'), []);
    assert.deepEqual(
      cap.instances.map((r) => [r.instance, r.status]),
      Object.keys(PROFILES).map((n) => [n, 'measured']),
    );
    for (const r of cap.instances) {
      assert.ok(r.saturated_rps.mean > 0, r.instance);
      assert.equal(r.saturated_rps.ci95, null, 'one search: no interval');
      const run = readRun(path.join(res.reportDir, r.searches.dirs[0]));
      const sc = run.provenance.scenario;
      assert.deepEqual(
        [sc.CORES, sc.MEMORY_MB, sc.HOURLY_PRICE, sc.SATURATE],
        [1, ...Object.values(PROFILES[r.instance]), 'yes'],
      );
      assert.equal(run.saturation.max_sustainable_rps, r.saturated_rps.mean);
    }
    assert.ok(Object.keys(PROFILES).includes(cap.choice.instance));
    assert.equal(cap.choice.call, 'no interval (1 search)');
  });

  it('cost figures equal replicas x price x 730, replicas the target over the usable rate plus one', () => {
    for (const r of cap.instances) {
      assert.equal(r.replicas, Math.ceil(150 / (r.saturated_rps.mean * 0.7) - 1e-9) + 1, r.instance);
      assert.ok(Math.abs(r.replicas_monthly_cost - r.replicas * r.hourly_price * 730) < 1e-9, r.instance);
      assert.ok(Math.abs(r.monthly_cost - r.replicas_monthly_cost - r.balancer_monthly_cost) < 1e-9, r.instance);
    }
    const chosen = cap.instances.find((r) => r.instance === cap.choice.instance);
    assert.equal(cap.choice.monthly_cost, chosen.monthly_cost);
    assert.ok(
      cap.instances.every((r) => r.monthly_cost >= chosen.monthly_cost),
      'the cheapest is chosen',
    );
  });

  it('the verification ran the chosen fleet (or its share) behind HAProxy, status ok, its balancer priced', () => {
    const v = cap.verification;
    assert.equal(v.status, 'ok');
    assert.equal(v.pass, true);
    const fits = cap.choice.replicas + 1 <= os.cpus().length;
    assert.equal(v.mode, fits ? 'fleet' : 'share');
    const run = readRun(path.join(res.reportDir, v.dir));
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.scenario.REPLICAS, v.replicas_run);
    assert.equal(run.provenance.scenario.BALANCER, 'haproxy');
    assert.equal(run.provenance.scenario.RATE, v.rate_rps);
    assert.equal(v.rate_rps, Math.ceil((150 * v.replicas_run) / v.replicas));
    assert.ok(run.node.fleet.balancer.cpu_ms_per_request > 0);
    assert.equal(cap.balancer.source, 'verification');
    assert.ok(cap.instances.every((r) => r.balancer_monthly_cost > 0));
  });

  it('the report folder holds summary.md with the table and the choice, and the cost chart', () => {
    const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    for (const name of Object.keys(PROFILES))
      assert.match(md, new RegExp(`^\\| ${name.replace('.', '\\.')} \\| 1 \\|`, 'm'));
    assert.match(md, new RegExp(`\\*\\*${cap.choice.instance.replace('.', '\\.')} x ${cap.choice.replicas}\\*\\*`));
    assert.match(md, /> \*\*Emulated\.\*\*/);
    assert.match(fs.readFileSync(path.join(res.reportDir, 'charts', 'cost.svg'), 'utf8'), /target 150\/s/);
  });
});
