'use strict';
// npm run bench:chain's parts at levels: import time and head lag at 0%, 50%
// and 100% of the saturated rate (the chain's work and the requests
// together), and catch-up after a pause with and without load.

const { runOnce, scenario } = require('./bench-chain-run');
const {
  windowFigures,
  catchUpFigures,
  medianOf,
  schedule,
  togetherRates,
  armsTable,
  armsKv,
  runLine,
  fmt,
  table,
} = require('./bench-chain-figures');

const LEVEL_KEYS = [
  'import_p50_ms',
  'import_p99_ms',
  'client_import_p50_ms',
  'client_import_p99_ms',
  'head_lag_s_p99',
  'head_lag_s_worst',
  'share_behind',
  'stale_answer_share',
  'cpu_ms_per_request',
  'cpu_ms_per_request_net_of_chain',
  'rps',
  'p99_ms',
  'blocks',
];

const LEVEL_LINE = ['rps', 'import_p50_ms', 'import_p99_ms', 'head_lag_s_worst', 'share_behind', 'cpu_ms_per_request'];

/** geth-dev.env on mainnet's traffic, host runtime, the lean generator: the keys every run of these parts shares. */
const chainEnv = (ctx, blockS) => ({
  RUNTIME: 'host',
  REPORTS_DIR: ctx.reports,
  CHAIN_LOAD: 'mainnet',
  DEV_BLOCK_TIME_S: String(blockS),
  GENERATOR: 'lean',
  WARMUP_S: String(ctx.k.warmupS),
  IDLE_S: String(ctx.k.idleS),
});

/** The saturated rate R of geth-dev.env under mainnet's traffic (p99 and errors its bounds, no head lag bound). */
async function saturatedRate(ctx) {
  const { k, extra } = ctx;
  if (k.rateR) {
    process.stdout.write(`together: R=${k.rateR} requests/s as given (BENCH_CHAIN_R), no saturation search\n`);
    return k.rateR;
  }
  const env = { ...chainEnv(ctx, k.blockS), SATURATE_STEP_S: String(k.satStepS), NAME: 'chain-saturate', ...extra };
  const r = await runOnce('together: saturation', ['saturate', scenario('geth-dev.env')], env, {
    unset: ['MAX_HEAD_LAG_S', 'RATE', 'CONCURRENCY'],
  });
  const sat = r.doc && r.doc.saturation;
  if (!sat) return null;
  const rows = sat.steps.map((s) => [
    fmt(s.target_rps, 0),
    fmt(s.achieved_rps, 0),
    fmt(s.p99_ms, 1),
    fmt(s.error_rate, 4),
    fmt(s.cpu_ms_per_request, 4),
    s.holds ? 'yes' : `no: ${(s.reasons || []).join('; ')}`,
  ]);
  process.stdout.write(
    `\ntogether: the saturation search (${r.dir}, ${r.seconds} s): R = ${fmt(sat.max_sustainable_target_rps, 0)} requests/s offered (${fmt(sat.max_sustainable_rps, 0)} answered)\n${table(['offered/s', 'answered/s', 'p99 ms', 'errors', 'CPU ms/request', 'holds'], rows)}\n\n`,
  );
  return sat.max_sustainable_target_rps;
}

/** Runs at 1 request/s ("0%": the chain's work alone), R/2 and R, interleaved, k.reps each: medians per level. */
async function together(ctx) {
  const { k, extra } = ctx;
  process.stderr.write(
    `bench:chain together: the saturated rate R of geth-dev.env under CHAIN_LOAD=mainnet at DEV_BLOCK_TIME_S=${k.blockS}, then ${k.reps} runs each at 1 request/s ("0%": the chain's work alone), R/2 and R, interleaved, one ${k.windowS} s window each\n`,
  );
  const R = await saturatedRate(ctx);
  if (!R) {
    process.stdout.write('together: no saturated rate (the search failed or no rate held): the levels are not run\n');
    return { failed: 1, kv: { together_failed: 1 } };
  }
  const rates = togetherRates(R);
  const byLevel = { 0: [], 50: [], 100: [] };
  let failed = 0;
  for (const { arm, rep } of schedule(['0', '50', '100'], k.reps)) {
    const label = `together ${arm}% (${rates[arm]} requests/s) #${rep}`;
    const env = {
      ...chainEnv(ctx, k.blockS),
      RATE: String(rates[arm]),
      DURATION_S: String(k.windowS),
      NAME: `chain-together-${arm}-${rep}`,
      ...extra,
    };
    const r = await runOnce(label, [scenario('geth-dev.env')], env, { unset: ['CONCURRENCY', 'MAX_HEAD_LAG_S'] });
    const f = r.ok ? windowFigures(r.doc) : null;
    if (!r.ok) failed++;
    else process.stdout.write(`${runLine(label, f, LEVEL_LINE)} (${r.dir}, ${r.seconds} s)\n`);
    byLevel[arm].push(f);
  }
  const arms = ['0', '50', '100'].map((l) => ({ name: `${l}%: ${rates[l]}/s`, kv: `l${l}`, records: byLevel[l] }));
  process.stdout.write(
    `\ntogether: R=${R} requests/s; ${k.reps} runs per level, ${failed} failed. At 0% (1 request/s) CPU per request is the chain's work over a handful of requests: read it as the chain's cost, not a request's.\n${armsTable(arms, LEVEL_KEYS)}\n\n`,
  );
  return {
    failed,
    kv: { together_r: R, together_reps: k.reps, together_failed: failed, ...armsKv('together', arms, LEVEL_KEYS) },
  };
}

const CATCH_UP_ROWS = [
  ['gap_blocks', 'gap at the restore, blocks', 1],
  ['seconds', 'catch-up seconds', 2],
  ['blocks', 'blocks imported meanwhile', 1],
  ['blocks_per_s', 'blocks/s while catching up', 2],
  ['stale_answers', "stale answers (the window's, FAULT_LOAD=on)", 0],
  ['stale_answer_share', 'stale answer share', 4],
];

/** FAULT=pause-node with FAULT_LOAD=on and off in turn, k.reps each: the catch-up's medians per arm. */
async function catchup(ctx) {
  const { k, extra } = ctx;
  process.stderr.write(
    `bench:chain catchup: geth-dev.env, CHAIN_LOAD=mainnet at DEV_BLOCK_TIME_S=${k.catchupBlockS}, FAULT=${k.fault}, FAULT_LOAD=on (lean at RATE=${k.catchupRate}) and off in turn, ${k.reps} runs each, ${k.catchupWindowS} s windows\n`,
  );
  const byArm = { on: [], off: [] };
  let failed = 0;
  for (const { arm, rep } of schedule(['on', 'off'], k.reps)) {
    const label = `catchup FAULT_LOAD=${arm} #${rep}`;
    const env = {
      ...chainEnv(ctx, k.catchupBlockS),
      FAULT: k.fault,
      FAULT_LOAD: arm,
      RATE: String(k.catchupRate),
      DURATION_S: String(k.catchupWindowS),
      NAME: `chain-catchup-${arm}-${rep}`,
      ...extra,
    };
    const r = await runOnce(label, [scenario('geth-dev.env')], env, { unset: ['CONCURRENCY', 'MAX_HEAD_LAG_S'] });
    const c = r.ok ? catchUpFigures(r.doc) : null;
    if (!c) failed++;
    if (r.ok && !c) process.stdout.write(`${label}: no catch-up in run.json (${r.dir})\n`);
    if (c)
      process.stdout.write(
        `${label}: ${c.caught_up ? 'caught up' : 'NOT caught up'}, gap ${fmt(c.gap_blocks, 0)} blocks, ${fmt(c.seconds, 2)} s, ${fmt(c.blocks_per_s, 2)} blocks/s, stale answers ${fmt(c.stale_answers, 0)} (${r.dir}, ${r.seconds} s)\n`,
      );
    byArm[arm].push(c);
  }
  const caught = (arm) => byArm[arm].filter((c) => c && c.caught_up).length;
  const rows = CATCH_UP_ROWS.map(([key, label, d]) => [
    label,
    ...['on', 'off'].map((a) => fmt(medianOf(byArm[a], key).median, d)),
  ]);
  rows.push(['caught up', ...['on', 'off'].map((a) => `${caught(a)} of ${byArm[a].filter(Boolean).length}`)]);
  process.stdout.write(
    `\ncatchup: ${k.reps} runs per arm, ${failed} failed; medians\n${table(['figure', 'FAULT_LOAD=on', 'FAULT_LOAD=off'], rows)}\n\n`,
  );
  const kv = { catchup_reps: k.reps, catchup_failed: failed };
  for (const a of ['on', 'off']) {
    for (const [key, , d] of CATCH_UP_ROWS) kv[`catchup_${key}_${a}`] = fmt(medianOf(byArm[a], key).median, d);
    kv[`catchup_caught_up_${a}`] = caught(a);
  }
  return { failed, kv };
}

module.exports = { together, catchup, LEVEL_KEYS };
