'use strict';
// chainperf's lean runner (LEAN_RUNNER=chainperf): the arrivals it plans, the
// command a pass gets, and a whole pass against a local HTTP server that plays
// a node.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const yaml = require('js-yaml');
const { arrivals, deal, leanScenario } = require('../../src/workload/lean-runner');
const { passCommand, runnerOf } = require('../../src/workload/pass-command');
const { buildScript, startupSOf, STARTUP_S, LEAN_STARTUP_S, writePassFiles } = require('../../src/workload/artillery');
const { mergeSamples } = require('../../src/workload/samples');
const { startFakeNode, writeGeneratorSpec, tmpDir } = require('../helpers');

const LEAN = { GENERATOR: 'lean', WORKLOAD: 'method:eth_blockNumber', RAMP_S: 1, CONCURRENCY: 4, RATE: null };

describe('lean runner', () => {
  it('brings arrivalCount users in evenly over each phase, one phase after the other', () => {
    assert.deepEqual(arrivals([{ duration: 2, arrivalCount: 4 }]), [0, 500, 1000, 1500]);
    assert.deepEqual(
      arrivals([
        { duration: 1, arrivalCount: 1 },
        { duration: 2, arrivalCount: 2 },
      ]),
      [0, 1000, 2000],
    );
    assert.throws(() => arrivals([{ duration: 5, arrivalRate: 10 }]), /arrivalCount only/);
  });

  it('deals the users round-robin to at most one thread per user', () => {
    assert.deepEqual(deal([0, 1, 2, 3, 4], 2), [
      [0, 2, 4],
      [1, 3],
    ]);
    assert.deepEqual(deal([7], 8), [[7]]);
    assert.deepEqual(deal([], 4), [[]]);
  });

  it("runs the lean generator's scripts unless LEAN_RUNNER=artillery; the ethers generator's always in artillery", () => {
    const dir = tmpDir();
    const file = (s, name) => writePassFiles({ scenario: s, spec: { end_at: Date.now() }, dir, name }).scriptFile;
    const lean = passCommand(file(LEAN, 'lean'), '/out.json', '/spec.json');
    assert.equal(lean.runner, 'chainperf');
    // a first old-generation limit for a window's records (pass-command.js), then the runner
    assert.equal(lean.argv[1], '--initial-old-space-size=64');
    assert.match(lean.argv[2], /src\/workload\/lean-runner\.js$/);
    assert.deepEqual(lean.argv.slice(3), ['run', '--output', '/out.json', path.join(dir, 'lean.artillery.yml')]);
    assert.equal(lean.env.CHAINPERF_GENERATOR_SPEC, '/spec.json');
    const viaArtillery = passCommand(file({ ...LEAN, LEAN_RUNNER: 'artillery' }, 'art'), '/o', '/s');
    assert.equal(viaArtillery.runner, 'artillery');
    assert.match(viaArtillery.argv[1], /node_modules\/artillery\/bin\/run$/);
    const ethers = { ...LEAN, GENERATOR: 'ethers' };
    assert.equal(runnerOf(buildScript(ethers, { processor: '/p.js', totalS: 5 })), 'artillery');
    assert.equal(passCommand(file(ethers, 'ethers'), '/o', '/s').runner, 'artillery');
  });

  it("gives the lean runner's passes a shorter start-up allowance than artillery's", () => {
    assert.equal(startupSOf(LEAN), LEAN_STARTUP_S);
    assert.ok(LEAN_STARTUP_S < STARTUP_S);
    assert.equal(startupSOf({ ...LEAN, LEAN_RUNNER: 'artillery' }), STARTUP_S);
    assert.equal(startupSOf({ ...LEAN, GENERATOR: 'ethers' }), STARTUP_S);
  });

  it('refuses a script without a scenario for the chainperf engine', () => {
    assert.throws(() => leanScenario({ scenarios: [{ flow: [] }] }), /no scenario for the chainperf engine/);
  });

  it("a whole pass: every user's closed loop until stop_at, its samples written, artillery's counters in the output", async function () {
    this.timeout(20000);
    const node = await startFakeNode();
    node.answer = (b) => [200, { jsonrpc: '2.0', id: b.id, result: '0x10' }];
    try {
      const now = Date.now();
      const { dir, spec } = writeGeneratorSpec(
        node.url,
        { chain_id: 1337, head: 10, blocks: [1] },
        {
          mix: { eth_blockNumber: 1 },
          // the window opens at once and stays open 8 s: the runner's start on a loaded machine (a CI run's took over
          // 1.4 s) falls inside it, and answers still come after it (a CI run's got none within 4 s of the spawn:
          // the first request about 3 s in, its answer from this process, as loaded, after the window)
          start_at: now,
          end_at: now + 8000,
        },
      );
      const files = writePassFiles({ scenario: LEAN, spec, dir, name: 'pass' });
      assert.equal(yaml.load(fs.readFileSync(files.scriptFile, 'utf8')).config.engines.chainperf.runner, 'chainperf');
      const { argv, env } = passCommand(files.scriptFile, files.rawFile, files.specFile);
      const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const code = await new Promise((resolve) => child.on('exit', resolve));
      assert.equal(code, 0, out);
      assert.ok(Date.now() >= spec.end_at, 'the pass ran until the window closed');
      const counters = JSON.parse(fs.readFileSync(files.rawFile, 'utf8')).aggregate.counters;
      assert.equal(counters['vusers.created'], 4);
      assert.equal(counters['vusers.completed'], 4);
      const snapshots = fs
        .readdirSync(spec.samples_dir)
        .map((f) => JSON.parse(fs.readFileSync(path.join(spec.samples_dir, f), 'utf8')));
      assert.ok(snapshots.length >= 1);
      const samples = mergeSamples(snapshots);
      assert.ok(samples.ok > 0, JSON.stringify(samples).slice(0, 300));
      assert.equal(counters['chainperf.ok.eth_blockNumber'], samples.ok, 'the engine counted what it recorded');
      assert.match(out, /4 virtual user\(s\)/);
    } finally {
      node.close();
    }
  });

  it('a user that fails writes its samples with its error at once, before the runner ends its worker', async function () {
    this.timeout(20000);
    const now = Date.now();
    // a replay whose capture is missing: its user fails as it starts, 30 s before the window's end
    const missing = path.join(tmpDir(), 'capture.jsonl');
    const { dir, spec } = writeGeneratorSpec(
      'http://127.0.0.1:9',
      { chain_id: 1337, head: 10, blocks: [1] },
      { mix: { eth_blockNumber: 1 }, start_at: now, end_at: now + 30000, replay: { file: missing, speed: 1 } },
    );
    const files = writePassFiles({ scenario: { ...LEAN, CONCURRENCY: 1 }, spec, dir, name: 'pass' });
    const script = yaml.load(fs.readFileSync(files.scriptFile, 'utf8'));
    script.scenarios[0].replay = true;
    fs.writeFileSync(files.scriptFile, yaml.dump(script));
    const { argv, env } = passCommand(files.scriptFile, files.rawFile, files.specFile);
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, 'a failed user is counted, as artillery counts it');
    assert.ok(Date.now() < spec.end_at, 'the pass ended with its user, not at the window');
    assert.equal(JSON.parse(fs.readFileSync(files.rawFile, 'utf8')).aggregate.counters['vusers.failed'], 1);
    const [snapshot, ...more] = fs
      .readdirSync(spec.samples_dir)
      .map((f) => JSON.parse(fs.readFileSync(path.join(spec.samples_dir, f), 'utf8')));
    assert.equal(more.length, 0);
    assert.equal(snapshot.user_errors.length, 1);
    assert.match(snapshot.user_errors[0], /ENOENT.*capture\.jsonl/);
  });
});
