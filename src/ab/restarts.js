'use strict';
// AB_RESTART_PAIRS: both nodes restarted every so many pairs, so that a
// session samples node processes as well as windows. Two node processes of
// one configuration can differ in CPU per request by a few percent for their
// whole life (docs/results.md, A/B sessions), and pairs of windows of the same
// two processes cannot see it: their interval is that of these two processes.
// With restarts, each block of pairs between two restarts runs on a new pair
// of processes, and the interval is taken over the blocks' mean log ratios,
// the level that varies.

const { log } = require('../util/log');
const { warmBoth } = require('./sides');

const RESTARTABLE = ['host', 'compose'];

/** Why AB_RESTART_PAIRS cannot apply to these scenarios (a runtime that cannot restart its node), or null. */
function restartRefusal(a, b) {
  if (!a.AB_RESTART_PAIRS) return null;
  const cannot = [a, b].find((s) => !RESTARTABLE.includes(s.RUNTIME));
  return cannot
    ? `AB_RESTART_PAIRS=${a.AB_RESTART_PAIRS} restarts both nodes, which RUNTIME=${cannot.RUNTIME} cannot do (host and compose can); set AB_RESTART_PAIRS=0`
    : null;
}

/** AB_RESTART_PAIRS as the session applies it: unset, 1 where both runtimes can restart their nodes, else 0. */
function restartPairs(a, b) {
  if (a.AB_RESTART_PAIRS !== null && a.AB_RESTART_PAIRS !== undefined) return a.AB_RESTART_PAIRS;
  return [a, b].every((s) => RESTARTABLE.includes(s.RUNTIME)) ? 1 : 0;
}

/**
 * Once both nodes have started: AB_RESTART_PAIRS unset, and a side whose node cannot be restarted (a fleet of
 * replicas behind HAProxy): no restarts, and a warning; set, and such a side: an error before any pair.
 */
function settleRestarts(settings, sides, explicit, warnings) {
  const cannot = settings.restart_pairs ? sides.find((x) => !x.stack || !x.stack.restartNode) : null;
  if (!cannot) return settings.restart_pairs;
  const why = `node ${cannot.key} (${cannot.s.RUNTIME}${cannot.s.REPLICAS > 1 ? `, REPLICAS=${cannot.s.REPLICAS}` : ''}) cannot be restarted`;
  if (explicit) throw new Error(`AB_RESTART_PAIRS=${settings.restart_pairs}: ${why}`);
  warnings.push(
    `${why}: each side ran as one process for the whole session, and the intervals cover the windows of these two processes, not how processes of one configuration differ`,
  );
  return 0;
}

/**
 * Before pair k (from 1): the block it belongs to, and whether both nodes restart first: before every block, the first
 * too, so that no block runs on the processes that made the chain's history and harvest (they ran other work, and the
 * first pairs of sessions without that restart were the odd ones: docs/results.md).
 */
function blockOf(k, restartPairs) {
  if (!restartPairs) return { block: null, restart: false };
  const block = Math.floor((k - 1) / restartPairs);
  return { block, restart: (k - 1) % restartPairs === 0 };
}

/**
 * Restarts both nodes (same data, new processes), waits for each to be synced, and warms both up again. Each side's
 * stack has restartNode: settleRestarts made sure before the first pair. what: what runs next, for the log.
 */
async function restartBoth(sides, { signal, mode, block, per, what = null }) {
  const next = what || (per === 1 ? `pair ${block + 1} runs` : `block ${block + 1} (${per} pairs) runs`);
  for (const side of sides) {
    side.run.phase = 'restart';
    log(`${side.key}: restarting the node: ${next} on new processes (AB_RESTART_PAIRS=${per})`);
    await side.stack.restartNode(async () => {});
    await side.ctx.chain.waitForSync(side.stack.rpcUrl, { timeoutS: side.s.SYNC_TIMEOUT_S, signal, log });
  }
  await warmBoth(sides, signal, mode);
}

module.exports = { restartRefusal, restartPairs, settleRestarts, blockOf, restartBoth };
