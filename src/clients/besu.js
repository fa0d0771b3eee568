// @ts-check
'use strict';
// Hyperledger Besu: an EVM node (Java, RocksDB), in the compose runtime from
// its pinned upstream image (Besu is not on Maven Central), or on the host from
// a binary given as CLIENT_BIN. Started on its development network
// (--network=dev, proof-of-work mining at a fixed low difficulty, with a fixed
// coinbase). Pinned to 24.12: that release deprecates proof-of-work mining
// (besu#7905) and later releases removed it and the dev network. DB_ENGINE is Besu's storage
// format over RocksDB (--data-storage-format: bonsai or forest).

const path = require('node:path');
const { prebuilt } = require('./prebuilt');

/** The container's ports: the ones compose/node-besu.yml publishes and Prometheus scrapes. */
const CONTAINER_PORTS = { rpc: 8545, ws: 8546, metrics: 9545, p2p: 30303, auth: 8551 };
/** Mining reward address of the dev network (the first well-known dev account of Besu's dev genesis). */
const COINBASE = '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73';

/**
 * The command line for a scenario: DB_CACHE_MB is RocksDB's block cache
 * (--Xplugin-rocksdb-cache-capacity, bytes; an unstable option), PEERS
 * --max-peers, DB_ENGINE --data-storage-format. DEV_BLOCK_TIME_S has no Besu
 * option on the dev network: refused when given.
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function command(s, { dataDir, ports, external = false }) {
  const addr = external ? '0.0.0.0' : '127.0.0.1';
  return {
    args: [
      '--network=dev',
      '--miner-enabled',
      `--miner-coinbase=${COINBASE}`,
      `--data-path=${dataDir}`,
      `--data-storage-format=${s.DB_ENGINE.toUpperCase()}`,
      `--Xplugin-rocksdb-cache-capacity=${s.DB_CACHE_MB * 1024 * 1024}`,
      `--max-peers=${s.PEERS}`,
      '--rpc-http-enabled',
      `--rpc-http-host=${addr}`,
      `--rpc-http-port=${ports.rpc}`,
      '--rpc-http-api=ETH,NET,WEB3',
      '--rpc-ws-enabled',
      `--rpc-ws-host=${addr}`,
      `--rpc-ws-port=${ports.ws}`,
      '--rpc-ws-api=ETH,NET,WEB3',
      '--host-allowlist=*',
      '--metrics-enabled',
      `--metrics-host=${addr}`,
      `--metrics-port=${ports.metrics}`,
      `--p2p-port=${ports.p2p}`,
      '--discovery-enabled=false',
      `--engine-rpc-port=${ports.auth}`,
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    wsUrl: `ws://127.0.0.1:${ports.ws}`,
    metrics: { target: `127.0.0.1:${ports.metrics}`, path: '/metrics' },
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'besu',
  summary:
    'Hyperledger Besu (RocksDB; DB_ENGINE is its storage format), compose runtime with the pinned hyperledger/besu image (--network=dev), or CLIENT_BIN; it needs that image pulled or loaded (docker load)',
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '24.12.2', DB_ENGINE: 'bonsai' },
  dbEngines: ['bonsai', 'forest'],
  kind: 'node',
  /**
   * Besu has no eth_sendTransaction: history is signed by chainperf with the dev genesis' first account
   * (config/src/main/resources/dev.json), whose key is public (0xfe3b557e8fb62b89f4916b721be55ceb828dbd73).
   */
  devKey: '0x8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63',
  unsupported: {
    DEV_BLOCK_TIME_S: "Besu's dev network mines proof of work at a fixed low difficulty; it has no block-period option",
  },
  metrics: { cpu: 'process_cpu_seconds_total', requests: null },
  compose: {
    file: path.join(__dirname, '..', '..', 'compose', 'node-besu.yml'),
    rpc: { scheme: 'http', port: CONTAINER_PORTS.rpc },
    metrics: { port: CONTAINER_PORTS.metrics, path: '/metrics' },
    args: (s) => command(s, { dataDir: '/data', ports: CONTAINER_PORTS, external: true }).args,
  },
  image: (s) => ({ upstream: `hyperledger/besu:${s.CLIENT_VERSION}`, local: null }),
  ...prebuilt('besu'),
  command,
};

module.exports = client;
