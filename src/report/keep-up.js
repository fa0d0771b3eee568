'use strict';
// NETWORK_NODES in summary.md: whether the node kept up with the network's
// head while it served (head lag, import times, stale and backwards answers),
// the blocks the network made, a fault's catch-up, and what a fleet's lag
// check (LB_LAG_CHECK) did with the replicas that lagged.

const { num } = require('./format');

const ms = (x) => (x === null || x === undefined ? 'n/a' : `${num(x, 1)} ms`);

/** Head lag over the window: percentiles, the share behind, the worst look. */
function lagLine(lag, who = 'the node') {
  if (!lag.samples) return `- Head lag of ${who}: no look at its head was answered in the window.`;
  const w = lag.worst;
  return `- Head lag of ${who} (${lag.samples} looks, every ${lag.period_ms} ms): ${num(lag.share_behind * 100, 1)}% of looks one block or more behind; p50 ${lag.blocks.p50} blocks / ${num(lag.seconds.p50, 2)} s, p99 ${lag.blocks.p99} / ${num(lag.seconds.p99, 2)} s, worst ${w.blocks} blocks / ${num(w.seconds, 2)} s at ${new Date(w.at_ms).toISOString()}.`;
}

/** Import times as the driver saw them, and the client's own where it logs them. */
function importLine(imp) {
  const own = imp.client
    ? `; the client's own (${imp.client.blocks} blocks): p50 ${ms(imp.client.p50_ms)}, p99 ${ms(imp.client.p99_ms)}, max ${ms(imp.client.max_ms)}`
    : '';
  const notValid = imp.not_valid
    ? `; ${imp.not_valid} blocks answered other than VALID (SYNCING: the node lacked their parent or, with BLOCK_DELIVERY=head, was handed the head alone and fetched the block from its peers)`
    : '';
  return `- Block import time (${imp.blocks} blocks, engine API as the driver saw it): p50 ${ms(imp.p50_ms)}, p99 ${ms(imp.p99_ms)}, max ${ms(imp.max_ms)}${own}${notValid}.`;
}

/** Answers that named the head: stale ones, and ones gone backwards for their client. */
function answerLines(k) {
  const lines = [];
  const st = k.stale_answers;
  if (st && st.of)
    lines.push(
      `- Stale answers: ${st.count} of ${st.of} answers naming the head (${num(st.share * 100, 2)}%) named a block older than the network's head when they arrived (at most ${st.most_blocks_behind} blocks older).`,
    );
  const back = k.backwards_answers;
  if (back && back.of)
    lines.push(
      `- Backwards answers: ${back.count} of ${back.of} (${num(back.share * 100, 2)}%) named a block lower than one the same client had already seen.`,
    );
  return lines;
}

/** The lines for a window's node.network.keep_up and chain (none without them). */
function keepUpLines(w) {
  if (!w || !w.keep_up) return [];
  const k = w.keep_up;
  const lines = [lagLine(k.head_lag), importLine(k.import_ms), ...answerLines(k)];
  for (const r of k.by_replica || []) lines.push(`  ${lagLine(r.head_lag, r.replica).slice(2)}`);
  const cl = w.chain_load;
  if (cl)
    lines.push(
      `- Chain load (CHAIN_LOAD=${cl.profile}, ${num(cl.target_gas_per_block / 1e6, 2)}M gas a block every ${cl.block_time_s} s): the feed sent ${num(cl.tx_per_s, 1)} transactions a second of the ${num(cl.aimed_tx_per_s, 1)} it aimed at; its blocks held ${cl.gas_per_block ? `${num(cl.gas_per_block.mean / 1e6, 2)}M gas on average (median ${num(cl.gas_per_block.median / 1e6, 2)}M, 10th to 90th percentile ${num(cl.gas_per_block.p10 / 1e6, 2)}M to ${num(cl.gas_per_block.p90 / 1e6, 2)}M, ${cl.gas_per_block.blocks} blocks)` : 'nothing seen'}; ${cl.within_5pct ? 'within 5% of the profile' : '**more than 5% off the profile**'}; the feed's own CPU ${num(cl.feed_cores, 3)} cores (its process, on the network's cores).`,
    );
  const c = w.chain;
  if (c && c.blocks)
    lines.push(
      `- The network's blocks in the window: ${c.blocks}, gas used per block mean ${num(c.gas_used.mean, 0)} (median ${num(c.gas_used.median, 0)}, min ${num(c.gas_used.min, 0)}, max ${num(c.gas_used.max, 0)}) of a ${num(c.gas_limit, 0)} gas limit, ${num(c.txs_per_block, 1)} transactions per block.`,
    );
  return lines;
}

/** FAULT=pause-node: the cut, the restore and the catch-up (run.fault). */
function faultLines(f) {
  if (!f || f.kind !== 'pause-node') return [];
  const when = f.load === 'on' ? 'in the measured window, the workload running' : 'after the windows, with no load';
  const lines = [
    `- FAULT=pause-node (${when}): ${f.node} cut from the chain at ${new Date(f.cut_ms).toISOString()} (network at block ${f.head_at_cut}; ${f.peers_dropped} peers dropped it) for ${f.for_s} s; handed the network's head (block ${f.head_at_restore}) again at ${new Date(f.restored_ms).toISOString()}, answered ${f.restore_status}.`,
  ];
  if (f.in_window_set_aside)
    lines.push(
      '- **The pause fell in a window attempt set aside** (measured again: its generator started late): the window kept has no pause; the stale answers and head lag of the pause are not in it.',
    );
  const c = f.catch_up;
  if (!c) lines.push("- Catch-up: not measured (no look at the node's head around its restore).");
  else if (c.caught_up)
    lines.push(
      `- Catch-up: ${c.gap_blocks} blocks behind at the restore; at the network's head ${num(c.seconds, 2)} s later, ${c.blocks} blocks imported meanwhile (${num(c.blocks_per_s, 1)} blocks per second).`,
    );
  else
    lines.push(
      `- **Catch-up not done**: ${c.gap_blocks} blocks behind at the restore, ${c.blocks} blocks imported in the ${num(c.seconds, 1)} s waited (up to ${c.waited_up_to_s} s), still behind the network's head.`,
    );
  return lines;
}

const at = (ms) => new Date(ms).toISOString();

/**
 * LB_LAG_CHECK in a window (node.fleet.lag_check; fleet.lag_check, the run's, for the bound): each change of a
 * replica's agent's answer, and how long each replica was drained.
 */
function lagCheckLines(run) {
  const fl = run.fleet && run.fleet.lag_check;
  const w = run.node && run.node.fleet && run.node.fleet.lag_check;
  if (!fl || !w) return [];
  const what = `- Lag check (LB_LAG_CHECK=on, MAX_HEAD_LAG_S=${fl.bound_s} s): ${fl.agent}; it answers ${fl.answers}.`;
  return [what, ...lagCheckWindowLines(w)];
}

/** node.fleet.lag_check: the answers in the window, each change, each replica's time drained. */
function lagCheckWindowLines(w) {
  const asked = w.replicas.map((r) => `${r.replica} ${r.answers}`).join(', ');
  const head = `- Lag check (LB_LAG_CHECK): HAProxy asked each replica's agent every second (${asked} times in the window)`;
  if (!w.changes.length)
    return [
      `${head}; no agent's answer changed in the window: no replica drained for a head lag over MAX_HEAD_LAG_S=${w.bound_s} s.`,
    ];
  const drained = w.replicas
    .filter((r) => r.drained_s > 0)
    .map((r) => `${r.replica} ${num(r.drained_s, 1)} s`)
    .join(', ');
  return [
    `${head}; out of rotation by the lag check: ${drained || 'none'} of the window.`,
    ...w.changes.map(
      (c) =>
        `  - ${c.replica}: ${c.answer === 'drain' ? '**drained**' : 'ready again'} at ${at(c.at_ms)} (${c.reason}).`,
    ),
  ];
}

module.exports = { keepUpLines, faultLines, lagCheckLines };
