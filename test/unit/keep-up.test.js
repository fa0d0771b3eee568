'use strict';
// Whether a node keeps up, from synthetic timelines: the network's head at any
// instant, head lag in blocks and seconds, import times, stale answers and a
// catch-up, each against figures worked out by hand.

const assert = require('node:assert/strict');
const {
  netHeadAt,
  lagAt,
  lagFigures,
  lagSeries,
  importFigures,
  staleAnswers,
  catchUp,
  blockFigures,
  keepUpFigures,
} = require('../../src/measure/keep-up');

// A network that reached block 11 at t=1000, 12 at 2000, ... 20 at 10000 (one block a second), from block 10 at t=0.
const blocks = Array.from({ length: 10 }, (_, i) => ({
  number: 11 + i,
  head_ms: 1000 * (i + 1),
  gas_used: 1000000 * (i + 1),
  gas_limit: 30000000,
  txs: i,
}));
const chain = { blocks, start: { number: 10, at_ms: 0 } };

describe("the network's head and a node's lag", () => {
  it('the head at an instant is the last block the producer imported by then, or the start', () => {
    assert.deepEqual(netHeadAt(chain, 500), { number: 10, at_ms: 0 });
    assert.equal(netHeadAt(chain, 1000).number, 11, 'a block counts from the instant it became the head');
    assert.equal(netHeadAt(chain, 4999).number, 14);
    assert.equal(netHeadAt(chain, 99999).number, 20);
    assert.equal(netHeadAt({ blocks: [], start: { number: null, at_ms: 0 } }, 5).number, null);
  });

  it('lag in seconds runs from when the network reached the first block the node lacks; 0 at the head', () => {
    assert.deepEqual(lagAt(chain, 4500, 14), { blocks: 0, seconds: 0 });
    assert.deepEqual(lagAt(chain, 4500, 13), { blocks: 1, seconds: 0.5 }, 'block 14 came at 4000');
    assert.deepEqual(lagAt(chain, 4500, 11), { blocks: 3, seconds: 2.5 }, 'block 12 came at 2000');
    assert.deepEqual(
      lagAt(chain, 4500, 15),
      { blocks: 0, seconds: 0 },
      'a node ahead of what the driver saw is not behind',
    );
  });

  it("a window's lag: percentiles, the share of looks behind, the worst look; looks outside it are left out", () => {
    // looks every 250 ms from 4000 to 6000: at the head, except a stretch 1 then 2 blocks behind
    const samples = [
      { at_ms: 3000, head: 5 }, // before the window
      { at_ms: 4000, head: 14 },
      { at_ms: 4250, head: 14 },
      { at_ms: 4500, head: 14 },
      { at_ms: 5000, head: 14 }, // 15 came at 5000: 1 behind, 0 s
      { at_ms: 5500, head: 14 }, // 1 behind, 0.5 s
      { at_ms: 6000, head: 14 }, // 16 at 6000: 2 behind, 1 s
      { at_ms: 6250, head: 16 },
      { at_ms: 6500, head: 16 },
    ];
    const f = lagFigures(chain, samples, 4000, 6600);
    assert.equal(f.samples, 8);
    assert.equal(f.share_behind, 3 / 8);
    assert.deepEqual(f.worst, { blocks: 2, seconds: 1, at_ms: 6000 });
    assert.equal(f.blocks.max, 2);
    assert.equal(f.blocks.p50, 0);
    assert.equal(f.seconds.max, 1);
    assert.equal(f.blocks.mean, 0.5);
    const series = lagSeries(chain, samples, 4000, 6600);
    assert.deepEqual(
      series.map((p) => [p.t_ms, p.blocks, p.seconds]),
      [
        [4000, 0, 0],
        [5000, 1, 0.5],
        [6000, 2, 1],
      ],
    );
    assert.equal(lagFigures(chain, samples, 9000, 9500).samples, 0, 'no look in the window: no figure, not zero');
    assert.equal(lagFigures(chain, samples, 9000, 9500).share_behind, null);
  });
});

describe("a node's block imports as the driver saw them", () => {
  it('import time is from newPayload sent to the forkchoice answered VALID; SYNCING answers are counted apart', () => {
    const imports = [
      { number: 11, sent_ms: 1000, payload_ms: 1010, head_ms: 1020, status: 'VALID' },
      { number: 12, sent_ms: 2000, payload_ms: 2050, head_ms: 2060, status: 'VALID' },
      { number: 13, sent_ms: 3000, payload_ms: 3300, head_ms: 3400, status: 'VALID' },
      { number: 14, sent_ms: 4000, payload_ms: 4001, head_ms: 4002, status: 'SYNCING' },
      { number: 15, sent_ms: 9000, payload_ms: 9001, head_ms: 9002, status: 'VALID' }, // after the window
    ];
    assert.deepEqual(importFigures(imports, 1000, 5000), {
      blocks: 3,
      not_valid: 1,
      p50_ms: 60,
      p99_ms: 400,
      max_ms: 400,
    });
  });
});

describe('stale answers', () => {
  it("counts the answers naming a block older than the network's head when they arrived", () => {
    const answers = [
      [1500, 11], // head 11: fresh
      [2100, 11], // head 12: stale by 1
      [2100, 12], // fresh
      [5200, 12], // head 15: stale by 3
      [9999, 20], // outside the window
    ];
    assert.deepEqual(staleAnswers(chain, answers, 1000, 6000), { count: 2, of: 4, share: 0.5, most_blocks_behind: 3 });
    assert.deepEqual(staleAnswers(chain, [], 1000, 6000), { count: 0, of: 0, share: null, most_blocks_behind: 0 });
  });
});

describe('catch-up after a node is handed blocks again', () => {
  it('runs from the restore to the first look at the head: gap, seconds, blocks and their rate', () => {
    // cut at 2000 (head 12), restored at 7000 with the network at 17; the node reaches 18 at 8500 (the head then)
    const samples = [
      { at_ms: 6750, head: 12 },
      { at_ms: 7250, head: 12 },
      { at_ms: 7750, head: 15 },
      { at_ms: 8250, head: 17 }, // network at 18 since 8000: not yet
      { at_ms: 8500, head: 18 },
      { at_ms: 9000, head: 19 },
    ];
    assert.deepEqual(catchUp(chain, samples, 7000), {
      caught_up: true,
      gap_blocks: 5,
      seconds: 1.5,
      blocks: 6,
      blocks_per_s: 4,
      reached_at_ms: 8500,
    });
  });

  it('says when the node never reached the head, with how far it got', () => {
    const samples = [
      { at_ms: 6900, head: 12 },
      { at_ms: 8000, head: 13 },
      { at_ms: 9000, head: 14 },
    ];
    const c = catchUp(chain, samples, 7000);
    assert.equal(c.caught_up, false);
    assert.equal(c.blocks, 2);
    assert.equal(c.seconds, 2);
    assert.equal(c.reached_at_ms, null);
  });
});

describe('the blocks the network made in a window', () => {
  it('gives their count, gas used, gas limit and transactions per block', () => {
    assert.deepEqual(blockFigures(blocks, 1000, 4000), {
      blocks: 3,
      gas_used: { mean: 2000000, median: 2000000, min: 1000000, max: 3000000 },
      gas_limit: 30000000,
      txs_per_block: 1,
    });
    assert.equal(blockFigures(blocks, 50000, 60000).blocks, 0);
  });
});

describe("the window's keep-up figures, which MAX_HEAD_LAG_S bounds", () => {
  const lag = (seconds, share) => ({ worst: seconds === null ? null : { seconds, blocks: 1 }, share_behind: share });
  it("a node's: its worst look and its share behind; with a fleet, the worst replica's", () => {
    const one = { network: { keep_up: { head_lag: lag(0.4, 0.02), stale_answers: { share: 0.01 } } } };
    assert.deepEqual(keepUpFigures(one), {
      head_lag_s_max: 0.4,
      head_lag_share_behind: 0.02,
      stale_answer_share: 0.01,
    });
    const by_replica = [
      { replica: 'replica-1', head_lag: lag(0.4, 0.02) },
      { replica: 'replica-2', head_lag: lag(9.5, 0.6) },
    ];
    const fleet = { network: { keep_up: { head_lag: lag(0.4, 0.02), by_replica, stale_answers: null } } };
    const f = keepUpFigures(fleet);
    assert.equal(f.head_lag_s_max, 9.5, 'the lagging replica, not the first one alone');
    assert.equal(f.head_lag_share_behind, 0.6);
    const unseen = { network: { keep_up: { head_lag: lag(null, null), stale_answers: null } } };
    assert.equal(keepUpFigures(unseen).head_lag_s_max, null, 'no look answered: no figure');
    assert.deepEqual(keepUpFigures({}), {});
  });
});
