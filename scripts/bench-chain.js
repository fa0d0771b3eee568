#!/usr/bin/env node
'use strict';
// npm run bench:chain: a node on a chain that moves (CHAIN_LOAD=mainnet, docs/chain-load.md). Nothing else should run
// on the machine. Every run is on the host runtime, one measured window, its report kept under a temporary folder
// printed at the start; a run that fails is said, counted, and left out. Four parts (BENCH_CHAIN_PARTS, default all):
//
// engines   scenarios/leveldb.env (A) against scenarios/pebble.env (B) with CHAIN_LOAD=mainnet, STATE=large,
//           MEMORY_MB=1536 (below the 2.4 GiB database), the lean generator at a modest rate, in runs A, B, A, B, ...
//           (BENCH_CHAIN_PAIRS pairs): per engine the medians of disk bytes read and written per block and per
//           request, import p50/p99 (the driver's and the client's), head lag, CPU per request (gross, net of the
//           chain); B/A over the pairs with its 95% interval. LevelDB's STATE=large is not built until a run first
//           needs it: the first leveldb run builds it (a few minutes, progress shown), then it is cached.
// peers     ./run.sh ab scenarios/peers-4.env scenarios/peers-50.env with CHAIN_LOAD=mainnet: ab's B/A of CPU per
//           request with its interval, and each side's import time and head lag over its windows.
// together  ./run.sh saturate scenarios/geth-dev.env under CHAIN_LOAD=mainnet (p99 and errors its bounds, no head lag
//           bound) finds the saturated rate R; then runs at 1 request/s ("0%": the chain's work alone), R/2 and R,
//           interleaved, BENCH_CHAIN_REPS each: per level the medians of import time, head lag, stale answers, CPU.
// catchup   scenarios/geth-dev.env with CHAIN_LOAD=mainnet and FAULT=pause-node@10s:60s, FAULT_LOAD=on (the workload
//           running) and off in turn, BENCH_CHAIN_REPS each: the medians of the gap, the catch-up's seconds and rate.
//
// Knobs (environment): BENCH_CHAIN_WINDOW_S (60: engines, together), BENCH_CHAIN_WARMUP_S (20), BENCH_CHAIN_IDLE_S
// (10), BENCH_CHAIN_BLOCK_S (4: mainnet's gas per second in 10M-gas blocks; engines, peers, together),
// BENCH_CHAIN_PAIRS (3), BENCH_CHAIN_REPS (3), BENCH_CHAIN_STATE (large), BENCH_CHAIN_MEMORY_MB (1536),
// BENCH_CHAIN_ENGINES_RATE (50), BENCH_CHAIN_AB_WINDOW_S (30), BENCH_CHAIN_AB_MIN (10: minutes of pairs),
// BENCH_CHAIN_R (the saturated rate, given: no search), BENCH_CHAIN_SAT_STEP_S (10), BENCH_CHAIN_CATCHUP_BLOCK_S (2),
// BENCH_CHAIN_FAULT (pause-node@10s:60s), BENCH_CHAIN_CATCHUP_WINDOW_S (90), BENCH_CHAIN_CATCHUP_RATE (500).
// BENCH_CHAIN_ENV adds keys to every run (KEY=value ...). The last line is key=value pairs for scripts; the exit status
// is 1 when a run failed (every figure printed first), 2 for a knob it cannot read.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseKv, kvLine } = require('./lib/kv');
const { engines, peers } = require('./lib/bench-chain-pairs');
const { together, catchup } = require('./lib/bench-chain-levels');

const PARTS = { engines, peers, together, catchup };

/** A whole number of the environment (def when unset), at least min; a bad one is an error naming the variable. */
function whole(name, def, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name}: expected a whole number of at least ${min}, got "${raw}"`);
  return n;
}

/** The knobs, read once. */
function knobs() {
  return {
    windowS: whole('BENCH_CHAIN_WINDOW_S', 60),
    warmupS: whole('BENCH_CHAIN_WARMUP_S', 20, 0),
    idleS: whole('BENCH_CHAIN_IDLE_S', 10, 0),
    blockS: whole('BENCH_CHAIN_BLOCK_S', 4),
    pairs: whole('BENCH_CHAIN_PAIRS', 3),
    reps: whole('BENCH_CHAIN_REPS', 3),
    state: process.env.BENCH_CHAIN_STATE || 'large',
    memoryMb: whole('BENCH_CHAIN_MEMORY_MB', 1536, 64),
    enginesRate: whole('BENCH_CHAIN_ENGINES_RATE', 50),
    abWindowS: whole('BENCH_CHAIN_AB_WINDOW_S', 30),
    abMin: whole('BENCH_CHAIN_AB_MIN', 10),
    rateR: whole('BENCH_CHAIN_R', 0, 0),
    satStepS: whole('BENCH_CHAIN_SAT_STEP_S', 10),
    catchupBlockS: whole('BENCH_CHAIN_CATCHUP_BLOCK_S', 2),
    fault: process.env.BENCH_CHAIN_FAULT || 'pause-node@10s:60s',
    catchupWindowS: whole('BENCH_CHAIN_CATCHUP_WINDOW_S', 90),
    catchupRate: whole('BENCH_CHAIN_CATCHUP_RATE', 500),
  };
}

/** BENCH_CHAIN_PARTS's parts, in the order given; an unknown one is an error listing the parts. */
function partsToRun() {
  const names = (process.env.BENCH_CHAIN_PARTS || Object.keys(PARTS).join(' ')).split(/[\s,]+/).filter(Boolean);
  const bad = names.filter((n) => !PARTS[n]);
  if (bad.length)
    throw new Error(
      `BENCH_CHAIN_PARTS: unknown part ${bad.join(', ')}; the parts are ${Object.keys(PARTS).join(', ')}`,
    );
  return names;
}

async function main() {
  const k = knobs();
  const names = partsToRun();
  const extra = parseKv(process.env.BENCH_CHAIN_ENV || '', 'BENCH_CHAIN_ENV');
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-chain-'));
  process.stderr.write(`bench:chain: parts ${names.join(', ')}; the reports go under ${reports}\n`);
  process.stdout.write(`reports: ${reports}\n`);
  const figures = {};
  let failed = 0;
  for (const name of names) {
    const t0 = Date.now();
    const r = await PARTS[name]({ k, reports, extra });
    const seconds = Math.round((Date.now() - t0) / 1000);
    process.stdout.write(`${name}: ${seconds} s, ${r.failed} failed\n`);
    failed += r.failed;
    Object.assign(figures, r.kv, { [`${name}_seconds`]: seconds });
  }
  figures.failed = failed;
  process.stdout.write(`reports: ${reports}\n`);
  process.stdout.write(`${kvLine(figures)}\n`);
  return failed;
}

main()
  .then((failed) => {
    if (failed) process.exitCode = 1;
  })
  .catch((err) => {
    process.stderr.write(`bench:chain: ${err.message}\n`);
    process.exit(err.message.startsWith('BENCH_CHAIN_') ? 2 : 1);
  });
