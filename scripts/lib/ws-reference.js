'use strict';
// npm run bench: the WebSocket reference (ws-reference.c), built once with
// the machine's C compiler into chainperf's cache (named by a hash of its
// source), and one measured window of it against a target, as wrk's is over
// HTTP (bench-generators.js); and of ws-node-floor.js, the same loop in Node.js.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ensureDebianTool } = require('../../src/install/debian');
const { cacheDir } = require('../../src/install/cache');
const { log } = require('../../src/util/log');
const { benchProcess, WARM_S, MEASURE_S, CONNECTIONS, WS_CONNECTIONS, BODY } = require('./bench-generators');

const SOURCE = path.join(__dirname, 'ws-reference.c');

/** The reference's binary, compiled unless a build of this source is in the cache. */
async function ensureWsReference() {
  const src = fs.readFileSync(SOURCE);
  const hash = crypto.createHash('sha256').update(src).digest('hex').slice(0, 12);
  const bin = cacheDir('tools', `ws-reference-${hash}`);
  if (fs.existsSync(bin)) return bin;
  const gcc = await ensureDebianTool('gcc', 'gcc', log);
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  const tmp = `${bin}.${process.pid}.tmp`;
  log(`building the WebSocket reference client (${path.relative(process.cwd(), SOURCE)}) with ${gcc}`);
  execFileSync(gcc, ['-O2', '-o', tmp, SOURCE], { stdio: ['ignore', 'ignore', 'inherit'] });
  fs.renameSync(tmp, bin);
  return bin;
}

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
