'use strict';
// npm run bench: the WebSocket reference (ws-reference.c), built once with
// the machine's C compiler into chainperf's cache (named by a hash of its
// source), and one measured window of it against a target, as wrk's is over
// HTTP (bench-generators.js).

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { spawnInGroup } = require('../../src/platform/cgroup');
const { ensureDebianTool } = require('../../src/install/debian');
const { cacheDir } = require('../../src/install/cache');
const { log } = require('../../src/util/log');
const { measureEdges, WARM_S, MEASURE_S, CONNECTIONS, WS_CONNECTIONS, BODY } = require('./bench-generators');

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

/** The reference over ws: WS_CONNECTIONS sockets, CONNECTIONS requests in flight in all (the lean engine's users). */
async function benchWsReference(target, bin) {
  const url = new URL(target.wsUrl);
  const depth = Math.ceil(CONNECTIONS / WS_CONNECTIONS);
  const t0 = Date.now();
  const args = [url.hostname, url.port, url.pathname || '/', WS_CONNECTIONS, depth, WARM_S + MEASURE_S + 2, BODY];
  const child = spawnInGroup(target.group, [bin, ...args.map(String)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.once('exit', r));
  const start = t0 + 500 + WARM_S * 1000;
  try {
    const figures = await measureEdges(target, start, start + MEASURE_S * 1000);
    if (child.exitCode !== null && child.exitCode !== 0) throw new Error(`ws-reference failed: ${stderr.trim()}`);
    return figures;
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

module.exports = { ensureWsReference, benchWsReference };
