'use strict';
// npm run bench's static-responder part: how many requests per second the
// lean engine sends from one core when the server is not the limit. The
// server is HAProxy answering every POST itself with one fixed JSON-RPC result
// (`http-request return`, no backend), pinned to the node's core in a cgroup
// of its own; it serves well over 100,000 requests/s on one core, so the
// generator's core is what limits the rate. wrk runs against it too, for the
// ratio, and http-node-floor.js, wrk's loop in Node.js: what Node.js alone
// costs per request. Requests are HAProxy's own count (its Prometheus exporter).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Cgroup, spawnInGroup } = require('../../src/platform/cgroup');
const { ensureDebianTool } = require('../../src/install/debian');
const { samplesOf } = require('../../src/runtime/haproxy');
const { freePorts } = require('../../src/util/net');
const { pollUntil } = require('../../src/util/poll');
const { log } = require('../../src/util/log');
const { benchWrk, benchArtillery, benchProcess, WARM_S, MEASURE_S, CONNECTIONS, BODY } = require('./bench-generators');

const RESULT = '{"jsonrpc":"2.0","id":1,"result":{"number":"0x1"}}';

function responderConfig({ rpcPort, statsPort }) {
  return [
    'global',
    '  nbthread 1',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout client 30s',
    '  timeout connect 1s',
    '  timeout server 30s',
    'frontend rpc',
    `  bind 127.0.0.1:${rpcPort}`,
    `  http-request return status 200 content-type application/json string '${RESULT}'`,
    'frontend stats',
    `  bind 127.0.0.1:${statsPort}`,
    '  http-request use-service prometheus-exporter',
    '',
  ].join('\n');
}

/**
 * A static responder: argv run in a cgroup of its own on cpus, beside the generators' group on generatorCpus, waited
 * for until requests() (its count of answers) answers, within 10 s; else stopped. {generatorGroup, stop()}.
 */
async function runResponder(what, { id, argv, cpus, generatorCpus, requests }) {
  const group = new Cgroup(`chainperf/${id}/responder`, { cpus });
  const generatorGroup = new Cgroup(`chainperf/${id}/generator`, { cpus: generatorCpus });
  const child = spawnInGroup(group, argv, { stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    child.kill('SIGKILL');
    await exited;
    await generatorGroup.destroy();
    await group.destroy();
  };
  try {
    await pollUntil(async () => ({ done: (await requests()) >= 0 }), {
      timeoutS: 10,
      label: what,
      failMessage: (last) => `the ${what} did not answer within 10 s: ${last}`,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { generatorGroup, stop };
}

/** HAProxy as a static JSON-RPC responder on cpus; {target (for bench-generators), stop()}. */
async function startResponder({ cpus, generatorCpus, workDir }) {
  const bin = await ensureDebianTool('haproxy', 'haproxy', log);
  const { rpcPort, statsPort } = await freePorts(['rpcPort', 'statsPort']);
  const cfg = path.join(workDir, 'static-responder.cfg');
  fs.writeFileSync(cfg, responderConfig({ rpcPort, statsPort }));
  const statsUrl = `http://127.0.0.1:${statsPort}/metrics`;
  const requests = async () => {
    const text = await (await fetch(statsUrl)).text();
    const [s] = samplesOf(text, 'haproxy_frontend_http_requests_total').filter((x) => x.labels.proxy === 'rpc');
    if (!s) throw new Error('the static responder exports no haproxy_frontend_http_requests_total for rpc');
    return s.value;
  };
  const { generatorGroup, stop } = await runResponder('static responder (HAProxy)', {
    id: `bench-static-${process.pid}`,
    argv: [bin, '-db', '-f', cfg],
    cpus,
    generatorCpus,
    requests,
  });
  const target = { group: generatorGroup, rpcUrl: `http://127.0.0.1:${rpcPort}/`, wsUrl: null, requests };
  return { target, stop };
}

/** wrk's loop in Node.js (http-node-floor.js), as many connections as wrk's, for a warm-up and a measured window. */
function benchHttpNodeFloor(target) {
  const url = new URL(target.rpcUrl);
  const args = [url.hostname, url.port, url.pathname, CONNECTIONS, WARM_S + MEASURE_S + 2, BODY].map(String);
  return benchProcess(target, [process.execPath, path.join(__dirname, 'http-node-floor.js'), ...args]);
}

/**
 * reps rounds against a static responder (start(workDir): {target, stop}), each round every one of `generators`
 * ({name: (target, workDir, poolFile, k) => figures}) in turn; their figures by name. The requests are geth's bench's,
 * eth_getBlockByNumber(0x1), from a pool of one block. `what` names the responder in the log.
 */
async function staticRounds(what, { reps, start, generators }) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-static-'));
  const poolFile = path.join(workDir, 'pool.json');
  fs.writeFileSync(poolFile, JSON.stringify({ chain_id: 1337, head: 1, blocks: [1] }));
  const results = Object.fromEntries(Object.keys(generators).map((g) => [g, []]));
  let responder = null;
  try {
    responder = await start(workDir);
    for (let k = 0; k < reps; k++) {
      for (const [g, run] of Object.entries(generators))
        results[g].push(await run(responder.target, workDir, poolFile, k));
      log(
        `${what}, repetition ${k + 1}/${reps}: ${Object.entries(results)
          .map(([g, r]) => `${g} ${r[k].us_per_request.toFixed(1)} us/request at ${r[k].rps.toFixed(0)}/s`)
          .join(', ')}`,
      );
    }
  } finally {
    if (responder) await responder.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  return results;
}

/**
 * reps rounds of wrk, its loop in Node.js and the lean engine over HTTP (its own sockets, and the native sender at
 * path `sender`) against the static responder, by generator.
 */
async function benchStatic({ reps, wrk, cpus, generatorCpus, sender }) {
  log(`static responder (HAProxy, one fixed JSON-RPC result) on cpus ${cpus}, generator on cpus ${generatorCpus}`);
  return staticRounds('static responder', {
    reps,
    start: (workDir) => startResponder({ cpus, generatorCpus, workDir }),
    generators: {
      wrk: (target, workDir) => benchWrk(target, wrk, workDir),
      node_floor: (target) => benchHttpNodeFloor(target),
      lean: (target, workDir, poolFile, k) => benchArtillery(target, 'lean', 'http', workDir, poolFile, `static-${k}`),
      native: (target, workDir, poolFile, k) =>
        benchArtillery(target, 'lean', 'http', workDir, poolFile, `static-${k}`, undefined, sender),
    },
  });
}

module.exports = { benchStatic, staticRounds, runResponder };
