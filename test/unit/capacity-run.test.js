'use strict';
// ./run.sh capacity around its runs: bad input refused before anything starts, naming the key; the searches in rounds,
// resumed without repeating finished ones; the verification and its exit status; capacity.json against its schema;
// the summary's marks. The runs are stood in for by a runner that writes run.json as a search or a run would.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { runCapacity } = require('../../src/capacity/run');
const { capacityInputs } = require('../../src/capacity/inputs');
const { writeReport } = require('../../src/report/write');
const { ROOT, tmpDir, writeScenario, schemaErrors } = require('../helpers');

const V1 = { version: 1, memory: true, memsw: true, blkio: true, writable: true };
const resolveOpts = { kernel: V1, dockerEngine: null };
const SCENARIO = [
  `CHAIN=ethereum`,
  'CLIENT=geth',
  'RUNTIME=host',
  'WORKLOAD=eth-default',
  'GENERATOR=lean',
  'TARGET_RPS=3000',
  'MAX_P99_MS=200',
  'INSTANCES=m6g.medium,do-s-1vcpu-2gb,m5.xlarge',
  'CAPACITY_REPEATS=2',
  'DURATION_S=10',
].join('\n');

/** The problems capacityInputs finds with these keys over SCENARIO, on a 2-core machine. */
function problems(env, text = SCENARIO) {
  const file = writeScenario(tmpDir(), 'cap', text);
  return capacityInputs(file, { env, cpuCount: 2, resolveOpts }).errors.join('\n');
}

/** Saturated rates by instance (per core for one searched on fewer cores), and the verification's p99. */
function fakeRunner({ rates = { 'm6g.medium': 3000, 'do-s-1vcpu-2gb': 2500, 'm5.xlarge': 1000 }, p99 = 20 } = {}) {
  const calls = [];
  let interruptAt = -1;
  const runner = async (file, { env }) => {
    calls.push({ name: env.NAME, instance: env.INSTANCE, cores: env.CORES, saturate: env.SATURATE, env });
    if (calls.length === interruptAt) return { exitCode: 1, run: { status: 'failed', error: 'interrupted by SIGINT' } };
    const id = `r${calls.length}`;
    const dir = path.join(env.REPORTS_DIR, env.NAME, id);
    const sat = env.SATURATE === 'yes';
    const rate = sat ? rates[env.INSTANCE] + calls.length : Number(env.RATE);
    const run = {
      schema_version: 1,
      run_id: id,
      scenario_name: env.NAME,
      status: 'ok',
      phase: 'measure',
      started_at: '2026-12-01T00:00:00.000Z',
      ended_at: '2026-12-01T00:01:00.000Z',
      warnings: [],
      window: { start_ms: 0, end_ms: 1000 },
      figures: {
        requests_ok: rate,
        requests_failed: 0,
        cpu_ms_per_request: 0.3,
        cpu_ms_per_request_net: 0.28,
        rps: rate,
        error_rate: 0,
        latency_ms: { p50: 1, p95: 2, p99: sat ? 20 : p99, max: 30 },
        methods: {},
      },
      node: sat ? {} : { fleet: { balancer: { cpu_ms_per_request: 0.05 } } },
      provenance: { toolkit: {}, client: { name: 'geth' }, runtime: 'host', machine: {}, scenario: {} },
    };
    if (sat)
      run.saturation = {
        max_sustainable_rps: rate,
        max_sustainable_target_rps: rate,
        reached_limit: true,
        bounds: { max_p99_ms: 200, max_error_rate: 0.01, min_achieved_ratio: 0.95 },
        steps: [],
      };
    writeReport(dir, run, {});
    return { exitCode: 0, reportDir: dir, run };
  };
  return { runner, calls, interrupt: (n) => (interruptAt = n) };
}

async function capacity(env, fake, text = SCENARIO) {
  const dir = tmpDir();
  const file = writeScenario(dir, 'cap', text);
  const reports = path.join(dir, 'reports');
  const run = (extra = {}) =>
    runCapacity(file, {
      env: { REPORTS_DIR: reports, ...env, ...extra },
      out: () => {},
      runner: fake.runner,
      cpuCount: 2,
      resolveOpts,
    });
  return { run, reports };
}

describe('capacity: bad input exits 2 before anything starts, naming the key', () => {
  it('no instance, an unknown one, a folder without profiles, a profile without a price', () => {
    assert.match(problems({ INSTANCES: '' }), /INSTANCES: no instance given/);
    assert.match(
      problems({ INSTANCES: 'm6g.mediun' }),
      /INSTANCES: no instance profile "m6g.mediun".*did you mean m6g\.medium/,
    );
    const empty = tmpDir();
    assert.match(problems({ INSTANCES: empty }), /INSTANCES: the folder .* holds no instance profile/);
    const folder = tmpDir();
    fs.writeFileSync(path.join(folder, 'free.env'), 'CORES=1\nMEMORY_MB=1024\n');
    assert.match(problems({ INSTANCES: folder }), /INSTANCES: the profile free .* sets no HOURLY_PRICE/);
    assert.match(problems({ INSTANCE: 'm5.xlarge' }), /INSTANCE=m5\.xlarge: a capacity run sets each instance/);
  });

  it('a target that is not a positive number, a headroom outside 0-90%, an unknown extrapolation', () => {
    assert.match(problems({ TARGET_RPS: '' }), /TARGET_RPS: not set/);
    assert.match(problems({ TARGET_RPS: '0' }), /TARGET_RPS: expected a positive number/);
    assert.match(problems({ TARGET_RPS: 'lots' }), /TARGET_RPS: expected a number/);
    assert.match(problems({ CAPACITY_HEADROOM: '95' }), /CAPACITY_HEADROOM: expected a number from 0 to 90/);
    assert.match(problems({ CAPACITY_HEADROOM: '-5' }), /CAPACITY_HEADROOM: expected a number from 0 to 90/);
    assert.match(problems({ CAPACITY_EXTRAPOLATE: 'cubic' }), /CAPACITY_EXTRAPOLATE: expected one of none \| linear/);
  });

  it('bounds that contradict each other or the target; a scenario whose fleet cannot run', () => {
    assert.match(problems({ MAX_P99_MS: '0' }), /MAX_P99_MS=0: a bound at or below 0 can never hold/);
    assert.match(problems({ MAX_CPU_MS_PER_REQUEST: '0' }), /MAX_CPU_MS_PER_REQUEST=0: a bound at or below 0/);
    assert.equal(problems({ MAX_ERROR_RATE: '0' }), '', 'no error at all is a bound that can hold');
    assert.match(problems({ MIN_RPS: '5000' }), /MIN_RPS=5000 is above TARGET_RPS=3000/);
    assert.match(problems({ TRANSPORT: 'ws' }), /the verification fleet \(REPLICAS behind HAProxy\): .*TRANSPORT=http/);
    assert.equal(problems({}), '');
  });

  it('nothing runs and no folder is made', async () => {
    const fake = fakeRunner();
    const c = await capacity({ TARGET_RPS: '-3' }, fake);
    assert.equal((await c.run()).exitCode, 2);
    assert.equal(fake.calls.length, 0);
    assert.ok(!fs.existsSync(path.join(c.reports, 'capacity')));
  });
});

describe('capacity: a run, resumed, verified', () => {
  it('interrupted, then resumed without repeating finished searches; the choice verified; a valid capacity.json', async () => {
    const fake = fakeRunner();
    const c = await capacity({}, fake);
    fake.interrupt(3);
    const first = await c.run();
    assert.equal(first.exitCode, 1);
    assert.equal(first.state.status, 'interrupted');
    const searched = fake.calls.slice(0, 2).map((x) => x.name);
    const second = await c.run();
    assert.equal(second.dir, first.dir, 'the same folder is resumed');
    assert.equal(second.exitCode, 0);
    assert.equal(second.state.status, 'complete');
    // two searches were done before the interruption: 4 in all, so 2 more, then the verification
    assert.equal(fake.calls.length, 3 + 2 + 1);
    for (const name of searched)
      assert.equal(second.state.searches.find((p) => p.name === name).runs.filter((r) => r.status === 'ok').length, 2);
    assert.deepEqual(
      fake.calls.slice(0, 5).map((x) => [x.saturate, x.cores]),
      Array(5).fill(['yes', '1']),
      'm5.xlarge (4 vCPUs) is never searched on a 2-core machine',
    );
    const json = JSON.parse(fs.readFileSync(path.join(first.dir, 'capacity.json'), 'utf8'));
    assert.deepEqual(schemaErrors(json, 'capacity'), []);
    assert.deepEqual(
      json.instances.map((r) => [r.instance, r.status]),
      [
        ['m6g.medium', 'measured'],
        ['do-s-1vcpu-2gb', 'measured'],
        ['m5.xlarge', 'needs-machine'],
      ],
    );
    for (const r of json.instances.filter((x) => x.replicas))
      assert.ok(Math.abs(r.replicas_monthly_cost - r.replicas * r.hourly_price * 730) < 1e-9);
    assert.equal(json.choice.instance, 'do-s-1vcpu-2gb');
    assert.equal(json.choice.runner_up.instance, 'm6g.medium');
    const v = fake.calls[fake.calls.length - 1];
    assert.deepEqual([v.env.REPLICAS, v.env.BALANCER, v.env.NETWORK_NODES, v.env.CORES], ['1', 'haproxy', '1', '1']);
    assert.equal(json.verification.mode, 'share');
    assert.equal(Number(v.env.RATE), Math.ceil(3000 / json.choice.replicas));
    assert.equal(json.verification.pass, true);
    assert.equal(json.balancer.source, 'verification');
    const md = fs.readFileSync(path.join(first.dir, 'summary.md'), 'utf8');
    assert.match(md, /\*\*do-s-1vcpu-2gb x 3\*\*/);
    assert.match(md, /\| m5\.xlarge \| 4 \|.*needs a machine with 5 cores \|/);
    assert.match(md, /> \*\*Emulated\.\*\*/);
    assert.match(md, /the largest share of the fleet the machine chainperf ran on can run: 1 of 3 replica/);
    assert.match(fs.readFileSync(path.join(first.dir, 'charts', 'cost.svg'), 'utf8'), /target 3000\/s/);
    const third = await c.run();
    assert.notEqual(third.dir, first.dir, 'a complete capacity run is not resumed: a new one starts');
  });

  it('a verification that breaks a bound: exit 1, the bound named', async () => {
    const fake = fakeRunner({ p99: 350 });
    const c = await capacity({ INSTANCES: 'do-s-1vcpu-2gb', CAPACITY_REPEATS: '1' }, fake);
    const res = await c.run();
    assert.equal(res.exitCode, 1);
    assert.equal(res.state.status, 'complete');
    assert.equal(res.state.verification.pass, false);
    assert.match(res.state.verification.failed[0], /^MAX_P99_MS=200: p99 350\.0 ms > 200 ms/);
    const md = fs.readFileSync(path.join(res.dir, 'summary.md'), 'utf8');
    assert.match(md, /\*\*FAILS\*\*: MAX_P99_MS=200/);
    assert.match(md, /Runner-up: none/);
  });

  it('CAPACITY_EXTRAPOLATE=linear: the larger instance searched on 1 core, marked, its measured points shown', async () => {
    const fake = fakeRunner();
    const c = await capacity({ INSTANCES: 'm5.xlarge,do-s-1vcpu-2gb', CAPACITY_EXTRAPOLATE: 'linear' }, fake);
    const res = await c.run();
    const m5 = res.state.instances.find((r) => r.instance === 'm5.xlarge');
    assert.equal(m5.status, 'extrapolated');
    assert.equal(m5.extrapolated.factor, 4);
    assert.deepEqual(
      m5.saturated_rps.values,
      m5.extrapolated.measured_rps.values.map((x) => x * 4),
    );
    assert.ok(fake.calls.filter((x) => x.instance === 'm5.xlarge').every((x) => x.cores === '1'));
    const md = fs.readFileSync(path.join(res.dir, 'summary.md'), 'utf8');
    assert.match(md, /\| m5\.xlarge \| 4 \|[^\n]*\(extrapolated\)[^\n]*\| extrapolated \|/);
    assert.match(
      md,
      /- m5\.xlarge: its 4 vCPUs extrapolated linearly from 1 measured \(x4\.00\): the searches on 1 core/,
    );
    assert.match(fs.readFileSync(path.join(res.dir, 'charts', 'cost.svg'), 'utf8'), /m5\.xlarge \(extrap\.\)/);
    assert.deepEqual(schemaErrors(JSON.parse(fs.readFileSync(path.join(res.dir, 'capacity.json'))), 'capacity'), []);
  });

  it('one search per instance: the call is "no interval (1 search)"; ARCHIVE=git commits the folder', async () => {
    const fake = fakeRunner();
    const c = await capacity({ INSTANCES: 'm6g.medium,do-s-1vcpu-2gb', CAPACITY_REPEATS: '1', ARCHIVE: 'git' }, fake);
    const res = await c.run();
    assert.equal(res.state.choice.call, 'no interval (1 search)');
    assert.equal(res.state.choice.tie, null);
    assert.match(fs.readFileSync(path.join(res.dir, 'summary.md'), 'utf8'), /\*\*no interval \(1 search\)\*\*/);
    const log = execFileSync('git', ['log', '-1', '--format=%s'], { cwd: c.reports, encoding: 'utf8' });
    assert.match(log, /^chainperf: capacity cap for 3000\/s: do-s-1vcpu-2gb x 3, holds/);
    assert.ok(
      fake.calls.every((x) => x.env.ARCHIVE === 'none'),
      'the runs inside are not committed one by one',
    );
  });

  it('the schema rejects a capacity.json without its required fields or with a status it does not know', () => {
    const errs = schemaErrors({ schema_version: 1, kind: 'capacity', status: 'done' }, 'capacity');
    assert.ok(errs.some((e) => /must have required property 'instances'/.test(e)));
    assert.ok(errs.some((e) => /\/status must be equal to one of the allowed values/.test(e)));
  });
});

it('the shipped capacity scenario is valid', () => {
  const file = path.join(ROOT, 'scenarios', 'capacity.env');
  assert.deepEqual(capacityInputs(file, { env: {}, cpuCount: 2, resolveOpts }).errors, []);
});
