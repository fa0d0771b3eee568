'use strict';
// npm run bench, shortened, on real geth and wrk: it must run to the end and
// print its figures as key=value pairs on its last line, consistent with each
// other. The figures themselves are not bounded here (a timed test would flake
// on a shared machine); docs/generator.md says what full runs measured.

const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { ROOT, tmpDir } = require('../helpers');
const { processesWith } = require('./harness');

describe('npm run bench (shortened)', () => {
  let res;
  let pairs;
  let tmp;

  before(async () => {
    tmp = tmpDir('chainperf-bench-it-');
    const env = {
      ...process.env,
      TMPDIR: tmp,
      BENCH_REPS: '1',
      BENCH_WARM_S: '1',
      BENCH_MEASURE_S: '2',
      BENCH_CV_REPEAT: '2',
      BENCH_CV_WINDOW_S: '3',
      BENCH_CV_WARM_S: '2',
      BENCH_DEFAULT_REPEAT: '1',
      HISTORY_TRANSFERS: '40', // the runs' own history: enough for the mix's parameters
      HISTORY_CONTRACT_CALLS: '20',
      HISTORY_BLOCKS: '2',
    };
    res = await new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'bench.js')], { cwd: ROOT, env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    if (res.code !== 0) process.stderr.write(res.stderr);
    const last = res.stdout.trim().split('\n').pop();
    pairs = Object.fromEntries(last.split(' ').map((kv) => kv.split('=')));
  });

  it('exits 0 and its last line gives the figures the issue names, as key=value pairs', () => {
    assert.equal(res.code, 0);
    for (const k of [
      'engine_us_per_request',
      'wrk_us_per_request',
      'ratio',
      'engine_max_rps',
      'engine_ws_us_per_request',
      'cv_cpu_ms_per_request',
      'cv_repetitions',
      'cpu_floor_cv',
      'cv_generator_us_per_request',
      'default_generator_us_per_request',
      'default_node_us_per_request',
      'default_generator_over_node',
      'static_node_floor_us_per_request',
      'static_engine_over_node_floor',
      'static_engine_ws_us_per_request',
      'static_ws_reference_us_per_request',
      'static_engine_ws_over_reference',
      'static_engine_ws_over_node_floor',
      'native_ratio',
      'native_ws_over_reference',
      'static_native_rps',
      'static_native_ws_over_reference',
    ]) {
      assert.ok(k in pairs, `${k} missing from: ${res.stdout.trim().split('\n').pop()}`);
    }
  });

  it('the figures agree with each other: ratio, capacity, CVs', () => {
    const n = (k) => Number(pairs[k]);
    // Each figure is printed rounded, so the derived ones are checked against
    // the interval that the rounded inputs allow, not against one value.
    const range = (k) => {
      const decimals = (pairs[k].split('.')[1] || '').length;
      const half = 0.5 * 10 ** -decimals;
      return [n(k) - half, n(k) + half];
    };
    const inside = (k, lo, hi) => {
      const [klo, khi] = range(k);
      assert.ok(khi >= lo && klo <= hi, `${k}=${pairs[k]} is outside [${lo}, ${hi}] (${JSON.stringify(pairs)})`);
    };
    assert.ok(n('wrk_us_per_request') > 0 && n('engine_us_per_request') > 0);
    const [eLo, eHi] = range('engine_us_per_request');
    const [wLo, wHi] = range('wrk_us_per_request');
    inside('ratio', eLo / wHi, eHi / wLo);
    inside('engine_max_rps', 1e6 / eHi, 1e6 / eLo);
    // the lean engine with the native sender: against wrk over HTTP, against ws-reference over ws
    const [nLo0, nHi0] = range('native_us_per_request');
    inside('native_ratio', nLo0 / wHi, nHi0 / wLo);
    const [nwLo, nwHi] = range('native_ws_us_per_request');
    const [refLo, refHi] = range('ws_reference_us_per_request');
    inside('native_ws_over_reference', nwLo / refHi, nwHi / refLo);
    assert.ok(n('native_rps') > 0 && n('native_ws_rps') > 0 && n('static_native_rps') > 0, 'the native sender sent');
    assert.equal(n('cv_repetitions'), 2);
    assert.ok(n('cv_cpu_ms_per_request') >= 0 && n('cv_cpu_ms_per_request') < 1);
    assert.ok(n('cpu_floor_cv') >= 0 && n('cpu_floor_cv') < 1);
    assert.ok(n('cv_generator_us_per_request') >= 0 && n('cv_generator_us_per_request') < 1);
    assert.match(res.stdout, /repeatability: CPU ms per request over 2 windows/);
    assert.match(
      res.stdout,
      /the generator's own CPU per request for the same requests, window by window \([\d.]+, [\d.]+ us\): CV [\d.]+%/,
    );
    assert.match(res.stdout, /machine floor: the same work took [\d.]+, [\d.]+ s of CPU in its 2 windows/);
    const [gLo, gHi] = range('default_generator_us_per_request');
    const [nLo, nHi] = range('default_node_us_per_request');
    inside('default_generator_over_node', gLo / nHi, gHi / nLo); // one window: the median of one
    // against the static responder: the lean engine over wrk's loop in Node.js (one repetition)
    const [sLo, sHi] = range('static_engine_us_per_request');
    const [fLo, fHi] = range('static_node_floor_us_per_request');
    assert.ok(fLo > 0, 'http-node-floor measured a CPU per request');
    inside('static_engine_over_node_floor', sLo / fHi, sHi / fLo);
    // against the static WebSocket responder: the lean engine over ws-reference and over ws-node-floor
    const [wsLo, wsHi] = range('static_engine_ws_us_per_request');
    const [rLo, rHi] = range('static_ws_reference_us_per_request');
    const [nfLo, nfHi] = range('static_ws_node_floor_us_per_request');
    assert.ok(rLo > 0 && nfLo > 0 && n('static_engine_ws_rps') > 0, 'every WebSocket generator measured');
    inside('static_engine_ws_over_reference', wsLo / rHi, wsHi / rLo);
    inside('static_engine_ws_over_node_floor', wsLo / nfHi, wsHi / nfLo);
    assert.match(
      res.stdout,
      /the default run \(ethers over http\): generator \/ node CPU per request, window by window: /,
    );
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
  });
});

describe('npm run bench:startup (one pass of each runner)', () => {
  it("prints each runner's start-up, wall and CPU, and their ratios", () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bench-startup.js'), '1'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120000,
    });
    assert.equal(r.status, 0, r.stderr);
    const line = (runner) => new RegExp(`LEAN_RUNNER=${runner} +([\\d.]+) s wall, ([\\d.]+) CPU-s`).exec(r.stdout);
    for (const runner of ['chainperf', 'artillery']) {
      const m = line(runner);
      assert.ok(m && Number(m[1]) > 0 && Number(m[2]) > 0, `${runner}: ${r.stdout}`);
    }
    assert.match(r.stdout, /artillery \/ chainperf: [\d.]+x the wall, [\d.]+x the CPU/);
  });
});

describe("npm run bench's static WebSocket responder (ws-static-responder.c)", () => {
  it('completes the opening handshake, answers every request with its own id and counts the answers', async () => {
    const WebSocket = require('ws');
    const { startWsResponder } = require('../../scripts/lib/bench-static-ws');
    const { target, stop } = await startWsResponder({ cpus: '0', generatorCpus: '0' });
    try {
      const before = await target.requests();
      const ws = new WebSocket(target.wsUrl); // ws checks Sec-WebSocket-Accept: a wrong key fails the handshake
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const ids = [7, '"a\\"b"', 'null'];
      const answers = new Promise((resolve) => {
        const got = [];
        ws.on('message', (m) => got.push(JSON.parse(String(m))) === ids.length && resolve(got));
      });
      for (const id of ids) ws.send(`{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`);
      const got = await answers;
      ws.close();
      assert.deepEqual(
        got.map((a) => a.id),
        [7, 'a"b', null],
      );
      assert.deepEqual(got[0], { jsonrpc: '2.0', id: 7, result: { number: '0x1' } });
      assert.equal((await target.requests()) - before, 3);
    } finally {
      await stop();
    }
  });

  it('holds back from reading while a client does not read its answers, then answers every request in order', async () => {
    const WebSocket = require('ws');
    const { startWsResponder } = require('../../scripts/lib/bench-static-ws');
    const { target, stop } = await startWsResponder({ cpus: '0', generatorCpus: '0' });
    try {
      const ws = new WebSocket(target.wsUrl);
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const n = 200000; // 10 MB of answers: more than the socket buffers and the responder's own output hold
      const ids = [];
      const all = new Promise((resolve, reject) => {
        ws.on('message', (m) => ids.push(JSON.parse(String(m)).id) === n && resolve());
        ws.once('close', () => reject(new Error(`closed after ${ids.length} answers`)));
      });
      ws._socket.pause(); // the client stops reading
      for (let i = 0; i < n; i++) ws.send(`{"jsonrpc":"2.0","id":${i},"method":"eth_blockNumber","params":[]}`);
      await new Promise((r) => setTimeout(r, 1000));
      ws._socket.resume();
      await all;
      ws.close();
      assert.ok(
        ids.every((id, i) => id === i),
        'every answer, in the order asked',
      );
    } finally {
      await stop();
    }
  });
});
