'use strict';
// What the two sides of an A/B session share: one parameter pool, where the
// chains allow it, so that a difference is the nodes' and not the requests';
// and the difference of their CPU profiles.

const fs = require('node:fs');
const path = require('node:path');
const { log } = require('../util/log');
const { profileOutcome } = require('../measure/profile');
const { profileDiff, writeDiffFlamegraph } = require('../report/profile-diff');

/**
 * One parameter pool for both sides where their chains allow it: every list keeps the items both pools hold
 * (in A's order), every other field must be equal. Two dev chains made by the same steps differ only in a
 * block or two of their head; without this, one side would ask for a block the other does not have in its
 * pool, and the windows would not send the same requests. Returns null (each side keeps its own pool) when a
 * field differs or a list would be left empty.
 */
function commonPool(a, b) {
  const out = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
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

/** Gives both sides the common pool (their params.json, which every window's generator reads), or says why not. */
function shareParameterPool(A, B, warnings) {
  const files = [A, B].map((x) => path.join(x.reportDir, 'params.json'));
  const [a, b] = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  const pool = commonPool(a, b);
  if (!pool) {
    warnings.push(
      "the two chains' parameter pools differ beyond their heads: each side draws from its own pool (a/params.json, b/params.json), with the same seed",
    );
    return false;
  }
  for (const f of files) fs.writeFileSync(f, `${JSON.stringify(pool)}\n`);
  log(
    `one parameter pool for both sides: the items both chains hold${pool.blocks ? ` (${pool.blocks.length} blocks)` : ''}`,
  );
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

module.exports = { commonPool, shareParameterPool, summarizeSideProfile, profileDifference };
