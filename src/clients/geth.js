// @ts-check
'use strict';
// go-ethereum. Built from the Go module proxy into the cache on first use;
// started as a --dev chain whose blocks come every DEV_BLOCK_TIME_S seconds.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ethers } = require('ethers');
const { cacheDir } = require('../install/cache');
const { runWithProgress } = require('../install/progress');
const { withCacheLock } = require('../install/lock');
const { IMPORT_LOG } = require('./geth-log');
const { DEV_KEY, memberArgs, chainArgs } = require('./geth-member');

/** The cached binary for a version, or the CLIENT_BIN the scenario names. */
function binaryPath(scenario) {
  return scenario.CLIENT_BIN || cacheDir('geth', scenario.CLIENT_VERSION, 'bin', 'geth');
}

async function ensureBinary(scenario, log) {
  const bin = binaryPath(scenario);
  if (fs.existsSync(bin)) return bin;
  if (scenario.CLIENT_BIN) throw new Error(`CLIENT_BIN: no such file: ${bin}`);
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      `geth ${scenario.CLIENT_VERSION} is not built yet and Go is not installed: install Go, or set CLIENT_BIN to a geth binary`,
    );
  }
  const gobin = path.dirname(bin);
  const version = scenario.CLIENT_VERSION;
  await withCacheLock(
    `geth-${version}`,
    async () => {
      if (fs.existsSync(bin)) return; // built by another run while this one waited
      // Built beside its place and moved into it: a build cut short never leaves a binary that looks complete.
      const tmp = `${gobin}.building-${process.pid}`;
      fs.rmSync(tmp, { recursive: true, force: true });
      await runWithProgress('go', ['install', `github.com/ethereum/go-ethereum/cmd/geth@v${version}`], {
        label: `building geth ${version} into ${gobin}`,
        step: `geth-${version}`,
        usual: 90,
        note: 'from the Go module proxy, once',
        env: { GOBIN: tmp, GOFLAGS: '-trimpath' },
        log,
      });
      if (!fs.existsSync(path.join(tmp, 'geth'))) throw new Error(`go install finished but ${tmp}/geth is missing`);
      fs.mkdirSync(gobin, { recursive: true });
      fs.renameSync(path.join(tmp, 'geth'), bin);
      fs.rmSync(tmp, { recursive: true, force: true });
    },
    { log, what: `building geth ${version}` },
  );
  return bin;
}

/** "1.16.7-stable" from `geth version`. */
function binaryVersion(bin) {
  const out = execFileSync(bin, ['version'], { encoding: 'utf8' });
  const m = /^Version:\s*(\S+)/m.exec(out);
  return m ? m[1] : 'unknown';
}

/**
 * Metrics on `addr`, the p2p port, and the engine API: on 127.0.0.1 on the host; in a container of a network on every
 * interface of the container (its port is published on the host's loopback only, for chainperf's engine-API driver).
 */
function metricsAndPorts(addr, ports, { external = false, network = null } = {}) {
  const engineOutside = external && network;
  return [
    '--metrics',
    '--metrics.addr',
    addr,
    '--metrics.port',
    String(ports.metrics),
    '--port',
    String(ports.p2p),
    '--authrpc.port',
    String(ports.auth),
    '--authrpc.addr',
    engineOutside ? '0.0.0.0' : '127.0.0.1',
    ...(engineOutside ? ['--authrpc.vhosts', '*'] : []),
  ];
}

/**
 * The command line for a scenario: on the host, or in the node container
 * (`external`: RPC and metrics on every interface of the container's network).
 * @param {import('../contracts').Scenario} s resolved scenario
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function command(s, { dataDir, ports, external = false, network }) {
  const addr = external ? '0.0.0.0' : '127.0.0.1';
  return {
    args: [
      // A lone dev chain sealing its own blocks, or a member of a local network (NETWORK_NODES) told of its blocks
      // through the engine API: geth's --dev mode turns peer-to-peer networking off.
      ...(network ? memberArgs(network) : ['--dev', '--dev.period', String(s.DEV_BLOCK_TIME_S)]),
      '--datadir',
      dataDir,
      '--cache',
      String(s.DB_CACHE_MB),
      '--maxpeers',
      String(s.PEERS),
      '--db.engine',
      s.DB_ENGINE,
      '--http',
      '--http.addr',
      addr,
      '--http.port',
      String(ports.rpc),
      '--http.api',
      'eth,net,web3',
      ...(external ? ['--http.vhosts', '*'] : []),
      '--ws',
      '--ws.addr',
      addr,
      '--ws.port',
      String(ports.ws),
      '--ws.api',
      'eth,net,web3',
      ...(external ? ['--ws.origins', '*'] : []),
      ...metricsAndPorts(addr, ports, { external, network }),
      '--ipcdisable',
      '--nodiscover',
      // NODE_PROFILE=cpu: geth's own profiler, read over each measured window.
      ...(s.NODE_PROFILE === 'cpu' && ports.pprof
        ? ['--pprof', '--pprof.addr', '127.0.0.1', '--pprof.port', String(ports.pprof)]
        : []),
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    wsUrl: `ws://127.0.0.1:${ports.ws}`,
    metrics: { target: `127.0.0.1:${ports.metrics}`, path: '/debug/metrics/prometheus' },
    ...(s.NODE_PROFILE === 'cpu' && ports.pprof
      ? { pprofUrl: `http://127.0.0.1:${ports.pprof}/debug/pprof/profile` }
      : {}),
  };
}

/**
 * A network node beside the node under test: a small cache, admin (chainperf peers it) and txpool over HTTP on
 * 127.0.0.1, no WebSocket. It builds blocks when the network's driver asks (recommit often: a block time can be 1 s).
 * @param {import('../contracts').Scenario} s
 * @param {import('../contracts').Where} where
 * @returns {import('../contracts').Command}
 */
function peerCommand(s, { dataDir, ports, network, external = false }) {
  if (!network) throw new Error('peerCommand: a network member needs its node key and the engine secret');
  const addr = external ? '0.0.0.0' : '127.0.0.1';
  return {
    args: [
      ...memberArgs(network),
      '--datadir',
      dataDir,
      '--cache',
      '64',
      '--maxpeers',
      '50',
      '--db.engine',
      s.DB_ENGINE,
      '--http',
      '--http.addr',
      addr,
      '--http.port',
      String(ports.rpc),
      '--http.api',
      'eth,net,web3,admin,txpool',
      ...(external ? ['--http.vhosts', '*'] : []),
      ...metricsAndPorts(addr, ports, { external, network }),
      '--miner.gasprice',
      '1',
      '--miner.recommit',
      '200ms',
      '--ipcdisable',
      '--nodiscover',
      ...chainArgs(network.chainNeeds),
    ],
    rpcUrl: `http://127.0.0.1:${ports.rpc}`,
    metrics: { target: `127.0.0.1:${ports.metrics}`, path: '/debug/metrics/prometheus' },
  };
}

/** @type {import('../contracts').NetworkPeer} */
const network = {
  protocol: 'devp2p (eth/68 and eth/69, static peers, no discovery)',
  devKey: DEV_KEY,
  /** geth's dev genesis (geth --dev dumpgenesis) with the developer account funded, as --dev funds it. */
  writeGenesis(bin, file, { gasLimit = null } = {}) {
    const genesis = JSON.parse(execFileSync(bin, ['--dev', 'dumpgenesis'], { encoding: 'utf8' }));
    if (gasLimit) genesis.gasLimit = `0x${gasLimit.toString(16)}`; // CHAIN_LOAD: blocks that hold its traffic
    const dev = new ethers.Wallet(DEV_KEY).address.toLowerCase().slice(2);
    genesis.alloc[dev] = { balance: `0x${((1n << 256n) - 9n).toString(16)}` };
    fs.writeFileSync(file, JSON.stringify(genesis));
  },
  /** The arguments that write the genesis into a data folder (on the host, or in a compose run's container). */
  initArgs: (dataDir, genesisFile, dbEngine) => ['init', '--datadir', dataDir, '--db.engine', dbEngine, genesisFile],
  init(bin, dataDir, genesisFile, dbEngine) {
    execFileSync(bin, network.initArgs(dataDir, genesisFile, dbEngine), { stdio: 'pipe' });
  },
  /** The node's address for its peers: host 127.0.0.1 on the host, a service's name in a compose project. */
  enode(nodeKeyHex, port, host = '127.0.0.1') {
    const pub = new ethers.SigningKey(`0x${nodeKeyHex}`).publicKey.slice(4); // uncompressed, without its 04 prefix
    return `enode://${pub}@${host}:${port}`;
  },
  peerCommand,
  /** Peers that may dial in under --maxpeers: geth keeps a third of it (at least one) for peers it dials itself. */
  inboundPeers: (maxPeers) => (maxPeers === 0 ? 0 : maxPeers - Math.max(1, Math.floor(maxPeers / 3))),
  /** NODE_PROFILE=cpu: the packages of geth's networking and gossip (devp2p, eth protocol, fetchers, pool). */
  profileFrames: /^github\.com\/ethereum\/go-ethereum\/(p2p|eth\/protocols|eth\/fetcher|core\/txpool)[./]/,
  /** geth's meters: p2p bytes, and transactions delivered by peers (broadcast, or fetched after an announcement). */
  counters: {
    p2pIn: 'p2p_ingress',
    p2pOut: 'p2p_egress',
    gossipIn: ['eth_fetcher_transaction_broadcasts_in', 'eth_fetcher_transaction_replies_in'],
    gossipKnown: ['eth_fetcher_transaction_broadcasts_known', 'eth_fetcher_transaction_replies_known'],
  },
  importLog: IMPORT_LOG,
};

/** The container's ports: the ones compose/node-geth.yml publishes and Prometheus scrapes. */
const CONTAINER_PORTS = { rpc: 8545, ws: 8546, metrics: 6060, p2p: 30303, auth: 8551 };

/**
 * The node's image for the compose runtime: upstream's, or one built here from the binary above (images/geth).
 * @param {import('../contracts').Scenario} s
 * @returns {import('../contracts').ImageSpec}
 */
function image(s) {
  return {
    upstream: `ethereum/client-go:v${s.CLIENT_VERSION}`,
    local: `chainperf/geth:${s.CLIENT_VERSION}`,
    dir: 'geth',
    files: async (log) => ({ geth: await ensureBinary(s, log) }),
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: 'geth',
  summary: 'go-ethereum, built from the Go module proxy into the cache (--dev chain)',
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '1.16.7' },
  dbEngines: ['pebble', 'leveldb'],
  /** STATE profiles (src/state/build.js) restore into these runtimes. */
  stateRuntimes: ['host', 'compose', 'swarm'],
  kind: 'node',
  /** NODE_PROFILE=cpu on the host runtime: geth's own CPU profiler (--pprof), not perf. */
  profiler: 'pprof',
  /**
   * The node's own metrics: CPU for attach, requests served as a cross-check, Go GC cycles (for what differed in a
   * repetition);
   * failures and the latency summary (nanoseconds) for the Grafana dashboard's panels
   * (src/runtime/prometheus-rules.js).
   */
  metrics: {
    cpu: 'system_cpu_procload_total',
    requests: 'rpc_requests',
    gcCycles: 'system_memory_pauses_count',
    failures: 'rpc_failure',
    latency: { summary: 'rpc_duration_all', unit: 'ns' },
  },
  compose: /** @type {import('../contracts').ComposeService} */ ({
    file: path.join(__dirname, '..', '..', 'compose', 'node-geth.yml'),
    rpc: { scheme: 'http', port: CONTAINER_PORTS.rpc },
    metrics: { port: CONTAINER_PORTS.metrics, path: '/debug/metrics/prometheus' },
    /** prepared.network: a member of a local network (NETWORK_NODES), its secret at the container's path. */
    args: (s, prepared = {}) =>
      command(s, { dataDir: '/data', ports: CONTAINER_PORTS, external: true, network: prepared.network }).args,
    ports: CONTAINER_PORTS,
  }),
  binaryPath,
  ensureBinary,
  binaryVersion,
  command,
  image,
  network,
};

module.exports = client;
