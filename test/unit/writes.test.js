'use strict';
// figures.writes: one object for the Ethereum writers and the Substrate transfer workload; the write workloads' key
// checks.

const assert = require('node:assert/strict');
const { mergeWrites, writesFigures, subscriptionFigures } = require('../../src/workload/write-figures');
const { resolveScenario } = require('../../src/scenario/resolve');
const { workloadLines } = require('../../src/report/workloads');
const chains = require('../../src/chains');
const { tmpDir, writeScenario } = require('../helpers');

const window = { start_ms: 0, end_ms: 10000 };

describe('write figures', () => {
  it("Ethereum: the workers' tallies summed, tps over the window, inclusion percentiles", () => {
    const part = (sub, inc, lat, blocks) => ({
      writes: { submitted: sub, included: inc, failed: 0, inclusion_ms: lat, included_blocks: blocks, errors: {} },
    });
    const writes = mergeWrites([
      part(5, 4, [100, 300, 200, 400], { 7: 2, 8: 2 }),
      {},
      part(6, 6, [500, 600, 700, 800, 900, 1000], { 8: 3, 9: 3 }),
    ]);
    const f = writesFigures({ writes, window });
    assert.equal(f.submitted, 11);
    assert.equal(f.included, 10);
    assert.equal(f.tps, 1);
    assert.equal(f.submitted_tps, 1.1);
    assert.deepEqual(f.included_by_block, { 7: 2, 8: 5, 9: 3 });
    assert.equal(f.inclusion_ms.p50, 500);
    assert.equal(f.inclusion_ms.p99, 1000);
  });

  it("Substrate: the same fields from its transfers, through the chain's windowRecords hook; none without writes", () => {
    const part = {
      substrate: {
        ops: {},
        op_errors: {},
        notifications: 0,
        tx: { submitted: 20, included: 18, failed: 1, inclusion_ms: [1, 1, 2, 3, 4], errors: { x: 1 } },
      },
    };
    const own = chains.polkadot.windowRecords([part, {}], 10);
    const f = writesFigures({ chainWrites: own.writes, window });
    assert.deepEqual(
      { ...f, inclusion_ms: f.inclusion_ms.p50 },
      { tps: 1.8, submitted_tps: 2, submitted: 20, included: 18, failed: 1, inclusion_ms: 2, errors: { x: 1 } },
    );
    assert.equal(own.fields.substrate.transactions.included, 18, 'run.json keeps substrate.transactions');
    assert.equal(writesFigures({ window }), null);
    assert.equal(mergeWrites([{}]), null);
  });

  it("subscriptions: the workers' notifications by kind and block, delay and spread", () => {
    const part = (heads, delay) => ({
      subscriptions: {
        subscriptions: { 'sub.newHeads': 2, 'sub.logs': 1 },
        notifications: { 'sub.newHeads': heads.length * 2, 'sub.logs': 1 },
        heads_by_block: Object.fromEntries(heads.map((n) => [n, 2])),
        delay_ms: delay,
        spread_ms: [0, 1],
        errors: {},
      },
    });
    const f = subscriptionFigures([part([5, 6], [700, 710, 720, 730]), {}, part([6, 7], [800, 810, 820, 830])], window);
    assert.deepEqual(f.subscriptions, { 'sub.newHeads': 4, 'sub.logs': 2 });
    assert.deepEqual(f.heads_by_block, { 5: 2, 6: 4, 7: 2 });
    assert.equal(f.notifications_per_s, 1);
    assert.equal(f.delay_from_block_timestamp_ms.max, 830);
    assert.equal(subscriptionFigures([{}], window), null);
  });

  it('summary.md names the shape, the replay, the transactions and the subscriptions; nothing for a plain mix', () => {
    const lat = { p50: 900, p95: 1000, p99: 1100, max: 1200 };
    const run = {
      window: { shape: { kind: 'spike', segments: [{ from_s: 0, to_s: 4, rps: 100, achieved_rps: 99.5 }] } },
      generator: {
        replay: {
          capture_requests: 10,
          capture_sha256: 'abcdef0123456789',
          speed: 2,
          sent_in_window: 9,
          missing_on_target: 1,
        },
      },
      figures: {
        writes: { included: 5, tps: 0.5, submitted: 6, submitted_tps: 0.6, failed: 0, inclusion_ms: lat },
        subscriptions: {
          subscriptions: { 'sub.newHeads': 2 },
          notifications: { 'sub.newHeads': 4 },
          notifications_per_s: 0.4,
          heads_by_block: { 1: 2, 2: 2 },
          delay_from_block_timestamp_ms: lat,
          spread_ms: lat,
        },
      },
    };
    const text = workloadLines(run).join('\n');
    assert.match(text, /Load shape spike .* 0\.0-4\.0 s: 100\/s offered, 99\.5\/s served/);
    assert.match(text, /capture of 10 calls \(sha256 abcdef012345\) at REPLAY_SPEED=2: 9 calls .* 1 asked for/);
    assert.match(text, /5 included in the window \(0\.50\/s\) of 6 submitted/);
    assert.match(text, /2 newHeads; notifications in the window: 4 newHeads .* over 2 blocks/);
    assert.deepEqual(workloadLines({ window: {}, generator: {}, figures: {} }), []);
  });

  it('keys: write workloads are a closed loop through ethers on an EVM chain', () => {
    const dir = tmpDir();
    const check = (lines) =>
      resolveScenario(writeScenario(dir, 's', lines.join('\n')), { env: {}, dockerEngine: null }).errors.join('\n');
    assert.match(check(['WORKLOAD=eth-transfers', 'RATE=10']), /set CONCURRENCY, not RATE/);
    assert.match(check(['WORKLOAD=eth-token-transfers', 'GENERATOR=lean']), /signs through ethers/);
    assert.equal(check(['WORKLOAD=eth-transfers', 'RUNTIME=host']), '');
    assert.match(check(['WORKLOAD=eth-subscriptions', 'TRANSPORT=http', 'RUNTIME=host']), /set TRANSPORT=ws/);
    assert.equal(check(['WORKLOAD=eth-subscriptions', 'RUNTIME=host']), '', 'TRANSPORT left unset: ws, derived');
    assert.equal(check(['WORKLOAD=eth-subscriptions', 'TRANSPORT=ws', 'RUNTIME=host']), '');
  });
});
