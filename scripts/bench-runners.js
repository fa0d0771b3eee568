#!/usr/bin/env node
'use strict';
// npm run bench:runners [-- PAIRS]: the lean engine's CPU per request in
// chainperf's lean runner against artillery (LEAN_RUNNER=chainperf and
// LEAN_RUNNER=artillery), window for window, on the same geth --dev as
// `npm run bench` (node on core 0, the generator on the others, in the run's
// generator cgroup; 16 users in a closed loop sending eth_getBlockByNumber).
// Each pair is one window of each runner, back to back, their order
// alternating from pair to pair; per transport (BENCH_RUNNERS_TRANSPORTS,
// default "ws http") the ratio chainperf/artillery of the generator's CPU per
// request with its 95% interval over the PAIRS pairs (default 6; Student's t on
// the log ratios, as ./run.sh ab does). Each window: the pass started as far
// ahead as a run starts one (2 s for the runner, 6 s for artillery: both send
// about as long before the window), BENCH_WARM_S of warm-up, BENCH_MEASURE_S
// measured (bench-generators.js).
//
// The last line is key=value pairs for scripts:
//   <transport>_runner_over_artillery <transport>_runner_over_artillery_ci95
//   <transport>_runner_us_per_request <transport>_artillery_us_per_request pairs

const { pairedRatio } = require('../src/ab/stats');
const { median } = require('../src/stats');
const { log } = require('../src/util/log');
const { benchArtillery, WARM_S, MEASURE_S, CONNECTIONS } = require('./lib/bench-generators');
const { checkBenchMachine, startSyncedBenchNode, benchTarget } = require('./lib/bench-node');

const PAIRS = Math.max(2, Number(process.argv[2] || 6));
const TRANSPORTS = (process.env.BENCH_RUNNERS_TRANSPORTS || 'ws http').split(/[\s,]+/).filter(Boolean);
const RUNNERS = ['chainperf', 'artillery'];

/** PAIRS pairs over transport: [{chainperf: figures, artillery: figures}]. */
async function pairsOver(target, transport, workDir, poolFile) {
  const pairs = [];
  for (let k = 0; k < PAIRS; k++) {
    const order = k % 2 ? [...RUNNERS].reverse() : RUNNERS; // alternating: a drift does not favour one runner
    const pair = {};
    for (const runner of order)
      pair[runner] = await benchArtillery(target, 'lean', transport, workDir, poolFile, k, runner);
    pairs.push(pair);
    log(
      `${transport}, pair ${k + 1}/${PAIRS}: ${RUNNERS.map((r) => `${r} ${pair[r].us_per_request.toFixed(1)} us/request at ${pair[r].rps.toFixed(0)}/s`).join(', ')}`,
    );
  }
  return pairs;
}

/** The printed lines and key=value pairs of one transport. */
function summary(transport, pairs) {
  const us = (r) => median(pairs.map((p) => p[r].us_per_request));
  const ratio = pairedRatio(pairs.map((p) => ({ a: p.artillery.us_per_request, b: p.chainperf.us_per_request })));
  const ci = ratio.ci95.map((x) => x.toFixed(2)).join('-');
  console.log(
    `${transport.padEnd(5)} lean runner ${us('chainperf').toFixed(1)} us/request, artillery ${us('artillery').toFixed(1)} (medians); runner / artillery ${ratio.ratio.toFixed(2)} (95% interval ${ci} over ${ratio.n} pairs; per pair ${pairs.map((p) => (p.chainperf.us_per_request / p.artillery.us_per_request).toFixed(2)).join(', ')})`,
  );
  return {
    [`${transport}_runner_over_artillery`]: ratio.ratio.toFixed(2),
    [`${transport}_runner_over_artillery_ci95`]: ci,
    [`${transport}_runner_us_per_request`]: us('chainperf').toFixed(1),
    [`${transport}_artillery_us_per_request`]: us('artillery').toFixed(1),
  };
}

async function main() {
  checkBenchMachine();
  const bad = TRANSPORTS.filter((t) => t !== 'ws' && t !== 'http');
  if (bad.length || !TRANSPORTS.length) throw new Error(`BENCH_RUNNERS_TRANSPORTS: ws and/or http, not "${bad}"`);
  const { stack, stop, workDir, poolFile } = await startSyncedBenchNode('chainperf-bench-runners-');
  try {
    log(
      `lean runner against artillery: ${TRANSPORTS.join(' and ')}, ${PAIRS} pairs each, ${CONNECTIONS} users, node on cpus ${stack.node.cpus}, generator on cpus ${stack.generatorCpus}; windows of ${WARM_S} s warm-up + ${MEASURE_S} s measured`,
    );
    const kv = { pairs: PAIRS };
    for (const transport of TRANSPORTS)
      Object.assign(kv, summary(transport, await pairsOver(benchTarget(stack), transport, workDir, poolFile)));
    console.log(
      Object.entries(kv)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
    );
  } finally {
    await stop();
  }
}

if (require.main === module)
  main().catch((err) => {
    process.stderr.write(`bench:runners: ${err.message}\n`);
    process.exit(1);
  });

module.exports = { summary };
