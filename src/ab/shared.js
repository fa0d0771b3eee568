'use strict';
// What the two sides of an A/B session share: parameter pools that ask both
// chains for the same things, where the chains allow it, so that a difference
// is the nodes' and not the requests';
// and the difference of their CPU profiles.

const fs = require('node:fs');
const path = require('node:path');
const { log } = require('../util/log');
const { profileOutcome } = require('../measure/profile');
const { profileDiff, writeDiffFlamegraph } = require('../report/profile-diff');

/** A pool's blocks, each with what it holds and its transactions (harvest.js lists them block by block). */
function blocksOf(pool) {
  let tx = 0;
  return pool.blocks.map((n, i) => {
    const contents = pool.block_contents[i];
    const count = contents ? Number(contents.split(':')[0]) : 0;
    const hashes = pool.tx_hashes.slice(tx, tx + count);
    tx += count;
    return { n, contents, hashes };
  });
}

/**
 * The two chains' blocks paired by what they hold (block_contents, harvest.js): each of A's blocks, in order, with
 * the first unpaired block of B that holds the same transactions (an empty block with an empty one). Two dev chains
 * made by the same steps may seal a round of their history into different blocks, and a block's transactions set what
 * reading it, its receipts and a log range over it cost: paired by number, one side's requests would be dearer.
 */
function pairBlocks(a, b) {
  const free = new Map(); // what a block holds -> B's blocks that hold it, in order
  for (const y of blocksOf(b)) {
    if (!y.contents) continue;
    if (!free.has(y.contents)) free.set(y.contents, []);
    free.get(y.contents).push(y);
  }
  const pairs = [];
  for (const x of blocksOf(a)) {
    const ys = x.contents && free.get(x.contents);
    if (ys && ys.length) pairs.push([x, ys.shift()]);
  }
  return pairs;
}

/** The fields of two pools that must agree: lists keep the items both hold (in A's order), the rest must be equal. */
function commonFields(a, b, skip) {
  const out = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (skip.includes(key)) continue;
    const [x, y] = [a[key], b[key]];
    if (Array.isArray(x) && Array.isArray(y)) {
      const inB = new Set(y.map((v) => JSON.stringify(v)));
      out[key] = x.filter((v) => inB.has(JSON.stringify(v)));
      if (x.length && !out[key].length) return null;
    } else if (JSON.stringify(x) === JSON.stringify(y)) {
      out[key] = x;
    } else if (key === 'head') {
      out[key] = Math.min(x, y);
    } else {
      return null;
    }
  }
  return out;
}

/**
 * A parameter pool for each side such that both send the same requests to chains that hold the same things: the
 * fields both pools hold (commonFields), and, where the pools say what their blocks hold, the blocks paired by their
 * transactions (pairBlocks): the i-th block of each side's pool holds what the other's i-th does, the transactions
 * are those of the paired blocks, and each pool's head is its highest paired block. Without what the blocks hold (a
 * Substrate chain), one pool of the items both hold, by number.
 * @returns {{a:object, b:object, left_out:number}|null} null when the pools cannot be made alike
 */
function alikePools(a, b) {
  const paired = Array.isArray(a.block_contents) && Array.isArray(b.block_contents);
  const common = commonFields(a, b, paired ? ['blocks', 'block_contents', 'tx_hashes', 'head'] : []);
  if (!common) return null;
  if (!paired) return { a: common, b: common, left_out: 0 };
  const pairs = pairBlocks(a, b);
  const side = (i) => {
    const blocks = pairs.map((p) => p[i]);
    return {
      ...common,
      head: Math.max(...blocks.map((x) => x.n)), // no log range of the pool starts above it
      blocks: blocks.map((x) => x.n),
      block_contents: blocks.map((x) => x.contents),
      tx_hashes: pairs.flatMap((p) => p[0].hashes), // the same transactions on both: A's list (capped by harvest.js)
    };
  };
  if (!pairs.length) return null;
  const out = { a: side(0), b: side(1), left_out: Math.max(a.blocks.length, b.blocks.length) - pairs.length };
  return a.tx_hashes.length && !out.a.tx_hashes.length ? null : out;
}

/** Gives each side its alike pool (its params.json, which every window's generator reads), or says why not. */
function shareParameterPool(A, B, warnings) {
  const files = [A, B].map((x) => path.join(x.reportDir, 'params.json'));
  const [a, b] = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  const pools = alikePools(a, b);
  if (!pools) {
    warnings.push(
      "the two chains' parameter pools differ (in a field, or in every block's transactions): each side draws from its own pool (a/params.json, b/params.json), with the same seed",
    );
    return false;
  }
  fs.writeFileSync(files[0], `${JSON.stringify(pools.a)}\n`);
  fs.writeFileSync(files[1], `${JSON.stringify(pools.b)}\n`);
  const blocks = pools.a.blocks ? ` (${pools.a.blocks.length} blocks` : '';
  const paired = pools.a.block_contents ? ', paired by the transactions they hold' : '';
  const left = pools.left_out ? `; ${pools.left_out} without a like block on the other chain left out` : '';
  log(`parameter pools alike on both sides: the items both chains hold${blocks}${blocks && `${paired}${left})`}`);
  return true;
}

/** NODE_PROFILE=cpu: each side's windows summarized (all of them merged), kept in its folder. */
function summarizeSideProfile(side) {
  const hooks = side.stack && side.stack.windowHooks;
  if (!hooks || !hooks.profiler) return;
  const { profile, warnings } = profileOutcome(hooks, side.reportDir);
  side.profile = profile;
  side.run.warnings.push(...warnings);
}

/** With profiles on both sides: the functions whose share changed most, and a differential flame graph in dir. */
function profileDifference(A, B, dir) {
  const diff = profileDiff(A.reportDir, { profile: A.profile }, B.reportDir, { profile: B.profile });
  if (!diff) return null;
  const fg = writeDiffFlamegraph(diff, dir);
  if (fg.file) diff.flamegraph = fg.file;
  else diff.flamegraph_error = fg.error;
  return diff;
}

module.exports = { alikePools, shareParameterPool, summarizeSideProfile, profileDifference };
