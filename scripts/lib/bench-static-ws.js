'use strict';
// npm run bench's static part over WebSocket: the lean engine, ws-reference (C)
// and ws-node-floor (the same loop in Node.js) against a WebSocket JSON-RPC
// server that answers every request with one fixed result
// (ws-static-responder.c, one thread, pinned to the node's core in a cgroup of
// its own). It answers far more requests per second than one generator core
// sends, so each generator runs at its own core's limit: CPU per request is
// the generator's alone, at the rate its core allows, with no node whose rate
// moves from one window to the next (geth's does, bench.js's WebSocket rows).
// Requests are the responder's own count of answers.

const net = require('node:net');
const path = require('node:path');
const { freePorts } = require('../../src/util/net');
const { log } = require('../../src/util/log');
const { benchArtillery } = require('./bench-generators');
const { staticRounds, runResponder } = require('./bench-static');
const { benchWsReference, benchWsNodeFloor } = require('./ws-reference');
const { ensureCProgram } = require('../../src/install/c-program');

const RESULT = '{"number":"0x1"}';

/** The responder's count of answers so far: one connection to its stats port, which it answers and closes. */
function answersSoFar(statsPort) {
  return new Promise((resolve, reject) => {
    let text = '';
    const s = net.connect(statsPort, '127.0.0.1');
    s.setTimeout(5000, () => s.destroy(new Error('the WebSocket responder did not give its count within 5 s')));
    s.on('data', (d) => (text += d));
    s.on('error', reject);
    s.on('close', () => (/^\d+\n$/.test(text) ? resolve(Number(text)) : reject(new Error(`count: "${text}"`))));
  });
}

/** The responder on cpus; {target (for bench-generators), stop()}. */
async function startWsResponder({ cpus, generatorCpus }) {
  const bin = await ensureCProgram(path.join(__dirname, 'ws-static-responder.c'), 'the static WebSocket responder');
  const { port, statsPort } = await freePorts(['port', 'statsPort']);
  const requests = () => answersSoFar(statsPort);
  const { generatorGroup, stop } = await runResponder('static WebSocket responder', {
    id: `bench-static-ws-${process.pid}`,
    argv: [bin, String(port), String(statsPort), RESULT],
    cpus,
    generatorCpus,
    requests,
  });
  return { target: { group: generatorGroup, rpcUrl: null, wsUrl: `ws://127.0.0.1:${port}/`, requests }, stop };
}

/** reps rounds of ws-reference, ws-node-floor and the lean engine (its own sockets, the native sender) over ws. */
async function benchStaticWs({ reps, cpus, generatorCpus, wsRef, sender }) {
  log(`static WebSocket responder (ws-static-responder.c) on cpus ${cpus}, generator on cpus ${generatorCpus}`);
  return staticRounds('static WebSocket responder', {
    reps,
    start: () => startWsResponder({ cpus, generatorCpus }),
    generators: {
      ws_ref: (target) => benchWsReference(target, wsRef),
      ws_node: (target) => benchWsNodeFloor(target),
      lean_ws: (target, workDir, poolFile, k) =>
        benchArtillery(target, 'lean', 'ws', workDir, poolFile, `static-ws-${k}`),
      native_ws: (target, workDir, poolFile, k) =>
        benchArtillery(target, 'lean', 'ws', workDir, poolFile, `static-ws-${k}`, undefined, sender),
    },
  });
}

module.exports = { benchStaticWs, startWsResponder };
