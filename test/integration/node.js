'use strict';
// A geth --dev node started by a test, standing for a node that runs
// independently of chainperf (attach mode, failure cases).

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const geth = require('../../src/clients/geth');
const { freePorts } = require('../../src/util/net');
const { rpcCall } = require('../../src/util/rpc');
const { tmpDir } = require('../helpers');

/**
 * Starts geth --dev; period 0 makes a chain whose head never moves without transactions.
 * transport 'ws' serves JSON-RPC over WebSocket only (no HTTP endpoint); extra are more geth flags.
 */
async function startGeth({ period = 1, transport = 'http', extra = [] } = {}) {
  const bin = await geth.ensureBinary({ CLIENT_VERSION: geth.defaults.CLIENT_VERSION, CLIENT_BIN: '' }, (m) =>
    process.stderr.write(`${m}\n`),
  );
  const dir = tmpDir('chainperf-geth-');
  const { rpc, metrics, p2p, auth } = await freePorts(['rpc', 'metrics', 'p2p', 'auth']);
  const log = fs.openSync(path.join(dir, 'geth.log'), 'a');
  const endpoint =
    transport === 'ws'
      ? ['--ws', '--ws.addr', '127.0.0.1', '--ws.port', String(rpc), '--ws.api', 'eth,net,web3']
      : ['--http', '--http.addr', '127.0.0.1', '--http.port', String(rpc)];
  const child = spawn(
    bin,
    [
      '--dev',
      ...(period ? ['--dev.period', String(period)] : []),
      '--datadir',
      path.join(dir, 'data'),
      ...endpoint,
      '--metrics',
      '--metrics.addr',
      '127.0.0.1',
      '--metrics.port',
      String(metrics),
      '--port',
      String(p2p),
      '--authrpc.port',
      String(auth),
      '--ipcdisable',
      '--nodiscover',
      ...extra,
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const rpcUrl = `${transport === 'ws' ? 'ws' : 'http'}://127.0.0.1:${rpc}`;
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      await rpcCall(rpcUrl, 'eth_blockNumber');
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`geth did not answer: ${err.message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    pid: child.pid,
    rpcUrl,
    logFile: path.join(dir, 'geth.log'),
    metricsUrl: `http://127.0.0.1:${metrics}/debug/metrics/prometheus`,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

module.exports = { startGeth };
