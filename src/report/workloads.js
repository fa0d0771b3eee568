'use strict';
// summary.md lines for the workloads of docs/workloads.md: a load shape, a
// replay, transactions (Ethereum writes, Substrate transfers) and subscriptions.

const n = (v, digits = 1) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(digits));

/** "- ..." lines for the "How it was measured" section; none for a plain mix. */
function workloadLines(run) {
  const lines = [];
  const shape = run.window && run.window.shape;
  if (shape) {
    const seg = shape.segments
      .map(
        (x) =>
          `${n(x.from_s)}-${n(x.to_s)} s: ${n(x.rps, 0)}/s offered${x.sent_rps === undefined ? '' : `, ${n(x.sent_rps, 1)}/s sent`}, ${n(x.achieved_rps, 1)}/s served`,
      )
      .join('; ');
    lines.push(`- Load shape ${shape.kind} inside the window (its figures cover all of it): ${seg}.`);
  }
  const r = run.generator && run.generator.replay;
  if (r) {
    lines.push(
      `- Replay of a capture of ${r.capture_requests} calls${r.capture_sha256 ? ` (sha256 ${r.capture_sha256.slice(0, 12)})` : ''} at REPLAY_SPEED=${r.speed}: ${r.sent_in_window} calls completed in the window; ${r.missing_on_target} asked for blocks, transactions or state this chain lacks (answered, not errors).`,
    );
  }
  const w = run.figures && run.figures.writes;
  if (w) {
    lines.push(
      `- Transactions: ${w.included} included in the window (${n(w.tps, 2)}/s) of ${w.submitted} submitted (${n(w.submitted_tps, 2)}/s), ${w.failed} failed; inclusion latency p50 ${n(w.inclusion_ms.p50, 0)} ms, p99 ${n(w.inclusion_ms.p99, 0)} ms.`,
    );
  }
  const s = run.figures && run.figures.subscriptions;
  if (s) {
    const kinds = Object.entries(s.subscriptions)
      .map(([k, c]) => `${c} ${k.slice(4)}`)
      .join(', ');
    const got = Object.entries(s.notifications)
      .map(([k, c]) => `${c} ${k.slice(4)}`)
      .join(', ');
    lines.push(
      `- Subscriptions held: ${kinds}; notifications in the window: ${got} (${n(s.notifications_per_s, 2)}/s) over ${Object.keys(s.heads_by_block).length} blocks; delay from the block's timestamp p50 ${n(s.delay_from_block_timestamp_ms.p50, 0)} ms, p99 ${n(s.delay_from_block_timestamp_ms.p99, 0)} ms (to within a second); spread between users p99 ${n(s.spread_ms.p99, 1)} ms.`,
    );
  }
  return lines;
}

module.exports = { workloadLines };
