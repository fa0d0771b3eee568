// @ts-check
'use strict';
// chopsticks (@acala-network/chopsticks): a development server that runs a
// Substrate runtime (here, from a raw chain spec in genesis mode) behind a
// real Substrate JSON-RPC server. It is not a node: no networking, no
// database cache, no trie cache, blocks built on demand (chainperf calls
// dev_newBlock every DEV_BLOCK_TIME_S). It serves the tests of the workload
// and the Substrate code paths here, where no node image can be pulled, and
// every report of a run on it says so. Installed from npm into the cache.

const fs = require('node:fs');
const path = require('node:path');
const { cacheDir } = require('../install/cache');
const { installNpmPackage } = require('../install/npm-package');

const PACKAGE = '@acala-network/chopsticks';

function installDir(scenario) {
  return cacheDir('chopsticks', scenario.CLIENT_VERSION);
}

/** The cached CLI script for a version, or the CLIENT_BIN the scenario names. */
function binaryPath(scenario) {
  return scenario.CLIENT_BIN || path.join(installDir(scenario), 'node_modules', PACKAGE, 'chopsticks.cjs');
}

async function ensureBinary(scenario, log) {
  const bin = binaryPath(scenario);
  if (scenario.CLIENT_BIN) {
    if (fs.existsSync(bin)) return bin;
    throw new Error(`CLIENT_BIN: no such file: ${bin}`);
  }
  return installNpmPackage({
    dir: installDir(scenario),
    pkg: PACKAGE,
    version: scenario.CLIENT_VERSION,
    bin,
    name: 'chopsticks',
    usual: 120,
    note: 'from npm, once',
    log,
  });
}

/** The version in the installed package.json (running the CLI to ask costs seconds). */
function binaryVersion(bin) {
  try {
    return JSON.parse(fs.readFileSync(path.join(path.dirname(bin), 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

/**
 * The command line for a scenario.
 * @param {object} s resolved scenario
 * @param {{dataDir:string, ports:{rpc:number}, chainSpec:string, external?:boolean}} where
 */
function command(s, { ports, chainSpec, external = false }) {
  return {
    args: [
      '--genesis',
      chainSpec,
      '--host',
      external ? '0.0.0.0' : '127.0.0.1',
      '--port',
      String(ports.rpc),
      '--build-block-mode',
      'Batch',
      '--runtime-log-level',
      '0',
    ],
    rpcUrl: `ws://127.0.0.1:${ports.rpc}`,
    metrics: null, // chopsticks exports no metrics
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'chopsticks',
  summary:
    'a Substrate development server (npm @acala-network/chopsticks, installed into the cache), not a node; its figures are labelled so',
  chains: ['polkadot', 'kusama', 'substrate'],
  defaults: { CLIENT_VERSION: '1.5.1', DB_ENGINE: 'rocksdb', DEV_BLOCK_TIME_S: 2 },
  dbEngines: ['rocksdb', 'paritydb'], // accepted so scenarios stay comparable; chopsticks keeps state in memory
  kind: 'development server',
  warning:
    "chopsticks is a development server, not a node: its figures are not a node's (no networking, no database or trie cache, blocks built on demand by chainperf)",
  /** Blocks come when someone asks: chainperf asks every DEV_BLOCK_TIME_S. */
  newBlockMethod: 'dev_newBlock',
  /** NODE_PROFILE=cpu: V8 writes /tmp/perf-PID.map, so that perf names the JavaScript functions it samples. */
  profileEnv: { NODE_OPTIONS: '--perf-basic-prof-only-functions' },
  metrics: null,
  binaryPath,
  ensureBinary,
  binaryVersion,
  command,
};

module.exports = client;
