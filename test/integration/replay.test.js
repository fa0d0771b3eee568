'use strict';
// Record and replay on a real geth: chainperf (attach) drives geth through
// ./run.sh record; the capture is then replayed against geth with
// WORKLOAD=replay, through each generator, at the speed that puts exactly one
// pass of the capture in the measured window. The replayed calls per method
// must match the captured ones within a few percent.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { startRun, readRun } = require('./harness');
const { startGeth } = require('./node');
const { createHistory } = require('../../src/chains/ethereum/history');
const { rpcCall } = require('../../src/util/rpc');
const { loadReplay } = require('../../src/workload/replay');
const { deriveMix, readCapture } = require('../../src/record/mix');
const { schemaErrors, tmpDir, writeScenario, ROOT } = require('../helpers');

const UNKNOWN_TX = `0x${'ab'.repeat(32)}`;

/** ./run.sh record as a child process; resolves with its URL once it listens. */
async function startRecorder(to, out) {
  const child = spawn(path.join(ROOT, 'run.sh'), ['record', '--listen', '127.0.0.1:0', '--to', to, '--out', out], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  const deadline = Date.now() + 60000;
  while (!/record: http:\/\/127\.0\.0\.1:(\d+)/.test(stderr)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the recorder did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = `http://127.0.0.1:${/record: http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)[1]}`;
  const stop = () =>
    new Promise((resolve) => {
      child.once('exit', (code) => resolve({ code, stderr, stdout }));
      child.kill('SIGINT');
    });
  return { url, stop };
}

/** Calls per method in run.json's window, successes and failures together. */
const replayed = (run) =>
  Object.fromEntries(Object.entries(run.figures.methods).map(([m, f]) => [m, f.requests_ok + f.requests_failed]));

/** Shares of the calls by method. */
function shares(counts) {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(counts).map(([m, n]) => [m, n / total]));
}

describe('record and replay on geth', () => {
  let node;
  let dir;
  let capture;
  let cut;
  let stopped;
  let recorded;

  before(async () => {
    node = await startGeth();
    dir = tmpDir();
    await createHistory(node.rpcUrl, { accounts: 10, transfers: 40, calls: 24, seed: 1 });
    capture = path.join(dir, 'capture.jsonl');
    const rec = await startRecorder(node.rpcUrl, capture);
    const file = writeScenario(
      dir,
      'through-proxy',
      [
        'RUNTIME=attach',
        `RPC_URL=${rec.url}`,
        `NODE_PID=${node.pid}`,
        'CREATE_HISTORY=no',
        'CONCURRENCY=4',
        'WARMUP_S=1',
        'IDLE_S=0',
        'DURATION_S=10',
      ].join('\n'),
    );
    // Beside chainperf's mix, a wallet asking for a transaction this chain never had: the replay must find it missing.
    const unknown = setInterval(() => rpcCall(rec.url, 'eth_getTransactionByHash', [UNKNOWN_TX]).catch(() => {}), 250);
    const res = await startRun(file).done.finally(() => clearInterval(unknown));
    assert.equal(res.code, 0, res.stderr);
    recorded = readRun(res.reportDir);
    await new Promise((r) => setTimeout(r, 300));
    stopped = await rec.stop();
    // The replay takes the calls of the recorded run's measured window: chainperf's mix, without its sync checks and
    // harvest.
    const { start_ms: a, end_ms: b } = recorded.window;
    const lines = fs
      .readFileSync(capture, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => {
        const t = JSON.parse(l).t;
        return t >= a && t < b;
      });
    cut = path.join(dir, 'window.jsonl');
    fs.writeFileSync(cut, `${lines.join('\n')}\n`);
  });
  after(() => node && node.stop());

  it('the recorder captured every call chainperf made and printed its counts per method', () => {
    assert.equal(stopped.code, 0, stopped.stderr);
    const all = deriveMix(readCapture(capture)).traffic.methods;
    const total = Object.values(all).reduce((a, b) => a + b, 0);
    assert.match(stopped.stderr, new RegExp(`captured ${total} requests`));
    assert.match(stopped.stderr, /eth_call: \d+/);
    assert.equal(stopped.stdout.trim(), capture);
    // calls that arrived in the window against those chainperf saw complete in it: they differ by the calls in flight
    // at its edges
    const inWindow = deriveMix(readCapture(cut)).traffic.methods;
    const mine = Object.entries(inWindow)
      .filter(([m]) => m !== 'eth_getTransactionByHash')
      .reduce((n, [, c]) => n + c, 0);
    const theirs = Object.entries(recorded.figures.methods)
      .filter(([m]) => m !== 'eth_getTransactionByHash')
      .reduce((n, [, f]) => n + f.requests_ok + f.requests_failed, 0);
    assert.ok(theirs > 200, `${theirs} calls in the recorded window`);
    assert.ok(Math.abs(mine - theirs) <= 8, `captured ${mine}, chainperf counted ${theirs}`);
  });

  for (const generator of ['ethers', 'lean']) {
    it(`GENERATOR=${generator}: the replayed mix matches the captured one within a few percent per method`, async () => {
      const durationS = 8;
      const speed = loadReplay(cut).period_ms / (durationS * 1000); // one pass of the capture in the window
      const file = writeScenario(
        tmpDir(),
        `replay-${generator}`,
        [
          'RUNTIME=attach',
          `RPC_URL=${node.rpcUrl}`,
          `NODE_PID=${node.pid}`,
          'CREATE_HISTORY=no',
          `GENERATOR=${generator}`,
          `WORKLOAD=replay:${cut}`,
          `REPLAY_SPEED=${speed.toFixed(6)}`,
          'WARMUP_S=1',
          'IDLE_S=0',
          `DURATION_S=${durationS}`,
        ].join('\n'),
      );
      const res = await startRun(file).done;
      assert.equal(res.code, 0, res.stderr);
      const run = readRun(res.reportDir);
      assert.deepEqual(schemaErrors(run), []);
      const captured = deriveMix(readCapture(cut)).traffic.methods;
      const got = replayed(run);
      const total = Object.values(got).reduce((a, b) => a + b, 0);
      assert.ok(total > 200, `${total} calls replayed in the window`);
      const [want, have] = [shares(captured), shares(got)];
      for (const m of new Set([...Object.keys(want), ...Object.keys(have)])) {
        assert.ok(
          Math.abs((have[m] || 0) - (want[m] || 0)) < 0.03,
          `${m}: ${((have[m] || 0) * 100).toFixed(1)}% replayed, ${((want[m] || 0) * 100).toFixed(1)}% captured`,
        );
      }
      assert.equal(run.figures.requests_failed, 0, JSON.stringify(run.errors));
      assert.equal(
        run.generator.replay.capture_requests,
        Object.values(captured).reduce((a, b) => a + b, 0),
      );
      assert.equal(run.generator.replay.sent_in_window, total);
      assert.equal(
        run.generator.replay.capture_sha256,
        require('node:crypto').createHash('sha256').update(fs.readFileSync(cut)).digest('hex'),
      );
      // the unknown transaction: answered null, reported missing on the target, not an error
      assert.ok(run.generator.replay.missing_on_target_by_method.eth_getTransactionByHash >= 1);
      assert.ok(run.warnings.some((w) => /missing_on_target/.test(w)));
    });
  }
});
