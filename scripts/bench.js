#!/usr/bin/env node
'use strict';
// npm run bench: what the load generator itself costs, against wrk as the
// reference, on a real geth --dev. The node is pinned to core 0 and each
// generator in turn to the other cores, in the run's generator cgroup.
//
// For each generator (wrk; ws-reference, a C client over WebSocket, and
// ws-node-floor, its loop in Node.js; chainperf's lean engine over HTTP and over WebSocket, with its own sockets and
// with the native sender (LEAN_SENDER=native); ethers through
// artillery, over HTTP and over WebSocket)
// and each repetition: warm up, then over a measured window read at both edges
// the generator cgroup's CPU counters and geth's own rpc_requests counter (a
// live counter, not a refreshed gauge). CPU per request = generator CPU /
// requests geth served in the window. Figures are medians over repetitions.
//
// Then the default run as a user runs it (geth-dev.env: artillery + ethers over
// HTTP, the default mix, BENCH_DEFAULT_REPEAT windows): its generator's CPU per
// request over the node's, window by window (the goal: at most 0.5).
// Then the repeatability of a run: REPEAT=5 windows of the default mix
// (geth-dev.env, lean engine, BENCH_CV_WINDOW_S windows after a
// BENCH_CV_WARM_S warm-up), and the CV of CPU time per request across them.
// Then the machine's floor for that CV: the same CPU-bound work timed in as
// many windows of the same length on the node's core (scripts/lib/cpu-floor.js),
// and the CV of the generator's own CPU per request over the repetitions (the
// same requests in each, on the other core: the machine's noise during the run).
// BENCH_CV_REPEAT=0 leaves them out.
//
// The last line is key=value pairs for scripts:
//   engine_us_per_request wrk_us_per_request ratio engine_max_rps engine_rps
//   wrk_rps ethers_us_per_request ethers_rps engine_ws_us_per_request
//   engine_ws_ratio engine_ws_max_rps engine_ws_rps ethers_ws_us_per_request
//   ethers_ws_rps cv_cpu_ms_per_request cv_repetitions cpu_floor_cv
//   cv_generator_us_per_request default_generator_us_per_request
//   default_node_us_per_request default_generator_over_node
//   ratio_per_repetition static_engine_rps static_engine_us_per_request
//   static_wrk_rps static_wrk_us_per_request static_ratio
//   static_ratio_per_repetition static_node_floor_us_per_request
//   static_node_floor_over_wrk static_engine_over_node_floor
//   ws_reference_us_per_request ws_reference_rps engine_ws_over_reference
//   engine_ws_over_reference_per_repetition
//   ws_node_floor_us_per_request ws_node_floor_over_reference engine_ws_over_node_floor
//   static_engine_ws_rps static_engine_ws_us_per_request static_ws_reference_rps
//   static_ws_reference_us_per_request static_ws_node_floor_us_per_request
//   static_engine_ws_over_reference static_engine_ws_over_reference_per_repetition
//   static_engine_ws_over_node_floor static_ws_node_floor_over_reference
//   native_us_per_request native_rps native_ratio native_ratio_per_repetition
//   native_ws_us_per_request native_ws_rps native_ws_ratio native_ws_over_reference
//   native_ws_over_reference_per_repetition static_native_rps static_native_us_per_request
//   static_native_ratio static_native_ws_rps static_native_ws_us_per_request
//   static_native_ws_over_reference
// (engine_* without ws are the lean engine over HTTP; engine_ws_ratio is
// against wrk, which speaks HTTP only, and engine_ws_over_reference against
// ws-reference, a WebSocket client in C that does over ws what wrk does over
// HTTP (scripts/lib/ws-reference.c): the same requests, the same number in
// flight on as many sockets as the lean engine's; ws_node_floor_* is that
// loop in Node.js (scripts/lib/ws-node-floor.js), with none of the engine's
// work: what Node.js alone costs; static_* are against a static
// JSON-RPC responder that one core of HAProxy serves faster than one
// generator core can send, scripts/lib/bench-static.js: what the lean engine
// sends from one core when the server is not the limit; static_node_floor_* is
// wrk's loop in Node.js against it, scripts/lib/http-node-floor.js; static_*ws*
// are the WebSocket generators against a static WebSocket responder in C,
// scripts/lib/bench-static-ws.js: each at its own core's limit; native_* are
// the lean engine with LEAN_SENDER=native, its requests sent by
// native-sender.c: native_ratio against wrk over HTTP, native_ws_over_reference
// against ws-reference over ws.)
// engine_max_rps is what one core could send at the measured CPU per request
// (1e6 / engine_us_per_request); engine_rps is the rate reached here, which
// the node (one core) may cap before the generator does.

const { ensureDebianTool } = require('../src/install/debian');
const { median } = require('../src/stats');
const { log } = require('../src/util/log');
const { sleep } = require('../src/util/time');
const { CV_REPEAT, cpuFloor, repeatability, defaultRun } = require('./lib/bench-repeat');
const { benchStatic } = require('./lib/bench-static');
const { benchStaticWs } = require('./lib/bench-static-ws');
const { checkBenchMachine, startSyncedBenchNode, benchTarget } = require('./lib/bench-node');
const {
  benchWrk,
  benchArtillery,
  waitTargetIdle,
  WARM_S,
  MEASURE_S,
  CONNECTIONS,
  WS_CONNECTIONS,
} = require('./lib/bench-generators');
const { ensureWsReference, benchWsReference, benchWsNodeFloor } = require('./lib/ws-reference');
const { ensureNativeSender } = require('../src/install/c-program');

const REPS = Number(process.env.BENCH_REPS || 3);

/** REPS rounds of every generator against the node, each its warm-up and measured window; results by generator. */
async function runGenerators(stack, { wrk, wsRef, sender }, workDir, poolFile) {
  const target = benchTarget(stack);
  const results = { wrk: [], ws_ref: [], ws_node: [], lean: [], lean_ws: [], native: [], native_ws: [] };
  Object.assign(results, { ethers: [], ethers_ws: [] });
  // Each generator near the reference it is compared with (geth's rate drifts over minutes, and a client's CPU per
  // request moves with the rate), in the reverse order every other repetition, so neither side of a ratio is always
  // the later one.
  const rounds = [
    ['wrk', () => benchWrk(target, wrk, workDir)],
    ['lean', (k) => benchArtillery(target, 'lean', 'http', workDir, poolFile, k)],
    ['native', (k) => benchArtillery(target, 'lean', 'http', workDir, poolFile, k, undefined, sender)],
    ['ethers', (k) => benchArtillery(target, 'ethers', 'http', workDir, poolFile, k)],
    ['ws_ref', () => benchWsReference(target, wsRef)],
    ['lean_ws', (k) => benchArtillery(target, 'lean', 'ws', workDir, poolFile, k)],
    ['native_ws', (k) => benchArtillery(target, 'lean', 'ws', workDir, poolFile, k, undefined, sender)],
    ['ws_node', () => benchWsNodeFloor(target)],
    ['ethers_ws', (k) => benchArtillery(target, 'ethers', 'ws', workDir, poolFile, k)],
  ];
  for (let k = 0; k < REPS; k++) {
    for (const [g, run] of k % 2 ? [...rounds].reverse() : rounds) {
      await waitTargetIdle(target);
      results[g].push(await run(k));
    }
    log(
      `repetition ${k + 1}/${REPS}: ${Object.entries(results)
        .map(([g, r]) => `${g} ${r[k].us_per_request.toFixed(1)} us/request at ${r[k].rps.toFixed(0)}/s`)
        .join(', ')}`,
    );
    await sleep(500);
  }
  return results;
}

/** The table of medians, one row per generator. */
function printTable(med) {
  process.stdout.write(
    '\ngenerator                  CPU us/request (median)   requests/s (median)   generator core busy\n',
  );
  const rows = [
    ['wrk', 'wrk (reference)'],
    ['ws_ref', `ws-reference (C, ${WS_CONNECTIONS} conn.)`],
    ['ws_node', 'ws-node-floor (Node.js)'],
    ['lean', 'chainperf lean, HTTP'],
    ['lean_ws', `chainperf lean, ws (${WS_CONNECTIONS} conn.)`],
    ['native', 'lean, native sender, HTTP'],
    ['native_ws', `lean, native sender, ws`],
    ['ethers', 'artillery + ethers, HTTP'],
    ['ethers_ws', 'artillery + ethers, ws'],
  ];
  for (const [g, label] of rows) {
    process.stdout.write(
      `${label.padEnd(27)}${med(g, 'us_per_request').toFixed(1).padStart(22)}${med(g, 'rps').toFixed(0).padStart(22)}${`${(med(g, 'cpu_utilization') * 100).toFixed(0)}%`.padStart(22)}\n`,
    );
  }
}

/** The closing key=value line. */
function keyValues(med, rep, floor, def, { results, statics, staticsWs }) {
  const engine = med('lean', 'us_per_request');
  const ref = med('wrk', 'us_per_request');
  const smed = (g, key) => median(statics[g].map((r) => r[key]));
  const wmed = (g, key = 'us_per_request') => median(staticsWs[g].map((r) => r[key]));
  return {
    engine_us_per_request: engine.toFixed(1),
    wrk_us_per_request: ref.toFixed(1),
    ratio: (engine / ref).toFixed(2),
    ratio_per_repetition: perRepetitionRatios(results),
    engine_max_rps: (1e6 / engine).toFixed(0),
    engine_rps: med('lean', 'rps').toFixed(0),
    wrk_rps: med('wrk', 'rps').toFixed(0),
    ethers_us_per_request: med('ethers', 'us_per_request').toFixed(1),
    ethers_rps: med('ethers', 'rps').toFixed(0),
    engine_ws_us_per_request: med('lean_ws', 'us_per_request').toFixed(1),
    engine_ws_ratio: (med('lean_ws', 'us_per_request') / ref).toFixed(2),
    ws_reference_us_per_request: med('ws_ref', 'us_per_request').toFixed(1),
    ws_reference_rps: med('ws_ref', 'rps').toFixed(0),
    engine_ws_over_reference: (med('lean_ws', 'us_per_request') / med('ws_ref', 'us_per_request')).toFixed(2),
    engine_ws_over_reference_per_repetition: results.lean_ws
      .map((r, k) => (r.us_per_request / results.ws_ref[k].us_per_request).toFixed(2))
      .join(','),
    ws_node_floor_us_per_request: med('ws_node', 'us_per_request').toFixed(1),
    ws_node_floor_over_reference: (med('ws_node', 'us_per_request') / med('ws_ref', 'us_per_request')).toFixed(2),
    engine_ws_over_node_floor: (med('lean_ws', 'us_per_request') / med('ws_node', 'us_per_request')).toFixed(2),
    engine_ws_max_rps: (1e6 / med('lean_ws', 'us_per_request')).toFixed(0),
    engine_ws_rps: med('lean_ws', 'rps').toFixed(0),
    ethers_ws_us_per_request: med('ethers_ws', 'us_per_request').toFixed(1),
    ethers_ws_rps: med('ethers_ws', 'rps').toFixed(0),
    cv_cpu_ms_per_request: rep === null ? 'n/a' : rep.cv.toFixed(4),
    cv_repetitions: CV_REPEAT,
    cpu_floor_cv: floor === null ? 'n/a' : floor.toFixed(4),
    cv_generator_us_per_request: rep === null || rep.generatorCv === null ? 'n/a' : rep.generatorCv.toFixed(4),
    default_generator_us_per_request: def === null ? 'n/a' : def.generator.toFixed(1),
    default_node_us_per_request: def === null ? 'n/a' : def.node.toFixed(1),
    default_generator_over_node: def === null ? 'n/a' : def.ratio.toFixed(3),
    static_engine_rps: smed('lean', 'rps').toFixed(0),
    static_engine_us_per_request: smed('lean', 'us_per_request').toFixed(1),
    static_wrk_rps: smed('wrk', 'rps').toFixed(0),
    static_wrk_us_per_request: smed('wrk', 'us_per_request').toFixed(1),
    static_ratio: (smed('lean', 'us_per_request') / smed('wrk', 'us_per_request')).toFixed(2),
    static_ratio_per_repetition: perRepetitionRatios(statics),
    static_node_floor_us_per_request: smed('node_floor', 'us_per_request').toFixed(1),
    static_node_floor_over_wrk: (smed('node_floor', 'us_per_request') / smed('wrk', 'us_per_request')).toFixed(2),
    static_engine_over_node_floor: (smed('lean', 'us_per_request') / smed('node_floor', 'us_per_request')).toFixed(2),
    static_engine_ws_rps: wmed('lean_ws', 'rps').toFixed(0),
    static_engine_ws_us_per_request: wmed('lean_ws').toFixed(1),
    static_ws_reference_rps: wmed('ws_ref', 'rps').toFixed(0),
    static_ws_reference_us_per_request: wmed('ws_ref').toFixed(1),
    static_ws_node_floor_us_per_request: wmed('ws_node').toFixed(1),
    static_engine_ws_over_reference: (wmed('lean_ws') / wmed('ws_ref')).toFixed(2),
    static_engine_ws_over_reference_per_repetition: staticsWs.lean_ws
      .map((r, k) => (r.us_per_request / staticsWs.ws_ref[k].us_per_request).toFixed(2))
      .join(','),
    static_engine_ws_over_node_floor: (wmed('lean_ws') / wmed('ws_node')).toFixed(2),
    static_ws_node_floor_over_reference: (wmed('ws_node') / wmed('ws_ref')).toFixed(2),
    ...nativeKeys(med, results, { statics, staticsWs }),
  };
}

/** The lean engine's CPU per request over wrk's, repetition by repetition (the spread of `ratio`). */
function perRepetitionRatios(results, g = 'lean', ref = 'wrk') {
  return results[g].map((r, k) => (r.us_per_request / results[ref][k].us_per_request).toFixed(2)).join(',');
}

/** The lean engine with LEAN_SENDER=native: over HTTP against wrk, over ws against ws-reference (and wrk). */
function nativeKeys(med, results, { statics, staticsWs }) {
  const us = (g) => med(g, 'us_per_request');
  const smed = (g, key) => median(statics[g].map((r) => r[key]));
  const wmed = (g, key = 'us_per_request') => median(staticsWs[g].map((r) => r[key]));
  return {
    native_us_per_request: us('native').toFixed(1),
    native_rps: med('native', 'rps').toFixed(0),
    native_ratio: (us('native') / us('wrk')).toFixed(2),
    native_ratio_per_repetition: perRepetitionRatios(results, 'native'),
    native_ws_us_per_request: us('native_ws').toFixed(1),
    native_ws_rps: med('native_ws', 'rps').toFixed(0),
    native_ws_ratio: (us('native_ws') / us('wrk')).toFixed(2),
    native_ws_over_reference: (us('native_ws') / us('ws_ref')).toFixed(2),
    native_ws_over_reference_per_repetition: perRepetitionRatios(results, 'native_ws', 'ws_ref'),
    static_native_rps: smed('native', 'rps').toFixed(0),
    static_native_us_per_request: smed('native', 'us_per_request').toFixed(1),
    static_native_ratio: (smed('native', 'us_per_request') / smed('wrk', 'us_per_request')).toFixed(2),
    static_native_ws_rps: wmed('native_ws', 'rps').toFixed(0),
    static_native_ws_us_per_request: wmed('native_ws').toFixed(1),
    static_native_ws_over_reference: (wmed('native_ws') / wmed('ws_ref')).toFixed(2),
  };
}

async function main() {
  checkBenchMachine();
  const wrk = await ensureDebianTool('wrk', 'wrk', log);
  const wsRef = await ensureWsReference();
  const sender = await ensureNativeSender(log);
  const { stack, stop, workDir, poolFile } = await startSyncedBenchNode('chainperf-bench-');
  try {
    log(
      `generator benchmark: eth_getBlockByNumber(0x1), ${CONNECTIONS} connections, node on cpus ${stack.node.cpus}, generator on cpus ${stack.generatorCpus}; ${REPS} x (${WARM_S} s warm-up + ${MEASURE_S} s measured)`,
    );
    const results = await runGenerators(stack, { wrk, wsRef, sender }, workDir, poolFile);
    const med = (g, key) => median(results[g].map((r) => r[key]));
    printTable(med);
    const nodeCpus = String(stack.node.cpus);
    const generatorCpus = String(stack.generatorCpus);
    await stop(); // the runs below start their own nodes
    const statics = await benchStatic({ reps: REPS, wrk, cpus: nodeCpus, generatorCpus, sender });
    const staticsWs = await benchStaticWs({ reps: REPS, cpus: nodeCpus, generatorCpus, wsRef, sender });
    const def = await defaultRun();
    const rep = await repeatability();
    const floor = await cpuFloor(nodeCpus);
    const kv = keyValues(med, rep, floor, def, { results, statics, staticsWs });
    process.stdout.write(
      `\n${Object.entries(kv)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}\n`,
    );
  } finally {
    await stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(1);
});
