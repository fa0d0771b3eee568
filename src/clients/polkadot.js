'use strict';
// polkadot: the relay-chain node (Polkadot, Kusama, their test networks), for
// a synced node measured in place (RUNTIME=attach) or a binary given as
// CLIENT_BIN. chainperf does not build it. In a container this is the
// parity/polkadot image, started with the same flags (`external: true`).

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { substrateArgs, versionOf, peerSplit, rpcMaxConnections } = require('./substrate-cli');
const { isPath } = require('../chains/substrate/specs');

async function ensureBinary(scenario) {
  if (!scenario.CLIENT_BIN) throw new Error('CLIENT=polkadot is not built by chainperf: set CLIENT_BIN to a polkadot binary, or measure a running node with RUNTIME=attach');
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

/** Variables of compose/node-polkadot.yml beyond the common ones (see substrateArgs for their meaning). */
function composeEnv(s, { chainSpec }) {
  const peers = peerSplit(s.PEERS);
  return {
    NODE_CHAIN: isPath(chainSpec) ? '/chainperf/chain-spec.json' : chainSpec,
    TRIE_CACHE_BYTES: String(s.TRIE_CACHE_MB * 1024 * 1024),
    IN_PEERS: String(peers.in),
    OUT_PEERS: String(peers.out),
    RPC_MAX_CONNECTIONS: String(rpcMaxConnections(s)),
  };
}

module.exports = {
  name: 'polkadot',
  chains: ['polkadot', 'kusama', 'substrate'],
  defaults: { CLIENT_VERSION: null, DB_ENGINE: 'rocksdb', DEV_BLOCK_TIME_S: 2 },
  dbEngines: ['rocksdb', 'paritydb'],
  kind: 'node',
  /** Chain names the binary knows without a spec file: passed to --chain as they are. */
  builtinSpecs: ['polkadot', 'kusama', 'westend', 'paseo'],
  metrics: { cpu: null, requests: 'substrate_rpc_calls_finished', requestsByLabel: 'method' },
  /** Compose runtime: where the container serves metrics and JSON-RPC (compose/node-polkadot.yml). */
  containerMetrics: { port: 9615, path: '/metrics' },
  containerRpc: { scheme: 'ws', port: 9944 },
  /** parity/polkadot cannot be built from package sources here: it is used when present or pullable. */
  image: () => ({ upstream: 'parity/polkadot:v1.16.1', local: null }),
  composeEnv,
  ensureBinary,
  binaryVersion,
  command,
};
