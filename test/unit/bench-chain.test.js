'use strict';
// npm run bench:chain's arithmetic: the figures it reads from a window (run.json, or a side of an ab.json pair), the
// catch-up it reads from FAULT=pause-node, medians over runs with failed ones left out, B/A over pairs of runs with the
// interval from the pairs, the order of the runs and the together part's rates.
const assert = require('node:assert/strict');
const {
  windowFigures,
  catchUpFigures,
  medianOf,
  ratioOf,
  schedule,
  togetherRates,
  armsTable,
  armsKv,
  fmtRatio,
} = require('../../scripts/lib/bench-chain-figures');

/** A window as run.json gives it on a network, with the figures given. */
function window({ cpu = 1, read = 1000, importP50 = 30, clientP50 = 20, worst = 2.5, share = 0.1 } = {}) {
  return {
    figures: {
      cpu_ms_per_request: cpu,
      cpu_ms_per_request_net_of_chain: cpu / 2,
      rps: 50,
      latency_ms: { p50: 1, p99: 9 },
      disk_read_bytes_per_block: read,
      disk_write_bytes_per_block: 0,
    },
    node: {
      network: {
        keep_up: {
          head_lag: {
            seconds: { p50: 0, p99: worst, max: worst },
            share_behind: share,
            worst: { seconds: worst, blocks: 2 },
          },
          import_ms: {
            blocks: 15,
            p50_ms: importP50,
            p99_ms: 90,
            client: { blocks: 15, p50_ms: clientP50, p99_ms: 60 },
          },
          stale_answers: { count: 12, of: 100, share: 0.12 },
        },
        chain: { blocks: 15, gas_used: { mean: 10e6 } },
      },
    },
  };
}

describe('npm run bench:chain: figures, medians and ratios', () => {
  it("reads a window's CPU, disk per block, import times (the driver's and the client's), head lag and blocks", () => {
    const f = windowFigures(window({ cpu: 2, read: 4096, importP50: 31, clientP50: 19, worst: 3.5, share: 0.25 }));
    assert.equal(f.cpu_ms_per_request, 2);
    assert.equal(f.cpu_ms_per_request_net_of_chain, 1);
    assert.equal(f.disk_read_bytes_per_block, 4096);
    assert.equal(f.import_p50_ms, 31);
    assert.equal(f.client_import_p50_ms, 19);
    assert.equal(f.head_lag_s_worst, 3.5);
    assert.equal(f.head_lag_s_p99, 3.5);
    assert.equal(f.share_behind, 0.25);
    assert.equal(f.stale_answer_share, 0.12);
    assert.equal(f.blocks, 15);
    assert.equal(f.p99_ms, 9);
  });

  it('a window without a network or a figure gives null for it, not a throw or a zero', () => {
    const f = windowFigures({ figures: { cpu_ms_per_request: 0.2 }, node: {} });
    assert.equal(f.cpu_ms_per_request, 0.2);
    assert.equal(f.import_p50_ms, null);
    assert.equal(f.head_lag_s_worst, null);
    assert.equal(f.disk_read_bytes_per_block, null);
  });

  it("reads FAULT=pause-node's catch-up, the window's stale answers with FAULT_LOAD=on only; none without a catch-up", () => {
    const run = window();
    const catchUp = { caught_up: true, gap_blocks: 30, seconds: 4.2, blocks: 31, blocks_per_s: 7.4 };
    run.fault = { load: 'on', catch_up: catchUp };
    assert.deepEqual(catchUpFigures(run), {
      caught_up: true,
      gap_blocks: 30,
      seconds: 4.2,
      blocks: 31,
      blocks_per_s: 7.4,
      stale_answers: 12,
      stale_answer_share: 0.12,
    });
    // FAULT_LOAD=off: the pause came after the window, whose stale answers are not the pause's
    const off = catchUpFigures({ ...window(), fault: { load: 'off', catch_up: catchUp } });
    assert.equal(off.stale_answers, null);
    assert.equal(off.seconds, 4.2);
    assert.equal(catchUpFigures(window()), null);
    assert.equal(catchUpFigures({ fault: { catch_up: null } }), null);
  });

  it('the median over runs leaves failed runs and missing figures out and says over how many', () => {
    const records = [windowFigures(window({ cpu: 1 })), null, windowFigures(window({ cpu: 3 })), { cpu: null }];
    assert.deepEqual(medianOf(records, 'cpu_ms_per_request'), { median: 2, n: 2 });
    assert.deepEqual(medianOf([null, null], 'cpu_ms_per_request'), { median: null, n: 0 });
  });

  it('B/A over pairs: the geometric mean of the pair ratios, the interval from their spread, a failed pair left out', () => {
    const pair = (a, b) => ({ a: windowFigures(window({ cpu: a })), b: windowFigures(window({ cpu: b })) });
    const pairs = [pair(1, 1.1), pair(2, 2.2), pair(1, 1.1), { a: null, b: windowFigures(window()) }];
    const r = ratioOf(pairs, 'cpu_ms_per_request');
    assert.equal(r.n, 3);
    assert.equal(r.left_out, 1);
    assert.ok(Math.abs(r.ratio - 1.1) < 1e-9, String(r.ratio));
    assert.ok(Math.abs(r.ci95[0] - 1.1) < 1e-9 && Math.abs(r.ci95[1] - 1.1) < 1e-9, String(r.ci95));
    assert.equal(r.verdict, 'higher');
    const spread = ratioOf([pair(1, 1.2), pair(1, 0.9), pair(1, 1.05)], 'cpu_ms_per_request');
    assert.ok(spread.ci95[0] < 1 && spread.ci95[1] > 1, String(spread.ci95));
    assert.equal(spread.verdict, 'same');
    assert.match(fmtRatio(spread), /^1\.04\d+ \[0\.\d+, 1\.\d+\] same \(3 pairs\)$/);
  });

  it('one usable pair gives a ratio and no interval; values of 0 (no disk written) are left out', () => {
    const one = ratioOf([{ a: { x: 2 }, b: { x: 3 } }], 'x');
    assert.equal(one.ratio, 1.5);
    assert.equal(one.ci95, null);
    assert.match(fmtRatio(one), /no interval \(1 pairs\)/);
    const zero = ratioOf([{ a: { x: 0 }, b: { x: 0 } }], 'x');
    assert.equal(zero.ratio, null);
    assert.equal(fmtRatio(zero), 'n/a (0 pairs, 1 left out)');
  });

  it('runs in turn: each repetition runs every arm once in their order', () => {
    assert.deepEqual(
      schedule(['0', '50', '100'], 2).map((x) => `${x.arm}#${x.rep}`),
      ['0#1', '50#1', '100#1', '0#2', '50#2', '100#2'],
    );
    assert.deepEqual(
      schedule(['leveldb', 'pebble'], 2).map((x) => x.arm),
      ['leveldb', 'pebble', 'leveldb', 'pebble'],
    );
  });

  it("together's rates: 1 request/s for 0%, half of R rounded, R; never below 1", () => {
    assert.deepEqual(togetherRates(3797), { 0: 1, 50: 1899, 100: 3797 });
    assert.deepEqual(togetherRates(1), { 0: 1, 50: 1, 100: 1 });
  });

  it("the table gives each arm's medians over its good runs, B/A from the pairs, and the key=value figures", () => {
    const a = [windowFigures(window({ cpu: 1, read: 100 })), windowFigures(window({ cpu: 1, read: 300 }))];
    const b = [windowFigures(window({ cpu: 2, read: 200 })), null];
    const arms = [
      { name: 'leveldb', records: a },
      { name: 'pebble', records: b },
    ];
    const pairs = [
      { a: a[0], b: b[0] },
      { a: a[1], b: b[1] },
    ];
    const text = armsTable(arms, ['cpu_ms_per_request', 'disk_read_bytes_per_block'], pairs);
    const lines = text.split('\n');
    assert.equal(
      lines[0],
      '| figure | leveldb (median of 2) | pebble (median of 1) | B/A, 95% interval from the pairs |',
    );
    assert.equal(lines[2], '| CPU ms/request (gross) | 1.0000 | 2.0000 | 2.0000 no interval (1 pairs, 1 left out) |');
    assert.equal(lines[3], '| disk bytes read/block | 200 | 200 | 2.0000 no interval (1 pairs, 1 left out) |');
    const kv = armsKv('engines', arms, ['cpu_ms_per_request'], pairs);
    assert.deepEqual(kv, {
      engines_cpu_ms_per_request_leveldb: '1.0000',
      engines_cpu_ms_per_request_pebble: '2.0000',
      engines_cpu_ms_per_request_ratio: '2.0000',
      engines_cpu_ms_per_request_ci_low: 'n/a',
      engines_cpu_ms_per_request_ci_high: 'n/a',
    });
  });
});
