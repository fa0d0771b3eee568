// @ts-check
'use strict';
// Whether a node keeps up with a moving chain, from timelines alone (no I/O):
// the network's head at any instant (the blocks its producer imported, and
// when), the node's head as sampled, the node's block imports as the engine-API
// driver saw them, the answers to `latest` requests that named a block. The
// definitions are docs/chain-load.md's:
//   head lag at t        = the network's head at t minus the node's head, in
//                          blocks; in seconds, how long ago the network reached
//                          the first block the node lacks (0 when it lacks none)
//   import time          = from the driver handing the node a block
//                          (engine_newPayloadV4 sent) to the node's head being
//                          that block (engine_forkchoiceUpdatedV3 answered VALID)
//   stale answer         = an answer to a `latest` request naming a block older
//                          than the network's head when the answer arrived
//   catch-up             = from a cut node's restore to the first sample at the
//                          network's head: seconds, blocks, blocks per second

const { percentile } = require('../stats');
const { round } = require('../figures');

/**
 * The network's chain as the driver saw it: blocks in the order the producer imported them (head_ms ascending), and
 * the head it started from.
 * @typedef {{blocks: {number: number, head_ms: number}[], start: {number: number|null, at_ms: number}}} Chain
 */

/** The index of the last block whose head_ms is at or before t (-1: none). */
function lastAtOrBefore(blocks, t) {
  let lo = 0;
  let hi = blocks.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (blocks[mid].head_ms <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The first block numbered above n (blocks ascend by number as by head_ms), or undefined. */
function firstAbove(blocks, n) {
  let lo = 0;
  let hi = blocks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (blocks[mid].number > n) hi = mid;
    else lo = mid + 1;
  }
  return blocks[lo];
}

/**
 * The network's head at t: its number, and when the network reached it.
 * @param {Chain} chain
 * @returns {{number: number|null, at_ms: number}}
 */
function netHeadAt(chain, t) {
  const i = lastAtOrBefore(chain.blocks, t);
  return i >= 0 ? { number: chain.blocks[i].number, at_ms: chain.blocks[i].head_ms } : chain.start;
}

/**
 * The node's head lag at t, given its head then: blocks behind the network, and seconds since the network reached the
 * first block the node lacks (null when the network's head at t is unknown).
 * @param {Chain} chain
 */
function lagAt(chain, t, nodeHead) {
  const net = netHeadAt(chain, t);
  if (net.number === null) return null;
  const blocks = Math.max(0, net.number - nodeHead);
  if (blocks === 0) return { blocks: 0, seconds: 0 };
  const firstMissing = firstAbove(chain.blocks, nodeHead);
  const since = firstMissing ? firstMissing.head_ms : net.at_ms;
  return { blocks, seconds: Math.max(0, (t - since) / 1000) };
}

const pct = (xs, p) =>
  xs.length
    ? percentile(
        [...xs].sort((a, b) => a - b),
        p,
      )
    : null;

/**
 * Head lag over [fromMs, toMs) from the node's head samples ({at_ms, head}, at_ms when the look was sent: the node's
 * answer is its head then or later, so a lag is never overstated by the look's own time).
 * @param {Chain} chain
 * @param {{at_ms: number, head: number}[]} samples
 */
function lagFigures(chain, samples, fromMs, toMs) {
  const lags = [];
  for (const s of samples) {
    if (s.at_ms < fromMs || s.at_ms >= toMs) continue;
    const l = lagAt(chain, s.at_ms, s.head);
    if (l) lags.push({ at_ms: s.at_ms, ...l });
  }
  if (!lags.length) return { samples: 0, blocks: null, seconds: null, share_behind: null, worst: null };
  const blocks = lags.map((l) => l.blocks);
  const seconds = lags.map((l) => l.seconds);
  const worst = lags.reduce((w, l) =>
    l.seconds > w.seconds || (l.seconds === w.seconds && l.blocks > w.blocks) ? l : w,
  );
  return {
    samples: lags.length,
    blocks: {
      p50: pct(blocks, 50),
      p99: pct(blocks, 99),
      max: Math.max(...blocks),
      mean: round(blocks.reduce((a, b) => a + b, 0) / blocks.length, 3),
    },
    seconds: { p50: round(pct(seconds, 50), 3), p99: round(pct(seconds, 99), 3), max: round(Math.max(...seconds), 3) },
    share_behind: round(blocks.filter((b) => b >= 1).length / lags.length, 4),
    worst: { blocks: worst.blocks, seconds: round(worst.seconds, 3), at_ms: worst.at_ms },
  };
}

/** The lag samples of a window per second: the most blocks and seconds behind in each (for the chart). */
function lagSeries(chain, samples, fromMs, toMs) {
  const bySecond = new Map();
  for (const s of samples) {
    if (s.at_ms < fromMs || s.at_ms >= toMs) continue;
    const l = lagAt(chain, s.at_ms, s.head);
    if (!l) continue;
    const t = fromMs + Math.floor((s.at_ms - fromMs) / 1000) * 1000;
    const p = bySecond.get(t) || { t_ms: t, blocks: 0, seconds: 0 };
    p.blocks = Math.max(p.blocks, l.blocks);
    p.seconds = Math.max(p.seconds, round(l.seconds, 3));
    bySecond.set(t, p);
  }
  return [...bySecond.values()];
}

/**
 * Import times over [fromMs, toMs) of the blocks handed to a node then ({sent_ms, head_ms, status}): the imports the
 * node answered VALID; those it answered otherwise (SYNCING: it lacked the block's parent) are counted apart.
 */
function importFigures(imports, fromMs, toMs) {
  const inWindow = imports.filter((x) => x.sent_ms >= fromMs && x.sent_ms < toMs);
  const valid = inWindow.filter((x) => x.status === 'VALID').map((x) => x.head_ms - x.sent_ms);
  return {
    blocks: valid.length,
    not_valid: inWindow.length - valid.length,
    p50_ms: pct(valid, 50),
    p99_ms: pct(valid, 99),
    max_ms: valid.length ? Math.max(...valid) : null,
  };
}

/**
 * Stale answers over [fromMs, toMs): of the answers naming a block ([arrived_ms, block]), those naming one older than
 * the network's head when they arrived.
 * @param {Chain} chain
 * @param {[number, number][]} answers
 */
function staleAnswers(chain, answers, fromMs, toMs) {
  let of = 0;
  let stale = 0;
  let blocksBehind = 0;
  for (const [t, block] of answers) {
    if (t < fromMs || t >= toMs) continue;
    const net = netHeadAt(chain, t).number;
    if (net === null) continue;
    of++;
    if (block < net) {
      stale++;
      blocksBehind = Math.max(blocksBehind, net - block);
    }
  }
  return { count: stale, of, share: of ? round(stale / of, 4) : null, most_blocks_behind: blocksBehind };
}

/**
 * Catch-up after a node is handed blocks again at restoreMs: the first sample from then on at the network's head (its
 * head at that look) ends it. Figures: the gap at the restore (blocks), seconds to close it, blocks imported meanwhile
 * and their rate; caught_up false when no sample reached the head (the figures then say how far it got).
 * @param {Chain} chain
 * @param {{at_ms: number, head: number}[]} samples
 */
function catchUp(chain, samples, restoreMs) {
  const before = samples.filter((s) => s.at_ms <= restoreMs).at(-1);
  const after = samples.filter((s) => s.at_ms > restoreMs);
  const net = netHeadAt(chain, restoreMs).number;
  if (!before || net === null) return null;
  const reached = after.find((s) => {
    const n = netHeadAt(chain, s.at_ms).number;
    return n !== null && s.head >= n;
  });
  const end = reached || after.at(-1) || before;
  const seconds = (end.at_ms - restoreMs) / 1000;
  const blocks = end.head - before.head;
  return {
    caught_up: Boolean(reached),
    gap_blocks: Math.max(0, net - before.head),
    seconds: round(seconds, 3),
    blocks,
    blocks_per_s: seconds > 0 ? round(blocks / seconds, 2) : null,
    reached_at_ms: reached ? reached.at_ms : null,
  };
}

/**
 * The blocks the network reached over [fromMs, toMs): how many, their gas used (mean, median, min, max), their gas
 * limit (the last one's) and transactions per block.
 */
function blockFigures(blocks, fromMs, toMs) {
  const inWindow = blocks.filter((b) => b.head_ms >= fromMs && b.head_ms < toMs);
  if (!inWindow.length) return { blocks: 0, gas_used: null, gas_limit: null, txs_per_block: null };
  const gas = inWindow.map((b) => b.gas_used);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  return {
    blocks: inWindow.length,
    gas_used: {
      mean: Math.round(sum(gas) / gas.length),
      median: pct(gas, 50),
      min: Math.min(...gas),
      max: Math.max(...gas),
    },
    gas_limit: inWindow.at(-1).gas_limit,
    txs_per_block: round(sum(inWindow.map((b) => b.txs)) / inWindow.length, 2),
  };
}

/**
 * The window's keep-up figures for run.json's figures (bounds and saturation judge them): the worst head lag in
 * seconds, the share of looks behind (a fleet's: its worst replica's), the share of stale answers; none without a
 * network.
 */
function keepUpFigures(node) {
  const k = node && node.network && node.network.keep_up;
  if (!k) return {};
  // a fleet's figures are its worst replica's: the bound holds only when every replica keeps up
  const lags = k.by_replica ? k.by_replica.map((r) => r.head_lag) : [k.head_lag];
  const worstOf = (xs) =>
    xs.some((x) => x !== null && x !== undefined) ? Math.max(...xs.filter((x) => x != null)) : null;
  // the node's disk bytes (its cgroup's, over the window) per block the network made in it
  const blocks = node.network.chain ? node.network.chain.blocks : 0;
  const io = node.io;
  const perBlock = (x) => (io && blocks > 0 && x !== null && x !== undefined ? Math.round(x / blocks) : null);
  return {
    head_lag_s_max: worstOf(lags.map((l) => (l.worst ? l.worst.seconds : null))),
    head_lag_share_behind: worstOf(lags.map((l) => l.share_behind)),
    stale_answer_share: k.stale_answers ? k.stale_answers.share : null,
    ...(io
      ? {
          disk_read_bytes_per_block: perBlock(io.read_bytes),
          disk_write_bytes_per_block: perBlock(io.write_bytes),
          ...(io.write_bytes_dirtied !== undefined
            ? { disk_write_bytes_dirtied_per_block: perBlock(io.write_bytes_dirtied) }
            : {}),
        }
      : {}),
  };
}

module.exports = {
  keepUpFigures,
  blockFigures,
  netHeadAt,
  lagAt,
  lagFigures,
  lagSeries,
  importFigures,
  staleAnswers,
  catchUp,
};
