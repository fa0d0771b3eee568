'use strict';
// npm run bench: the WebSocket reference (ws-reference.c), built once with
// the machine's C compiler into chainperf's cache (named by a hash of its
// source; bench-static-ws.js's responder is built the same way), and one
// measured window of it against a target, as wrk's is over HTTP
// (bench-generators.js); and of ws-node-floor.js, the same loop in Node.js.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ensureDebianTool } = require('../../src/install/debian');
const { cacheDir } = require('../../src/install/cache');
const { log } = require('../../src/util/log');
const { benchProcess, WARM_S, MEASURE_S, CONNECTIONS, WS_CONNECTIONS, BODY } = require('./bench-generators');

const SOURCE = path.join(__dirname, 'ws-reference.c');

/**
 * A C program of scripts/lib, compiled with the machine's C compiler unless a build of this source is in the cache
 * (named by a hash of the source); its path.
 */
async function ensureCProgram(source, what) {
  const src = fs.readFileSync(source);
  const hash = crypto.createHash('sha256').update(src).digest('hex').slice(0, 12);
  const bin = cacheDir('tools', `${path.basename(source, '.c')}-${hash}`);
  if (fs.existsSync(bin)) return bin;
  const gcc = await ensureDebianTool('gcc', 'gcc', log);
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  const tmp = `${bin}.${process.pid}.tmp`;
  log(`building ${what} (${path.relative(process.cwd(), source)}) with ${gcc}`);
  execFileSync(gcc, ['-O2', '-o', tmp, source], { stdio: ['ignore', 'ignore', 'inherit'] });
  fs.renameSync(tmp, bin);
  return bin;
}

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

module.exports = { ensureCProgram, ensureWsReference, benchWsReference, benchWsNodeFloor };
