// @ts-check
'use strict';
// Nethermind: an EVM node on RocksDB (.NET), in the compose runtime from its
// pinned upstream image, or on the host from a binary given as CLIENT_BIN.
// Nethermind has no --dev mode; its development chain is the shipped
// `spaceneth` configuration: a single node, ten funded development accounts
// whose keys the node holds, and a block only when a transaction waits. So
// that the head advances like a dev node's, chainperf calls evm_mine every
// DEV_BLOCK_TIME_S (as it calls dev_newBlock on chopsticks). Options are
// Nethermind's --Section.Key form (1.29; later versions also take kebab-case).

const path = require('node:path');
const { prebuilt } = require('./prebuilt');

/** The container's ports: the ones compose/node-nethermind.yml publishes and Prometheus scrapes. */
const CONTAINER_PORTS = { rpc: 8545, ws: 8546, metrics: 9091, p2p: 30303, auth: 8551 };

/**
 * The command line for a scenario: DB_CACHE_MB is RocksDB's shared block
 * cache (--Db.SharedBlockCacheSize, bytes), PEERS --Network.MaxActivePeers.
 * DB_SIZE_LIMIT_GB has no Nethermind option: refused when given.
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function command(s, { dataDir, ports, external = false }) {
  const addr = external ? '0.0.0.0' : '127.0.0.1';
  return {
    args: [
      '--config',
      'spaceneth',
      '--datadir',
      dataDir,
      '--Db.SharedBlockCacheSize',
      String(s.DB_CACHE_MB * 1024 * 1024),
      '--Network.MaxActivePeers',
      String(s.PEERS),
      '--Network.P2PPort',
      String(ports.p2p),
      '--Network.DiscoveryPort',
      String(ports.p2p),
      '--Init.DiscoveryEnabled',
      'false',
      '--JsonRpc.Enabled',
      'true',
      '--JsonRpc.Host',
      addr,
      '--JsonRpc.Port',
      String(ports.rpc),
      '--JsonRpc.WebSocketsPort',
      String(ports.ws),
      '--Init.WebSocketsEnabled',
      'true',
      '--JsonRpc.EnabledModules',
      'eth,net,web3,evm',
      '--JsonRpc.EngineHost',
      '127.0.0.1',
      '--JsonRpc.EnginePort',
      String(ports.auth),
      '--Metrics.Enabled',
      'true',
      '--Metrics.ExposeHost',
      addr,
      '--Metrics.ExposePort',
      String(ports.metrics),
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    wsUrl: `ws://127.0.0.1:${ports.ws}`,
    metrics: { target: `127.0.0.1:${ports.metrics}`, path: '/metrics' },
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'nethermind',
  summary:
    'Nethermind (RocksDB), compose runtime with the pinned nethermind/nethermind image (spaceneth dev chain, evm_mine every DEV_BLOCK_TIME_S), or CLIENT_BIN; it needs that image pulled or loaded (docker load)',
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '1.29.0', DB_ENGINE: 'rocksdb' },
  dbEngines: ['rocksdb'],
  kind: 'node',
  /** spaceneth builds a block when a transaction waits; chainperf asks for one every DEV_BLOCK_TIME_S. */
  newBlockMethod: 'evm_mine',
  metrics: { cpu: 'process_cpu_seconds_total', requests: 'nethermind_json_rpc_requests' },
  compose: {
    file: path.join(__dirname, '..', '..', 'compose', 'node-nethermind.yml'),
    rpc: { scheme: 'http', port: CONTAINER_PORTS.rpc },
    metrics: { port: CONTAINER_PORTS.metrics, path: '/metrics' },
    args: (s) => command(s, { dataDir: '/data', ports: CONTAINER_PORTS, external: true }).args,
  },
  image: (s) => ({ upstream: `nethermind/nethermind:${s.CLIENT_VERSION}`, local: null }),
  ...prebuilt('nethermind'),
  command,
};

module.exports = client;
