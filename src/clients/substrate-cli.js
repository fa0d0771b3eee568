// @ts-check
'use strict';
// The command-line flags every Substrate node binary (polkadot,
// polkadot-omni-node, polkadot-parachain) shares, from a scenario. The same
// arguments serve a binary on the host and the node in a container: with
// `external`, RPC and Prometheus listen on every interface (inside the
// container's network), else on 127.0.0.1 only.

/** RPC connections the node accepts: its default (100) would refuse a large workload. */
const rpcMaxConnections = (s) => Math.max(1000, 2 * (s.CONCURRENCY || 0));

/** --in-peers and --out-peers that add up to PEERS (the larger half inbound). */
function peerSplit(peers) {
  const out = Math.floor(peers / 2);
  return { in: peers - out, out };
}

/**
 * @param {object} s resolved scenario
 * @param {{dataDir:string, ports:{rpc:number, metrics:number, p2p:number}, chainSpec:string, external?:boolean}} where
 * @returns {string[]}
 */
function substrateArgs(s, { dataDir, ports, chainSpec, external = false }) {
  const peers = peerSplit(s.PEERS);
  return [
    '--chain',
    chainSpec,
    '--base-path',
    dataDir,
    '--database',
    s.DB_ENGINE,
    '--db-cache',
    String(s.DB_CACHE_MB),
    '--trie-cache-size',
    String(s.TRIE_CACHE_MB * 1024 * 1024),
    '--in-peers',
    String(peers.in),
    '--out-peers',
    String(peers.out),
    '--port',
    String(ports.p2p),
    '--rpc-port',
    String(ports.rpc),
    '--rpc-max-connections',
    String(rpcMaxConnections(s)),
    '--rpc-cors',
    'all',
    '--prometheus-port',
    String(ports.metrics),
    ...(external ? ['--rpc-external', '--prometheus-external'] : []),
    '--name',
    'chainperf',
    '--no-telemetry',
    '--no-mdns',
    '--no-hardware-benchmarks',
  ];
}

/** "0.24.0-abcdef" from `<node> --version` ("polkadot-omni-node 0.24.0-abcdef"). */
function versionOf(output) {
  const m = /(\d+\.\d+\.\d+\S*)/.exec(output);
  return m ? m[1] : 'unknown';
}

module.exports = { substrateArgs, peerSplit, rpcMaxConnections, versionOf };
