'use strict';
// WORKLOAD=replay:FILE: the schedule, what counts as missing on the target,
// and the lean engine replaying a capture against a fake node.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { loadReplay, runReplay, isMissing, mergeReplay } = require('../../src/workload/replay');
const { buildScript, loadMix } = require('../../src/workload/artillery');
const { mergeSamples } = require('../../src/workload/samples');
const { resolveScenario } = require('../../src/scenario/resolve');
const { startFakeNode, startFakeWsNode, writeGeneratorSpec, tmpDir, writeScenario } = require('../helpers');

/** A capture of n calls every gapMs: eth_blockNumber, eth_getBalance, eth_getTransactionByHash in turn. */
function writeCapture(n, gapMs) {
  const file = path.join(tmpDir(), 'cap.jsonl');
  const methods = ['eth_blockNumber', 'eth_getBalance', 'eth_getTransactionByHash'];
  const params = [[], ['0x11', 'latest'], ['0xdead']];
  const lines = [];
  for (let i = 0; i < n; i++)
    lines.push(
      JSON.stringify({
        t: 1_700_000_000_000 + i * gapMs,
        transport: 'http',
        method: methods[i % 3],
        params: params[i % 3],
        batch: null,
      }),
    );
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('replay', function () {
  this.timeout(20000);

  it('the schedule: offsets from the first call, a period of the span plus one mean gap', () => {
    const s = loadReplay(writeCapture(5, 100));
    assert.deepEqual(
      s.entries.map((e) => e.at),
      [0, 100, 200, 300, 400],
    );
    assert.equal(s.period_ms, 500);
  });

  it("open loop: the capture's first call when the window opens, its spacing kept (scaled by the speed), repeated until the end", async () => {
    const schedule = loadReplay(writeCapture(10, 20)); // 10 calls in 200 ms
    const startAt = Date.now() + 300;
    const endAt = startAt + 1000;
    const sent = [];
    await runReplay({
      schedule,
      speed: 2,
      concurrency: 1,
      startAt,
      endAt,
      send: async (e) => {
        sent.push({ at: Date.now(), e });
      },
      skipped: () => assert.fail('skipped'),
    });
    const inWindow = sent.filter((x) => x.at >= startAt && x.at < endAt);
    // at speed 2: 10 calls per 100 ms, so 100 in the window; those before it are the capture's tail and head repeating
    assert.ok(Math.abs(inWindow.length - 100) <= 6, `${inWindow.length}`); // a busy machine delays a tick now and then
    const first = inWindow.find((x) => x.e.at === 0);
    assert.ok(first.at - startAt < 50, `the capture's first call ${first.at - startAt} ms after the window opened`);
    assert.ok(sent.length > 100, 'load flows before the window opens');
  });

  it('REPLAY_SPEED=0: CONCURRENCY users send the capture in order, back to back', async () => {
    const schedule = loadReplay(writeCapture(3, 60_000)); // paced, a 1 s window would hold one call
    const order = [];
    let inFlight = 0;
    let most = 0;
    const send = async (e) => {
      inFlight++;
      most = Math.max(most, inFlight);
      order.push(e.method);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
    };
    await runReplay({
      schedule,
      speed: 0,
      concurrency: 4,
      startAt: Date.now(),
      endAt: Date.now() + 1000,
      send,
      skipped: () => {},
    });
    assert.equal(most, 4);
    assert.deepEqual(order.slice(0, 6), [
      'eth_blockNumber',
      'eth_getBalance',
      'eth_getTransactionByHash',
      'eth_blockNumber',
      'eth_getBalance',
      'eth_getTransactionByHash',
    ]);
    // Back to back: each user's next call follows its last answer (2 ms), not the capture's minute-long gaps.
    // Even with timers 20 ms late on a loaded machine, 4 users make 200 calls in the second.
    assert.ok(order.length > 100, `${order.length} calls in the window`);
  });

  it('missing on the target: null results and not-found errors; a method the node lacks is an error', () => {
    assert.equal(isMissing(true, null), true);
    assert.equal(isMissing(false, { kind: 'rpc', message: 'JSON-RPC -32000: header not found' }), true);
    assert.equal(isMissing(false, { kind: 'rpc', message: 'JSON-RPC -32000: missing trie node abc' }), true);
    assert.equal(
      isMissing(false, { kind: 'rpc', message: 'JSON-RPC -32601: the method eth_foo does not exist/is not available' }),
      false,
    );
    assert.equal(isMissing(false, { kind: 'timeout', message: 'timeout' }), false);
    assert.equal(isMissing(false, null), false);
  });

  it('lean engine: replays the capture with its own parameters; null results are missing, not failures', async () => {
    const node = await startFakeNode();
    node.answer = (b) => [
      200,
      { jsonrpc: '2.0', id: b.id, result: b.method === 'eth_getTransactionByHash' ? null : '0x1' },
    ];
    const file = writeCapture(30, 10);
    const now = Date.now();
    const { dir } = writeGeneratorSpec(
      node.url,
      { chain_id: 1337, head: 1, blocks: [1], addresses: [] },
      {
        mix: loadMix(`replay:${file}`),
        start_at: now + 200,
        end_at: now + 1400,
        replay: { file, speed: 1, concurrency: 1 },
      },
    );
    const Engine = require('../../src/workload/engines/artillery-engine-chainperf');
    Engine.reset();
    const ee = { emit() {} };
    try {
      await new Promise((resolve, reject) =>
        new Engine({ config: {} }).createScenario({ replay: true }, ee)({}, (err) => (err ? reject(err) : resolve())),
      );
    } finally {
      Engine.reset();
      node.close();
    }
    assert.deepEqual(node.bodies.find((b) => b.method === 'eth_getBalance').params, ['0x11', 'latest']);
    const snaps = fs
      .readdirSync(path.join(dir, 'samples'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, 'samples', f), 'utf8')));
    const m = mergeSamples(snaps);
    const r = mergeReplay(snaps);
    assert.equal(m.failed, 0);
    // 1.2 s of a capture of 30 calls every 310 ms: 116, and a few sent late before the window that complete in it on a
    // busy machine
    assert.ok(m.ok >= 100 && m.ok <= 145, `${m.ok} in 1.2 s of a capture of 30 calls in 300 ms`);
    assert.equal(r.sent_in_window, m.ok);
    assert.equal(r.missing_on_target, m.methods.eth_getTransactionByHash.requests_ok);
    assert.deepEqual(Object.keys(r.missing_on_target_by_method), ['eth_getTransactionByHash']);
    // sent in the window, by method: the capture's three methods in turn, a third each (a call sent before the window's
    // opening is not counted, even when it completes in it)
    const sent = Object.values(r.sent_by_method);
    const sentTotal = sent.reduce((a, b) => a + b, 0);
    assert.deepEqual(Object.keys(r.sent_by_method).sort(), [
      'eth_blockNumber',
      'eth_getBalance',
      'eth_getTransactionByHash',
    ]);
    // each call sent in the window completed in it, or was still unanswered at its end (a busy machine)
    assert.ok(
      sentTotal >= 100 && sentTotal <= m.ok + m.in_flight_at_end,
      `${sentTotal} sent in the window, ${m.ok} completed, ${m.in_flight_at_end} unanswered at its end`,
    );
    assert.ok(Math.max(...sent) - Math.min(...sent) <= 1, JSON.stringify(r.sent_by_method));
  });

  it('lean engine over WebSocket: null results told apart from results and errors', async () => {
    const node = await startFakeWsNode();
    node.answer = (b) => {
      if (b.method === 'eth_getTransactionByHash') return `{"jsonrpc":"2.0","id":${b.id},"result":null}`;
      if (b.method === 'eth_getBalance')
        return { jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'header not found' } };
      return `{"jsonrpc":"2.0","id":${b.id},"result":"0x1"}`;
    };
    const file = writeCapture(30, 10);
    const now = Date.now();
    const { dir } = writeGeneratorSpec(
      node.url,
      { chain_id: 1337, head: 1, blocks: [1], addresses: [] },
      {
        mix: loadMix(`replay:${file}`),
        start_at: now + 200,
        end_at: now + 1000,
        ws_connections: 2,
        replay: { file, speed: 0, concurrency: 2 },
      },
    );
    const Engine = require('../../src/workload/engines/artillery-engine-chainperf');
    Engine.reset();
    try {
      await new Promise((resolve, reject) =>
        new Engine({ config: {} }).createScenario({ replay: true }, { emit() {} })({}, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    } finally {
      Engine.reset();
      await node.close();
    }
    const snaps = fs
      .readdirSync(path.join(dir, 'samples'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, 'samples', f), 'utf8')));
    const m = mergeSamples(snaps);
    const r = mergeReplay(snaps);
    assert.equal(m.failed, 0, JSON.stringify(m.errors));
    assert.ok(m.ok > 30, `${m.ok}`);
    const each = m.methods.eth_getTransactionByHash.requests_ok + m.methods.eth_getBalance.requests_ok;
    assert.equal(r.missing_on_target, each, 'the null results and the not-found errors, no other call');
    assert.ok(
      Math.abs(m.methods.eth_blockNumber.requests_ok - m.ok / 3) <= 2,
      "REPLAY_SPEED=0 keeps the capture's order",
    );
  });

  it("script: one virtual user for either generator; the mix is the capture's counts", () => {
    const file = writeCapture(6, 10);
    const lean = buildScript(
      { WORKLOAD: `replay:${file}`, GENERATOR: 'lean' },
      { target: 'http://x', processor: '/p.js', totalS: 9 },
    );
    assert.equal(lean.scenarios[0].replay, true);
    assert.equal(lean.config.phases[0].arrivalCount, 1);
    const ethers = buildScript(
      { WORKLOAD: `replay:${file}`, GENERATOR: 'ethers' },
      { target: 'http://x', processor: '/p.js', totalS: 9 },
    );
    assert.deepEqual(
      ethers.scenarios[0].flow.map((f) => f.function),
      ['replay', 'afterScenario'],
    );
    assert.deepEqual(loadMix(`replay:${file}`), { eth_blockNumber: 2, eth_getBalance: 2, eth_getTransactionByHash: 2 });
  });

  it('keys: a missing or foreign file, RATE, PROFILE=methods are errors naming the key', () => {
    const dir = tmpDir();
    const check = (lines) =>
      resolveScenario(writeScenario(dir, 's', lines.join('\n')), { env: {}, dockerEngine: null }).errors.join('\n');
    assert.match(check(['WORKLOAD=replay:/no/such.jsonl']), /no such capture file/);
    const junk = path.join(dir, 'junk.jsonl');
    fs.writeFileSync(junk, '{"a":1}\n');
    assert.match(check([`WORKLOAD=replay:${junk}`]), /not a capture of \.\/run\.sh record: no requests to replay/);
    const file = writeCapture(3, 10);
    assert.match(check([`WORKLOAD=replay:${file}`, 'RATE=10']), /RATE: a replay keeps the capture's timing/);
    assert.match(check([`WORKLOAD=replay:${file}`, 'PROFILE=methods']), /PROFILE=methods/);
    assert.equal(check([`WORKLOAD=replay:${file}`, 'REPLAY_SPEED=0', 'RUNTIME=host']), '');
  });
});
