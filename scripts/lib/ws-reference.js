'use strict';
// npm run bench: the WebSocket reference (ws-reference.c), built once with
// the machine's C compiler into chainperf's cache (named by a hash of its
// source; bench-static-ws.js's responder is built the same way), and one
// measured window of it against a target, as wrk's is over HTTP
// (bench-generators.js); and of ws-node-floor.js, the same loop in Node.js.

const path = require('node:path');
const { ensureCProgram } = require('../../src/install/c-program');
const { benchProcess, WARM_S, MEASURE_S, CONNECTIONS, WS_CONNECTIONS, BODY } = require('./bench-generators');

const SOURCE = path.join(__dirname, 'ws-reference.c');

/** The reference's binary. */
const ensureWsReference = () => ensureCProgram(SOURCE, 'the WebSocket reference client');

/** Its command-line arguments against a target: WS_CONNECTIONS sockets, CONNECTIONS requests in flight in all. */
function referenceArgs(target) {
  const url = new URL(target.wsUrl);
  const depth = Math.ceil(CONNECTIONS / WS_CONNECTIONS);
  return [url.hostname, url.port, url.pathname || '/', WS_CONNECTIONS, depth, WARM_S + MEASURE_S + 2, BODY].map(String);
}

/** The reference over ws, with the lean engine's sockets and requests in flight. */
const benchWsReference = (target, bin) => benchProcess(target, [bin, ...referenceArgs(target)]);

/** The same loop in Node.js (ws-node-floor.js): what Node.js itself costs a WebSocket client per request. */
const benchWsNodeFloor = (target) =>
  benchProcess(target, [process.execPath, path.join(__dirname, 'ws-node-floor.js'), ...referenceArgs(target)]);

module.exports = { ensureWsReference, benchWsReference, benchWsNodeFloor };
