// @ts-check
'use strict';
// reth: an EVM node on MDBX, in the compose runtime from its pinned upstream
// image (reth on crates.io is a placeholder, so it cannot be built here), or
// on the host from a binary given as CLIENT_BIN. Started with `node --dev`, a
// block every DEV_BLOCK_TIME_S (--dev.block-time).

const path = require('node:path');
const { prebuilt } = require('./prebuilt');

/** The container's ports: the ones compose/node-reth.yml publishes and Prometheus scrapes. */
const CONTAINER_PORTS = { rpc: 8545, ws: 8546, metrics: 9001, p2p: 30303, auth: 8551 };

/**
 * The command line for a scenario: DB_CACHE_MB is reth's cross-block state
 * cache (--engine.cross-block-cache-size, MB), PEERS its outbound and inbound
 * limits (the larger half inbound, as for Substrate nodes), DB_SIZE_LIMIT_GB
 * MDBX's --db.max-size.
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function command(s, { dataDir, ports, external = false }) {
  const addr = external ? '0.0.0.0' : '127.0.0.1';
  const outbound = Math.floor(s.PEERS / 2);
  return {
    args: [
      'node',
      '--dev',
      '--dev.block-time',
      `${s.DEV_BLOCK_TIME_S}s`,
      '--datadir',
      dataDir,
      '--engine.cross-block-cache-size',
      String(s.DB_CACHE_MB),
      '--max-outbound-peers',
      String(outbound),
      '--max-inbound-peers',
      String(s.PEERS - outbound),
      ...(s.DB_SIZE_LIMIT_GB ? ['--db.max-size', `${s.DB_SIZE_LIMIT_GB}GB`] : []),
      '--http',
      '--http.addr',
      addr,
      '--http.port',
      String(ports.rpc),
      '--http.api',
      'eth,net,web3',
      '--ws',
      '--ws.addr',
      addr,
      '--ws.port',
      String(ports.ws),
      '--ws.api',
      'eth,net,web3',
      '--metrics',
      `${addr}:${ports.metrics}`,
      '--port',
      String(ports.p2p),
      '--authrpc.addr',
      '127.0.0.1',
      '--authrpc.port',
      String(ports.auth),
      '--ipcdisable',
      '--disable-discovery',
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    wsUrl: `ws://127.0.0.1:${ports.ws}`,
    metrics: { target: `127.0.0.1:${ports.metrics}`, path: '/' },
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'reth',
  summary:
    'reth (MDBX), compose runtime with the pinned ghcr.io/paradigmxyz/reth image (node --dev), or CLIENT_BIN; it needs that image pulled or loaded (docker load)',
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '1.3.12', DB_ENGINE: 'mdbx' },
  dbEngines: ['mdbx'],
  kind: 'node',
  /** DB_SIZE_LIMIT_GB becomes this flag. */
  dbSizeLimitFlag: '--db.max-size',
  /** reth prefixes its metrics with reth_ (crates/node/metrics); calls answered, by JSON-RPC method. */
  metrics: {
    cpu: 'reth_process_cpu_seconds_total',
    requests: 'reth_rpc_server_calls_successful_total',
    requestsByLabel: 'method',
  },
  compose: {
    file: path.join(__dirname, '..', '..', 'compose', 'node-reth.yml'),
    rpc: { scheme: 'http', port: CONTAINER_PORTS.rpc },
    metrics: { port: CONTAINER_PORTS.metrics, path: '/' },
    args: (s) => command(s, { dataDir: '/data', ports: CONTAINER_PORTS, external: true }).args,
  },
  image: (s) => ({ upstream: `ghcr.io/paradigmxyz/reth:v${s.CLIENT_VERSION}`, local: null }),
  ...prebuilt('reth'),
  command,
};

module.exports = client;
