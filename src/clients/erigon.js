// @ts-check
'use strict';
// Erigon: an EVM node on MDBX, in the compose runtime from its pinned upstream
// image (no package registry here has it: the Go module proxy refuses the
// module), or on the host from a binary given as CLIENT_BIN. Started on its
// dev chain (--chain=dev --mine, a block every DEV_BLOCK_TIME_S). Pinned to the
// 2.60 line: Erigon 3's dev chain stops mining (erigontech/erigon#13567,
// #16749: it stalls at block 65 with --dev.period) and later 3.x releases no
// longer know `--chain=dev` (#18827). JSON-RPC over WebSocket is served on the
// HTTP port (--ws).

const path = require('node:path');
const { prebuilt } = require('./prebuilt');

/** The container's ports: the ones compose/node-erigon.yml publishes and Prometheus scrapes. */
const CONTAINER_PORTS = { rpc: 8545, ws: 8545, metrics: 6060, p2p: 30303, auth: 8551, private: 9090 };

/**
 * The command line for a scenario. DB_CACHE_MB has no erigon flag (MDBX reads
 * through the kernel's page cache): resolve.js refuses it when given.
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function command(s, { dataDir, ports, external = false }) {
  const addr = external ? '0.0.0.0' : '127.0.0.1';
  return {
    args: [
      '--chain=dev',
      '--mine',
      `--dev.period=${s.DEV_BLOCK_TIME_S}`,
      `--datadir=${dataDir}`,
      `--maxpeers=${s.PEERS}`,
      ...(s.DB_SIZE_LIMIT_GB ? [`--db.size.limit=${s.DB_SIZE_LIMIT_GB}GB`] : []),
      '--http',
      `--http.addr=${addr}`,
      `--http.port=${ports.rpc}`,
      '--http.api=eth,net,web3',
      '--http.vhosts=*',
      '--ws',
      '--metrics',
      `--metrics.addr=${addr}`,
      `--metrics.port=${ports.metrics}`,
      `--port=${ports.p2p}`,
      '--authrpc.addr=127.0.0.1',
      `--authrpc.port=${ports.auth}`,
      `--private.api.addr=127.0.0.1:${ports.private || CONTAINER_PORTS.private}`,
      '--nodiscover',
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    wsUrl: `ws://127.0.0.1:${ports.rpc}`,
    metrics: { target: `127.0.0.1:${ports.metrics}`, path: '/debug/metrics/prometheus' },
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'erigon',
  summary:
    'Erigon (MDBX), compose runtime with the pinned erigontech/erigon image (--chain=dev), or CLIENT_BIN; it needs that image pulled or loaded (docker load)',
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '2.60.10', DB_ENGINE: 'mdbx' },
  dbEngines: ['mdbx'],
  kind: 'node',
  /**
   * Erigon serves no eth_sendTransaction: history is signed by chainperf with the dev chain's developer account, whose
   * key is public (0x67b1d87101671b127f5f8714789C7192f7ad340e).
   */
  devKey: '0x26e86e45f6fc45ec6e2ecd128cec80fa1d1505e5507dcd2ae58c3130a7a97b48',
  /** DB_SIZE_LIMIT_GB becomes this flag. */
  dbSizeLimitFlag: '--db.size.limit',
  unsupported: { DB_CACHE_MB: "erigon has no database cache flag (MDBX reads through the kernel's page cache)" },
  metrics: { cpu: null, requests: null }, // names not checked against an Erigon 2.60 binary: attach reads NODE_PID
  compose: {
    file: path.join(__dirname, '..', '..', 'compose', 'node-erigon.yml'),
    rpc: { scheme: 'http', port: CONTAINER_PORTS.rpc },
    metrics: { port: CONTAINER_PORTS.metrics, path: '/debug/metrics/prometheus' },
    args: (s) => command(s, { dataDir: '/data', ports: CONTAINER_PORTS, external: true }).args,
  },
  image: (s) => ({ upstream: `erigontech/erigon:v${s.CLIENT_VERSION}`, local: null }),
  ...prebuilt('erigon'),
  command,
};

module.exports = client;
