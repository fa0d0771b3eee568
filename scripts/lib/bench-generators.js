'use strict';
// npm run bench: one generator's measured window against a target (geth, or
// the static responder of bench-static.js). A target is where the requests go
// and how many it served: {group (the generator's cgroup), rpcUrl, wsUrl,
// requests() (the target's own live counter)}. CPU per request = the
// generator cgroup's CPU over the window / the requests the target counted in
// it, both read at the window's two edges.

const fs = require('node:fs');
const path = require('node:path');
const { spawnInGroup } = require('../../src/platform/cgroup');
const { runArtillery, startupSOf } = require('../../src/workload/artillery');
const { sleepUntil } = require('../../src/util/time');
const { pollUntil } = require('../../src/util/poll');
const { LATE_START_MS } = require('../../src/measure/window');
const { log } = require('../../src/util/log');

const WARM_S = Number(process.env.BENCH_WARM_S || 2);
const MEASURE_S = Number(process.env.BENCH_MEASURE_S || 5);
const CONNECTIONS = 16;
const IDLE_LOOK_MS = 300;
const IDLE_MAX_S = 60;
// the lean engine over ws: 16 users on this many WebSockets
const WS_CONNECTIONS = Number(process.env.BENCH_WS_CONNECTIONS || 4);
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x1', false] });

/**
 * Reads generator CPU and the target's request count at both edges of [start, end]; `late` when no request reached
 * the target in the window's first LATE_START_MS (its generator was not sending yet: a run measures such a window
 * again, and so does benchArtillery). A window with no request at all has no figure: it throws.
 */
async function measureEdges(target, start, end) {
  await sleepUntil(start);
  const [c0, r0] = [target.group.cpu(), await target.requests()];
  await sleepUntil(start + LATE_START_MS);
  const early = await target.requests();
  await sleepUntil(end);
  const [c1, r1] = [target.group.cpu(), await target.requests()];
  const cpu = c1.total_s - c0.total_s; // cpuacct.usage: exact (the user/system counters are tick-sampled)
  const requests = r1 - r0;
  if (requests <= 0) throw Object.assign(new Error('the target counted no request in the window'), { late: true });
  return {
    late: early === r0,
    us_per_request: (cpu * 1e6) / requests,
    rps: requests / ((end - start) / 1000),
    cpu_utilization: cpu / ((end - start) / 1000),
  };
}

/**
 * Waits until the target serves no request with no generator sending: what a generator left queued in the node when it
 * was killed would be served, and counted, in the next one's window. Its counter is looked at every IDLE_LOOK_MS, for
 * at most maxS; says so when it had to wait, and how long.
 */
async function waitTargetIdle(target, maxS = IDLE_MAX_S) {
  let [before, looks] = [null, 0];
  const look = async () => {
    const now = await target.requests();
    const done = now === before;
    [before, looks] = [now, looks + 1];
    return { done, state: `its counter at ${now}` };
  };
  const { seconds } = await pollUntil(look, {
    timeoutS: maxS,
    intervalMs: IDLE_LOOK_MS,
    label: 'waiting for the node to serve what the last generator left',
    log,
    failMessage: (last) => `the node still served requests ${maxS} s after the last generator stopped (${last})`,
  });
  if (looks > 2) log(`the node served requests for ${seconds.toFixed(1)} s after the last generator stopped`);
}

/**
 * A native generator (wrk, ws-reference) run in the generator's cgroup for its warm-up and the measured window,
 * then killed. It must still be running at the window's end: one that exited early fails with its stderr.
 */
async function benchProcess(target, argv) {
  const t0 = Date.now();
  const child = spawnInGroup(target.group, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.once('exit', r));
  const start = t0 + 500 + WARM_S * 1000;
  try {
    const figures = await measureEdges(target, start, start + MEASURE_S * 1000);
    if (child.exitCode !== null)
      throw new Error(`${path.basename(argv[0])} exited with status ${child.exitCode}: ${stderr.trim()}`);
    return figures;
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/** wrk, one thread, CONNECTIONS connections, posting BODY. */
function benchWrk(target, wrk, workDir) {
  const lua = path.join(workDir, 'post.lua');
  fs.writeFileSync(
    lua,
    `wrk.method = "POST"\nwrk.body = '${BODY}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  const seconds = WARM_S + MEASURE_S + 2;
  return benchProcess(target, [wrk, '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', lua, target.rpcUrl]);
}

/**
 * artillery with GENERATOR=generator over transport, a closed loop of CONNECTIONS users sending BODY's call; the lean
 * generator in the runner `runner` (LEAN_RUNNER; its default when not given), its requests sent by the native sender
 * at path `sender` when given (LEAN_SENDER=native). Each pass is started as far ahead as a
 * run starts one of its kind (startupSOf): its users send about as long before the warm-up whatever the runner, so the
 * node has been under load about as long when the window opens.
 */
async function benchArtillery(target, generator, transport, workDir, poolFile, k, runner = undefined, sender = null) {
  const base = startupSOf({ GENERATOR: generator, ...(runner ? { LEAN_RUNNER: runner } : {}) });
  for (let startupS = base; ; startupS *= 2) {
    const what = `${generator}${sender ? '-native' : ''}-${transport}${runner ? `-${runner}` : ''}`;
    const name = `${what}-${k}${startupS > base ? `-${startupS}s` : ''}`;
    const opts = { workDir, poolFile, name, startupS, runner, sender };
    const figures = await artilleryWindow(target, generator, transport, opts).catch((err) => {
      if (!err.late || startupS >= base * 4) throw err;
      return { late: true };
    });
    if (!figures.late) return figures;
    if (startupS >= base * 4)
      throw new Error(
        `${generator} over ${transport}: its generator was not sending when the window opened, three times`,
      );
    log(
      `${name}: its generator was not sending when the window opened (a busy machine): measured again with ${startupS * 2} s to start`,
    );
  }
}

/** One window of artillery with GENERATOR=generator, started startupS before its warm-up. */
async function artilleryWindow(target, generator, transport, { workDir, poolFile, name, startupS, runner, sender }) {
  const start = Date.now() + (startupS + WARM_S) * 1000;
  const end = start + MEASURE_S * 1000;
  const scenario = {
    GENERATOR: generator,
    TRANSPORT: transport,
    CONCURRENCY: CONNECTIONS,
    RATE: null,
    RAMP_S: 0,
    WORKLOAD: 'method:eth_getBlockByNumber',
    ...(runner ? { LEAN_RUNNER: runner } : {}),
    ...(sender ? { LEAN_SENDER: 'native' } : {}),
  };
  const spec = {
    rpc_url: transport === 'ws' ? target.wsUrl : target.rpcUrl,
    transport,
    ws_connections: WS_CONNECTIONS,
    pool_file: poolFile,
    mix: { eth_getBlockByNumber: 1 },
    timeout_ms: 10000,
    seed: 1,
    start_at: start,
    end_at: end,
    samples_dir: null,
    ...(sender ? { native_sender: sender } : {}),
  };
  const run = runArtillery({
    scenario,
    spec,
    dir: workDir,
    name,
    processor: require.resolve('../../src/workload/processors/ethereum'),
    group: target.group,
  });
  // a window without figures still waits for its generator to end: it must not send into the next attempt's window
  const figures = await measureEdges(target, start, end).catch(async (err) => {
    await run;
    throw err;
  });
  const r = await run;
  if (r.code !== 0)
    throw new Error(`artillery (${generator} over ${transport}) exited with status ${r.code}; see ${r.logFile}`);
  return figures;
}

module.exports = {
  benchWrk,
  benchArtillery,
  benchProcess,
  measureEdges,
  waitTargetIdle,
  WARM_S,
  MEASURE_S,
  CONNECTIONS,
  WS_CONNECTIONS,
  BODY,
};
