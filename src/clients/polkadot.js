// @ts-check
'use strict';
// polkadot: the relay-chain node (Polkadot, Kusama, their test networks), for
// a synced node measured in place (RUNTIME=attach) or a binary given as
// CLIENT_BIN. chainperf does not build it. In a container this is the
// parity/polkadot image, started with the same flags (`external: true`).

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { substrateArgs, versionOf } = require('./substrate-cli');
const { isPath } = require('../chains/substrate/specs');

async function ensureBinary(scenario) {
  if (!scenario.CLIENT_BIN)
    throw new Error(
      'CLIENT=polkadot is not built by chainperf: set CLIENT_BIN to a polkadot binary, or measure a running node with RUNTIME=attach',
    );
  if (!fs.existsSync(scenario.CLIENT_BIN)) throw new Error(`CLIENT_BIN: no such file: ${scenario.CLIENT_BIN}`);
  return scenario.CLIENT_BIN;
}

function binaryVersion(bin) {
  return versionOf(execFileSync(bin, ['--version'], { encoding: 'utf8' }));
}

/**
 * The command line for a scenario: a full node of the network CHAIN_SPEC names
 * (polkadot, kusama, a spec file), syncing from its peers.
 */
function command(s, where) {
  return {
    args: [...substrateArgs(s, where), '--sync', 'full'],
    rpcUrl: `ws://127.0.0.1:${where.ports.rpc}`,
    metrics: { target: `127.0.0.1:${where.ports.metrics}`, path: '/metrics' },
  };
}

/** The container's ports: the ones compose/node-polkadot.yml publishes and Prometheus scrapes. */
const CONTAINER_PORTS = { rpc: 9944, metrics: 9615, p2p: 30333 };

/**
 * The container's command: the same flags, RPC and Prometheus on the container's network, the spec file where compose
 * mounts it.
 */
function containerArgs(s, { chainSpec = s.CHAIN_SPEC || 'polkadot' } = {}) {
  const spec = isPath(chainSpec) ? '/chainperf/chain-spec.json' : chainSpec;
  return command(s, { dataDir: '/data', ports: CONTAINER_PORTS, chainSpec: spec, external: true }).args;
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'polkadot',
  summary: 'the relay-chain node (CLIENT_BIN, RUNTIME=attach, or the parity/polkadot image)',
  chains: ['polkadot', 'kusama', 'substrate'],
  defaults: { CLIENT_VERSION: null, DB_ENGINE: 'rocksdb', DEV_BLOCK_TIME_S: 2 },
  dbEngines: ['rocksdb', 'paritydb'],
  kind: 'node',
  /** Chain names the binary knows without a spec file: passed to --chain as they are. */
  builtinSpecs: ['polkadot', 'kusama', 'westend', 'paseo'],
  metrics: { cpu: null, requests: 'substrate_rpc_calls_finished', requestsByLabel: 'method' },
  compose: {
    file: path.join(__dirname, '..', '..', 'compose', 'node-polkadot.yml'),
    rpc: { scheme: 'ws', port: CONTAINER_PORTS.rpc },
    metrics: { port: CONTAINER_PORTS.metrics, path: '/metrics' },
    args: containerArgs,
  },
  /** parity/polkadot cannot be built from package sources here: it is used when present or pullable. */
  image: () => ({ upstream: 'parity/polkadot:v1.16.1', local: null }),
  ensureBinary,
  binaryVersion,
  command,
};

module.exports = client;
