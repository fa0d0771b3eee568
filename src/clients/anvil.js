// @ts-check
'use strict';
// anvil (Foundry): a second EVM implementation, a development node. It keeps
// the chain in memory, has no networking, no database or database cache and
// no metrics endpoint; it mines a block every DEV_BLOCK_TIME_S (--block-time)
// and unlocks funded dev accounts, so the Ethereum history and workloads run
// on it unchanged. Its figures are a development node's, not a production
// client's, and every report says so. Installed from npm
// (@foundry-rs/anvil-linux-amd64 ships the binary) into the cache on first use.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('../install/cache');
const { installNpmPackage } = require('../install/npm-package');

const PACKAGE = '@foundry-rs/anvil-linux-amd64';

/** @param {import('../contracts').Scenario} s */
function installDir(s) {
  return cacheDir('anvil', String(s.CLIENT_VERSION));
}

/**
 * The cached binary for a version, or the CLIENT_BIN the scenario names.
 * @param {import('../contracts').Scenario} s
 */
function binaryPath(s) {
  return s.CLIENT_BIN || path.join(installDir(s), 'node_modules', PACKAGE, 'bin', 'anvil');
}

/**
 * @param {import('../contracts').Scenario} s
 * @param {(line: string) => void} log
 */
async function ensureBinary(s, log) {
  const bin = binaryPath(s);
  if (s.CLIENT_BIN) {
    if (fs.existsSync(bin)) return bin;
    throw new Error(`CLIENT_BIN: no such file: ${bin}`);
  }
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `${PACKAGE} ships a Linux x86-64 binary; on ${process.platform}-${process.arch} set CLIENT_BIN to an anvil binary`,
    );
  return installNpmPackage({
    dir: installDir(s),
    pkg: PACKAGE,
    version: s.CLIENT_VERSION,
    bin,
    name: 'anvil',
    usual: 10,
    note: 'from npm; a 44 MB binary, once',
    log,
  });
}

/**
 * "1.7.1" from `anvil --version` ("anvil Version: 1.7.1").
 * @param {string} bin
 */
function binaryVersion(bin) {
  const m = /(\d+\.\d+\.\d+\S*)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }));
  return m ? m[1] : 'unknown';
}

/**
 * The command line for a scenario: CORES is also its thread count
 * (--threads); DB_CACHE_MB and PEERS have no anvil equivalent (refused when
 * given), DB_ENGINE takes only `memory`. HTTP and WebSocket share one port.
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function command(s, { ports, external = false }) {
  return {
    args: [
      '--host',
      external ? '0.0.0.0' : '127.0.0.1',
      '--port',
      String(ports.rpc),
      '--block-time',
      String(s.DEV_BLOCK_TIME_S),
      '--threads',
      String(s.CORES),
      '--accounts',
      '10',
      '--silent',
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    wsUrl: `ws://127.0.0.1:${ports.rpc}`,
    metrics: null, // anvil exports no metrics
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'anvil',
  summary: "Foundry's in-memory EVM node (npm @foundry-rs/anvil-linux-amd64, installed into the cache), host runtime",
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '1.7.1', DB_ENGINE: 'memory' },
  dbEngines: ['memory'],
  kind: 'development node',
  warning:
    "anvil is a development node, not a production client: an in-memory EVM without networking, database or database cache, so its figures are not geth's or any production node's",
  unsupported: {
    DB_CACHE_MB: 'anvil keeps the chain in memory and has no database cache',
    PEERS: 'anvil has no peer-to-peer networking',
  },
  metrics: null,
  binaryPath,
  ensureBinary,
  binaryVersion,
  command,
};

module.exports = client;
