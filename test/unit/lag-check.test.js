'use strict';
// LB_LAG_CHECK: what each replica's agent answers HAProxy from the head watch
// (a head lag over MAX_HEAD_LAG_S or a stale look drains it, a recovered one is
// ready again, every replica lagging drains none), over real TCP; the key's
// default and refusals; the window's record and summary.md's lines.

const assert = require('node:assert/strict');
const net = require('node:net');
const {
  startLagAgents,
  lagAnswerer,
  replicaState,
  answersFor,
  drainedSeconds,
} = require('../../src/runtime/lag-agent');
const { fleetLines } = require('../../src/report/network');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

/** A head watch whose looks and lags the test sets: lag[name] seconds (blocks alike), looked at lookMs[name]. */
function fakeHeads(clock) {
  const lag = {};
  const lookMs = {};
  return {
    lag,
    lookMs,
    lastLook: (n) => (lookMs[n] === undefined ? undefined : { at_ms: lookMs[n], head: 100 }),
    lagNow: (n) => (lookMs[n] === undefined ? null : { blocks: lag[n], seconds: lag[n], at_ms: lookMs[n] }),
    look(n, seconds) {
      lag[n] = seconds;
      lookMs[n] = clock.t;
    },
  };
}

describe("LB_LAG_CHECK: a replica's agent", () => {
  it('lagging: a head lag over the bound, or no look answered for 2 s; not: within the bound', () => {
    const base = { armedMs: 0, nowMs: 10000, boundS: 2 };
    const over = replicaState({ ...base, look: { at_ms: 9900 }, lag: { blocks: 3, seconds: 2.6 } });
    assert.equal(over.lagging, true);
    assert.match(over.why, /head lag 2\.6 s \(3 blocks\) over MAX_HEAD_LAG_S=2/);
    assert.equal(over.lag_s, 2.6);
    const stale = replicaState({ ...base, look: { at_ms: 7500 }, lag: { blocks: 0, seconds: 0 } });
    assert.equal(stale.lagging, true, 'its last look is 2.5 s old');
    assert.match(stale.why, /no look at its head answered for 2\.5 s/);
    const within = replicaState({ ...base, look: { at_ms: 9900 }, lag: { blocks: 1, seconds: 1.9 } });
    assert.equal(within.lagging, false);
    assert.match(within.why, /within MAX_HEAD_LAG_S=2/);
    const atBound = replicaState({ ...base, look: { at_ms: 9900 }, lag: { blocks: 2, seconds: 2 } });
    assert.equal(atBound.lagging, false, 'the bound itself is within');
    // no look yet: its lag unknown, counted from when the agents began to watch
    assert.equal(replicaState({ ...base, armedMs: 9000, look: null, lag: null }).lagging, false);
    assert.equal(replicaState({ ...base, armedMs: 7000, look: null, lag: null }).lagging, true);
  });

  it('drains a lagging replica while another keeps up; drains none when every replica lags', () => {
    const a = answersFor({ r1: { lagging: false, why: 'ok' }, r2: { lagging: true, why: 'behind' } });
    assert.deepEqual(a, { r1: { answer: 'ready', reason: 'ok' }, r2: { answer: 'drain', reason: 'behind' } });
    const all = answersFor({ r1: { lagging: true, why: 'behind' }, r2: { lagging: true, why: 'behind' } });
    assert.equal(all.r1.answer, 'ready');
    assert.equal(all.r2.answer, 'ready');
    assert.match(all.r2.reason, /every replica lags: none is drained/);
  });

  it('answers ready until armed; then drain over the bound, drain on a stale look, ready once recovered', () => {
    const clock = { t: 1000 };
    const heads = fakeHeads(clock);
    const book = lagAnswerer({ names: ['replica-1', 'replica-2'], boundS: 2, now: () => clock.t });
    assert.equal(book.answer('replica-2'), 'ready', 'before the network runs');
    book.arm(heads);
    heads.look('replica-1', 0);
    heads.look('replica-2', 0.5);
    clock.t = 2000;
    assert.equal(book.answer('replica-2'), 'ready');
    heads.look('replica-1', 0);
    heads.look('replica-2', 3.2); // cut from the chain: its head stays, the network's goes on
    clock.t = 3000;
    assert.equal(book.answer('replica-2'), 'drain');
    assert.equal(book.answer('replica-1'), 'ready');
    heads.look('replica-2', 0); // caught up
    heads.look('replica-1', 0);
    clock.t = 4000;
    assert.equal(book.answer('replica-2'), 'ready');
    clock.t = 6500;
    heads.look('replica-1', 0); // replica-2's looks stop being answered (a node too busy, or frozen)
    assert.equal(book.answer('replica-2'), 'drain');
    assert.deepEqual(
      book.changes.map((c) => [c.replica, c.answer, c.at_ms]),
      [
        ['replica-2', 'drain', 3000],
        ['replica-2', 'ready', 4000],
        ['replica-2', 'drain', 6500],
      ],
    );
    assert.match(book.changes[0].reason, /head lag 3\.2 s .* over MAX_HEAD_LAG_S=2/);
    assert.equal(book.changes[0].lag_s, 3.2);
    assert.match(book.changes[2].reason, /no look at its head answered for 3\.5 s/, 'its last look at 3000');
    // the run's teardown stops the head watch: the answers stay as they were, no change recorded
    book.freeze();
    clock.t = 20000;
    assert.equal(book.answer('replica-2'), 'drain');
    assert.equal(book.answer('replica-1'), 'ready');
    assert.equal(book.changes.length, 3);
  });

  it("counts a replica's seconds drained inside a window from its changes", () => {
    const changes = [
      { at_ms: 1000, answer: 'drain' },
      { at_ms: 4000, answer: 'ready' },
      { at_ms: 8000, answer: 'drain' },
    ];
    assert.equal(drainedSeconds(changes, 2000, 10000), 4, '2 s of the first, 2 s of the second (still drained)');
    assert.equal(drainedSeconds(changes, 4000, 8000), 0);
    assert.equal(drainedSeconds([], 0, 5000), 0);
  });

  it('answers HAProxy over TCP on 127.0.0.1, one line per connection; its record has each change', async () => {
    const clock = { t: 1000 };
    const heads = fakeHeads(clock);
    const agents = await startLagAgents({ names: ['replica-1', 'replica-2'], boundS: 2, now: () => clock.t });
    const ask = (name) =>
      new Promise((resolve, reject) => {
        let text = '';
        const sock = net.connect(agents.ports[name], '127.0.0.1');
        sock.on('data', (d) => (text += d));
        sock.on('end', () => resolve(text));
        sock.on('error', reject);
      });
    try {
      assert.equal(await ask('replica-2'), 'ready\n');
      agents.arm(heads);
      heads.look('replica-1', 0);
      heads.look('replica-2', 5);
      clock.t = 1500;
      assert.equal(await ask('replica-2'), 'drain\n');
      assert.equal(await ask('replica-1'), 'ready\n');
      heads.look('replica-2', 0.2);
      clock.t = 2500;
      assert.equal(await ask('replica-2'), 'ready\n');
      const w = agents.windowRecord(1000, 3000);
      assert.equal(w.bound_s, 2);
      assert.deepEqual(
        w.changes.map((c) => [c.replica, c.answer]),
        [
          ['replica-2', 'drain'],
          ['replica-2', 'ready'],
        ],
      );
      assert.deepEqual(w.replicas, [
        { replica: 'replica-1', answers: 1, drain_answers: 0, drained_s: 0 },
        { replica: 'replica-2', answers: 3, drain_answers: 1, drained_s: 1 },
      ]);
      const run = agents.record();
      assert.equal(run.changes.length, 2);
      assert.match(run.answers, /drain .* over MAX_HEAD_LAG_S .* ready otherwise/);
    } finally {
      await agents.stop();
    }
  });
});

describe('LB_LAG_CHECK: the key', () => {
  const dir = tmpDir();
  const resolve = (text) =>
    resolveScenario(writeScenario(dir, 'l.env', text), { env: {}, cpuCount: 2, dockerEngine: null });
  const FLEET = 'RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\n';

  it('is on by default for a fleet of the host runtime with MAX_HEAD_LAG_S, off otherwise', () => {
    const on = resolve(`${FLEET}MAX_HEAD_LAG_S=2\n`);
    assert.deepEqual(on.errors, []);
    assert.equal(on.scenario.LB_LAG_CHECK, 'on');
    assert.match(on.sources.LB_LAG_CHECK, /default \(REPLICAS=2 with MAX_HEAD_LAG_S=2\)/);
    assert.equal(resolve(FLEET).scenario.LB_LAG_CHECK, 'off', 'no bound');
    assert.equal(resolve('RUNTIME=host\nNETWORK_NODES=1\nMAX_HEAD_LAG_S=2\n').scenario.LB_LAG_CHECK, 'off');
    const compose = resolve('RUNTIME=compose\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\nMAX_HEAD_LAG_S=2\n');
    assert.deepEqual(compose.errors, []);
    assert.equal(compose.scenario.LB_LAG_CHECK, 'off');
    assert.match(compose.sources.LB_LAG_CHECK, /host runtime only/);
    assert.equal(resolve(`${FLEET}MAX_HEAD_LAG_S=2\nLB_LAG_CHECK=off\n`).scenario.LB_LAG_CHECK, 'off');
  });

  it('refuses on without MAX_HEAD_LAG_S, without a balancer, or in another runtime, naming the key', () => {
    const errs = (text) => resolve(text).errors.join('\n');
    assert.match(errs(`${FLEET}LB_LAG_CHECK=on\n`), /\.env:5: LB_LAG_CHECK=on: .*set MAX_HEAD_LAG_S/);
    assert.match(
      errs('RUNTIME=host\nNETWORK_NODES=1\nMAX_HEAD_LAG_S=2\nLB_LAG_CHECK=on\n'),
      /LB_LAG_CHECK=on: there is no balancer/,
    );
    assert.match(
      errs('RUNTIME=compose\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\nMAX_HEAD_LAG_S=2\nLB_LAG_CHECK=on\n'),
      /LB_LAG_CHECK=on: the lag check runs in the host runtime only .*RUNTIME is compose/,
    );
    assert.match(errs(`${FLEET}LB_LAG_CHECK=maybe\n`), /LB_LAG_CHECK/);
    assert.equal(errs(`${FLEET}MAX_HEAD_LAG_S=2\nLB_LAG_CHECK=on\n`), '');
  });
});

describe('LB_LAG_CHECK in summary.md', () => {
  const fleet = {
    replicas: 2,
    algorithm: 'roundrobin',
    balancer: 'HAProxy',
    config: 'haproxy.cfg',
    health_check: 'x',
    per_replica: 'y',
    lag_check: { bound_s: 2, agent: 'a TCP agent per replica', answers: 'drain while it lags; ready otherwise' },
  };
  const replica = (name) => ({ name, requests: 10, share: 0.5, cpu_s: 1, up_at_end: true, memory_bytes: null });
  const window = (lagCheck) => ({
    replicas: [replica('replica-1'), replica('replica-2')],
    balancer: { cpu_s: 1, cpu_ms_per_request: 0.1 },
    spread: { share_max_over_min: 1, cpu_per_request_max_over_min: 1 },
    source: 's',
    rotation: [],
    lag_check: lagCheck,
  });

  it("says what the agents answer, each change in the window and each replica's time drained", () => {
    const text = fleetLines({
      fleet,
      node: {
        fleet: window({
          bound_s: 2,
          changes: [
            { replica: 'replica-2', answer: 'drain', at_ms: Date.UTC(2026, 0, 1), reason: 'head lag 2.4 s over' },
            { replica: 'replica-2', answer: 'ready', at_ms: Date.UTC(2026, 0, 1, 0, 0, 9), reason: 'within' },
          ],
          replicas: [
            { replica: 'replica-1', answers: 20, drain_answers: 0, drained_s: 0 },
            { replica: 'replica-2', answers: 20, drain_answers: 9, drained_s: 9 },
          ],
        }),
      },
    }).join('\n');
    assert.match(text, /Lag check \(LB_LAG_CHECK=on, MAX_HEAD_LAG_S=2 s\): a TCP agent per replica/);
    assert.match(
      text,
      /replica-1 20, replica-2 20 times in the window\); out of rotation by the lag check: replica-2 9/,
    );
    assert.match(text, /replica-2: \*\*drained\*\* at 2026-01-01T00:00:00\.000Z \(head lag 2\.4 s over\)/);
    assert.match(text, /replica-2: ready again at 2026-01-01T00:00:09\.000Z/);
  });

  it('says no replica was drained in a window without a change; nothing without the lag check', () => {
    const quiet = fleetLines({
      fleet,
      node: {
        fleet: window({
          bound_s: 2,
          changes: [],
          replicas: [{ replica: 'replica-1', answers: 20, drain_answers: 0, drained_s: 0 }],
        }),
      },
    }).join('\n');
    assert.match(quiet, /no agent's answer changed in the window: no replica drained/);
    const off = fleetLines({ fleet: { ...fleet, lag_check: undefined }, node: { fleet: window(undefined) } });
    assert.doesNotMatch(off.join('\n'), /Lag check/);
  });
});
