#!/usr/bin/env node
'use strict';
// npm run bench:lag-check: what the lag-aware health check (LB_LAG_CHECK)
// changes for the clients of a fleet whose replica falls behind the chain.
// Nothing else should run on the machine.
//
// Each run: scenarios/geth-dev.env (the default Ethereum mix, eth_blockNumber
// in it) on the host runtime, 2 replicas behind HAProxy on a network of 1 node,
// the lean generator, FAULT=pause-node@5s:10s (the last replica cut from the
// chain 5 s into the window for 10 s, serving meanwhile), MAX_HEAD_LAG_S=
// BENCH_LAG_BOUND_S; LB_LAG_CHECK on and off in turn (on, off, on, ...),
// BENCH_LAG_REPS runs each. Per run it prints the backwards answers (an answer
// naming a block lower than one the same client had already seen) and the
// stale answers (older than the network's head), count and share, the failed
// requests, the seconds the lag check drained the paused replica and its
// catch-up; then each arm's medians and their ratio (on / off).
// BENCH_LAG_ENV adds keys to every run (KEY=value ...). The last line is
// key=value pairs for scripts.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { median } = require('../src/stats');
const { parseKv, kvLine } = require('./lib/kv');
const { runSh: runShowing, fmt } = require('./lib/run-sh');

const ROOT = path.join(__dirname, '..');
const REPS = Math.max(1, Number(process.env.BENCH_LAG_REPS || 3));
const WINDOW_S = Number(process.env.BENCH_LAG_WINDOW_S || 25);
const BOUND_S = Number(process.env.BENCH_LAG_BOUND_S || 2);
const FAULT = 'pause-node@5s:10s';

const runSh = (args, env) => runShowing(args, env, /lag check: |FAULT: |done: |failed/);

/** One run's figures from its run.json. */
function figuresOf(run) {
  const k = (run.node && run.node.network && run.node.network.keep_up) || {};
  const back = k.backwards_answers || {};
  const stale = k.stale_answers || {};
  const lc = run.node && run.node.fleet && run.node.fleet.lag_check;
  const paused = run.fault ? run.fault.node : null;
  const drained = lc ? lc.replicas.find((r) => r.replica === paused) : null;
  const catchUp = run.fault && run.fault.catch_up;
  return {
    status: run.status,
    backwards: back.count ?? null,
    backwards_share: back.share ?? null,
    of: back.of ?? null,
    stale: stale.count ?? null,
    stale_share: stale.share ?? null,
    failed: run.figures ? run.figures.requests_failed : null,
    rps: run.figures ? run.figures.rps : null,
    drained_s: drained ? drained.drained_s : null,
    catch_up_s: catchUp ? catchUp.seconds : null,
  };
}

async function oneRun(reports, lagCheck, i, extra) {
  const env = {
    RUNTIME: 'host',
    REPORTS_DIR: reports,
    REPLICAS: '2',
    NETWORK_NODES: '1',
    GENERATOR: 'lean',
    FAULT,
    MAX_HEAD_LAG_S: String(BOUND_S),
    LB_LAG_CHECK: lagCheck,
    DURATION_S: String(WINDOW_S),
    WARMUP_S: '5',
    IDLE_S: '2',
    NAME: `lag-check-${lagCheck}-${i}`,
    ...extra,
  };
  const { dir } = await runSh([path.join(ROOT, 'scenarios', 'geth-dev.env')], env);
  const f = figuresOf(JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')));
  process.stdout.write(
    `LB_LAG_CHECK=${lagCheck} #${i}: ${f.status}; backwards ${f.backwards} of ${f.of} (${fmt(pct(f.backwards_share), 3)}%), stale ${f.stale} (${fmt(pct(f.stale_share), 2)}%), failed ${f.failed}, ${fmt(f.rps, 0)} requests/s; paused replica drained ${fmt(f.drained_s, 1)} s, caught up in ${fmt(f.catch_up_s, 1)} s (${dir})\n`,
  );
  return f;
}

/** A share in percent; null stays null (fmt prints n/a, not 0). */
const pct = (x) => (x === null || x === undefined ? null : x * 100);

/** Each arm's median of a figure, and on / off. */
function compare(byArm, key) {
  const m = (arm) => median(byArm[arm].map((f) => f[key]).filter((x) => x !== null && x !== undefined));
  const on = m('on');
  const off = m('off');
  return { on, off, ratio: on !== null && off ? on / off : null };
}

async function main() {
  const extra = parseKv(process.env.BENCH_LAG_ENV || '', 'BENCH_LAG_ENV');
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-lag-check-'));
  process.stderr.write(
    `bench:lag-check: ${REPS} runs with LB_LAG_CHECK=on and ${REPS} with off, alternating; REPLICAS=2, FAULT=${FAULT}, MAX_HEAD_LAG_S=${BOUND_S}, ${WINDOW_S} s windows\n`,
  );
  const byArm = { on: [], off: [] };
  for (let i = 1; i <= REPS; i++)
    for (const arm of ['on', 'off']) byArm[arm].push(await oneRun(reports, arm, i, extra));
  const figures = { reps: REPS };
  for (const [key, d] of [
    ['backwards', 0],
    ['backwards_share', 5],
    ['stale', 0],
    ['stale_share', 4],
    ['failed', 0],
  ]) {
    const c = compare(byArm, key);
    process.stdout.write(
      `median ${key}: on ${fmt(c.on, d)}, off ${fmt(c.off, d)}, on/off ${fmt(c.ratio, 3)} (${REPS} runs each)\n`,
    );
    figures[`${key}_on`] = fmt(c.on, d);
    figures[`${key}_off`] = fmt(c.off, d);
    figures[`${key}_ratio`] = fmt(c.ratio, 3);
  }
  process.stdout.write(`reports: ${reports}\n`);
  process.stdout.write(`${kvLine(figures)}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench:lag-check: ${err.message}\n`);
  process.exit(1);
});
