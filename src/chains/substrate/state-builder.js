'use strict';
// The node that builds a Substrate state (state.js says why it is started
// four times): started on a spec and a data directory, watched until its head
// reaches a block (and, for the compacting start, until RocksDB's compactions
// have settled), its peak memory sampled, stopped cleanly.

const fs = require('node:fs');
const { spawn, execFileSync } = require('node:child_process');
const { freePorts } = require('../../util/net');
const { rpcCall } = require('../../util/rpc');
const { sleep } = require('../../util/time');

const BUILD_TIMEOUT_S = 3600;
const COMPACTION_TIMEOUT_S = 600;

/** Resident memory of a process, in bytes (0 when it is gone). */
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The node started on a spec and data directory with a free RPC port; its log appended to logFile. */
async function spawnBuilder(bin, { spec, dataDir, engine, logFile, blockTimeMs, args }) {
  const ports = await freePorts(['rpc', 'p2p']);
  const out = fs.openSync(logFile, 'a');
  const argv = ['--chain', spec, '--base-path', dataDir, '--database', engine];
  argv.push('--dev-block-time', String(blockTimeMs), '--rpc-port', String(ports.rpc), '--port', String(ports.p2p));
  argv.push('--no-prometheus', '--name', 'chainperf-state-builder', '--no-telemetry', '--no-mdns');
  argv.push('--no-hardware-benchmarks', ...args);
  const child = spawn(bin, argv, { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const exited = new Promise((resolve) => child.once('exit', (code, sig) => resolve({ code, sig })));
  return { child, exited, url: `http://127.0.0.1:${ports.rpc}` };
}

/** The node's best block, or null while it builds its genesis and has no RPC yet. */
async function headOf(url) {
  try {
    return parseInt((await rpcCall(url, 'chain_getHeader', [], { timeoutMs: 5000 })).number, 16);
  } catch {
    return null;
  }
}

/**
 * Starts the node on a spec and data directory, waits until its head reaches `until`, stops it cleanly.
 * @returns {Promise<{genesis_hash:string, head:number, seconds:number, peak_rss_bytes:number}>}
 */
async function runBuilder(bin, o) {
  const { until, doing, blockTimeMs = 2000, args = [], settle = null, log, signal } = o;
  const { child, exited, url } = await spawnBuilder(bin, { ...o, blockTimeMs, args });
  const t0 = Date.now();
  let peak = 0;
  let said = 0;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `the node exited (${child.exitCode !== null ? `status ${child.exitCode}` : child.signalCode}) while building the state`,
        );
      if (signal && signal.aborted) throw new Error('state: interrupted');
      peak = Math.max(peak, rssOf(child.pid));
      const s = (Date.now() - t0) / 1000;
      if (s > BUILD_TIMEOUT_S)
        throw new Error(`the node had not reached block ${until} on the new state after ${BUILD_TIMEOUT_S} s`);
      const head = await headOf(url);
      if (head !== null && head >= until && (!settle || settle(s))) {
        const genesis = await rpcCall(url, 'chain_getBlockHash', [0], { timeoutMs: 5000 });
        return { genesis_hash: genesis, head, seconds: Math.round(s * 10) / 10, peak_rss_bytes: peak };
      }
      if (s - said >= 30) {
        said = s;
        const at = head === null ? doing : `at block ${head}`;
        log(`state: the node is ${at} (${Math.round(s)} s, ${(peak / 2 ** 30).toFixed(1)} GiB resident at most)`);
      }
      await sleep(250); // memory sampled four times a second
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // a clean stop: the database closed
      const t = setTimeout(() => child.kill('SIGKILL'), 60000);
      await exited;
      clearTimeout(t);
    }
  }
}

/**
 * True once every compaction RocksDB started in the data directory has finished, by its LOG files' event
 * lines (RocksDB starts the ones its level sizes ask for as it opens, before the node authors its first block).
 */
function compactionsSettled(dataDir, waitedS) {
  if (waitedS > COMPACTION_TIMEOUT_S)
    throw new Error(`state: RocksDB's compactions had not finished after ${COMPACTION_TIMEOUT_S} s`);
  const logs = execFileSync('find', [dataDir, '-name', 'LOG', '-path', '*/db/*'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  if (!logs.length) return true; // not RocksDB
  let started = 0;
  let finished = 0;
  for (const f of logs) {
    const text = fs.readFileSync(f, 'utf8');
    started += (text.match(/"event": "compaction_started"/g) || []).length;
    finished += (text.match(/"event": "compaction_finished"/g) || []).length;
  }
  return finished >= started;
}

function duBytes(dir) {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

module.exports = { runBuilder, compactionsSettled, duBytes, rssOf };
