#!/usr/bin/env node
'use strict';
// npm run bench:startup [-- RUNS]: what it costs to start a lean generator
// pass, with chainperf's lean runner and with artillery (LEAN_RUNNER). Each
// pass is started as chainperf starts one (the same script, spec and command),
// its first request due at once; a small JSON-RPC responder in this process
// notes when that request arrives. Printed for each runner, medians over RUNS
// (default 5) passes taken in turn: the wall time from the spawn to the first
// request, and the CPU the pass's process (all its threads) had used by then,
// from /proc/PID/stat. Then the pass is stopped. No node is needed.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { writePassFiles } = require('../src/workload/artillery');
const { passCommand } = require('../src/workload/pass-command');
const { readProcStat } = require('../src/measure/cpu');
const { median } = require('../src/stats');

const RUNS = Math.max(1, Number(process.argv[2] || 5));
const RUNNERS = ['chainperf', 'artillery'];

/** A JSON-RPC responder: answers every request with one result; resolves its port. */
function responder(onRequest) {
  const server = http.createServer((req, res) => {
    onRequest();
    req.resume();
    req.on('end', () => res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port })),
  );
}

/** One pass with `runner`: {wall_s, cpu_s} from its spawn to its first request. */
async function onePass(runner, dir, k) {
  let first = null;
  const { server: srv, port: p } = await responder(() => (first = first || Date.now()));
  const now = Date.now();
  const pool = path.join(dir, 'pool.json');
  fs.writeFileSync(pool, '{}');
  const spec = {
    rpc_url: `http://127.0.0.1:${p}/`,
    pool_file: pool,
    mix: { eth_blockNumber: 1 },
    timeout_ms: 5000,
    seed: k,
    start_at: now,
    end_at: now + 60000,
    samples_dir: null,
  };
  const scenario = { GENERATOR: 'lean', LEAN_RUNNER: runner, RATE: 20, RAMP_S: 0, WORKLOAD: 'method:eth_blockNumber' };
  const name = `${runner}-${k}`;
  const files = writePassFiles({ scenario, spec, dir, name, processor: null });
  const { argv, env } = passCommand(files.scriptFile, files.rawFile, files.specFile);
  const log = fs.openSync(files.logFile, 'w');
  const t0 = Date.now();
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', log, log], detached: true });
  fs.closeSync(log);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    while (!first) {
      if (child.exitCode !== null)
        throw new Error(`${runner}: the pass exited before its first request; see ${files.logFile}`);
      if (Date.now() - t0 > 60000) throw new Error(`${runner}: no request within 60 s; see ${files.logFile}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const s = readProcStat(child.pid);
    return { wall_s: (first - t0) / 1000, cpu_s: s.user_s + s.system_s };
  } finally {
    if (child.exitCode === null) process.kill(-child.pid, 'SIGKILL'); // the pass and its threads, whatever happened
    await exited;
    srv.close();
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-startup-'));
  const out = Object.fromEntries(RUNNERS.map((r) => [r, []]));
  for (let k = 1; k <= RUNS; k++)
    for (const runner of RUNNERS) {
      const r = await onePass(runner, dir, k); // a failure leaves dir and the pass's log in it
      out[runner].push(r);
      console.error(
        `pass ${k} of ${RUNS}, ${runner}: first request ${r.wall_s.toFixed(2)} s after the spawn, ${r.cpu_s.toFixed(2)} CPU-s by then`,
      );
    }
  fs.rmSync(dir, { recursive: true, force: true });
  const med = (runner, f) => median(out[runner].map((r) => r[f]));
  console.log(
    `lean generator start-up, medians of ${RUNS} passes each (spawn to first request; CPU of the pass's process by then):`,
  );
  for (const runner of RUNNERS)
    console.log(
      `  LEAN_RUNNER=${runner.padEnd(9)} ${med(runner, 'wall_s').toFixed(2)} s wall, ${med(runner, 'cpu_s').toFixed(2)} CPU-s (wall ${out[runner].map((r) => r.wall_s.toFixed(2)).join(', ')})`,
    );
  console.log(
    `  artillery / chainperf: ${(med('artillery', 'wall_s') / med('chainperf', 'wall_s')).toFixed(1)}x the wall, ${(med('artillery', 'cpu_s') / med('chainperf', 'cpu_s')).toFixed(1)}x the CPU`,
  );
}

main().catch((err) => {
  console.error(`bench:startup: ${err.message}`);
  process.exit(1);
});
