'use strict';
// `./run.sh config` as a user runs it: every <client>-dev.env rendered by
// Compose v2 and by Compose v1 with the client's flags checked in what Compose
// itself renders, anvil's host command line, a companion chainperf chose (a
// fleet's network) with its source, the usual refusals (exit 2), and
// a client added from outside the repository through the documented door:
// one module and one compose file, registered with CHAINPERF_CLIENTS.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const yaml = require('js-yaml');
const { ROOT, tmpDir } = require('../helpers');

const COMPOSES = ['docker compose', 'docker-compose'];

/** ./run.sh config <file> with env; the compose configuration is the YAML after its heading. */
function config(file, env = {}) {
  const r = spawnSync(path.join(ROOT, 'run.sh'), ['config', file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120000,
  });
  const at = r.stdout.indexOf('# compose configuration');
  const doc = at >= 0 ? yaml.load(r.stdout.slice(r.stdout.indexOf('\n', at) + 1)) : null;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, doc };
}

/** The node's command as a list: v2 renders it split, v1 as the string it splits with shlex at start. */
function nodeArgs(doc) {
  const cmd = doc.services.node.command;
  if (Array.isArray(cmd)) return cmd;
  return [...cmd.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2],
  );
}

// What each shipped scenario must render: its image and the flags its settings become.
const EXPECTED = {
  'geth-dev.env': {
    image: 'ethereum/client-go:v1.16.7',
    local: 'chainperf/geth:1.16.7',
    flags: ['--dev', '--cache 1024', '--maxpeers 50', '--db.engine pebble', '--metrics.port 6060'],
    metrics: 'node:6060',
    path: '/debug/metrics/prometheus',
  },
  'erigon-dev.env': {
    image: 'erigontech/erigon:v2.60.10',
    flags: ['--chain=dev', '--mine', '--dev.period=1', '--maxpeers=50', '--metrics.port=6060', '--datadir=/data'],
    absent: ['--cache', '--db.size.limit'],
    metrics: 'node:6060',
    path: '/debug/metrics/prometheus',
  },
  'reth-dev.env': {
    image: 'ghcr.io/paradigmxyz/reth:v1.3.12',
    flags: [
      'node --dev',
      '--dev.block-time 1s',
      '--engine.cross-block-cache-size 1024',
      '--max-outbound-peers 25',
      '--max-inbound-peers 25',
      '--metrics 0.0.0.0:9001',
    ],
    absent: ['--db.max-size'],
    metrics: 'node:9001',
    path: '/',
  },
  'nethermind-dev.env': {
    image: 'nethermind/nethermind:1.29.0',
    flags: [
      '--config spaceneth',
      '--Db.SharedBlockCacheSize 1073741824',
      '--Network.MaxActivePeers 50',
      '--Metrics.ExposePort 9091',
      '--JsonRpc.Host 0.0.0.0',
    ],
    metrics: 'node:9091',
    path: '/metrics',
  },
  'besu-dev.env': {
    image: 'hyperledger/besu:24.12.2',
    flags: [
      '--network=dev',
      '--data-storage-format=BONSAI',
      '--Xplugin-rocksdb-cache-capacity=1073741824',
      '--max-peers=50',
      '--metrics-port=9545',
    ],
    metrics: 'node:9545',
    path: '/metrics',
  },
};

describe('./run.sh config: what would run, nothing started', () => {
  for (const compose of COMPOSES) {
    for (const [file, want] of Object.entries(EXPECTED)) {
      it(`${compose}: ${file} renders with the client's image, flags, cpuset and metrics scrape`, () => {
        const r = config(`scenarios/${file}`, { COMPOSE_COMMAND: compose, RUNTIME: 'compose', DB_SIZE_LIMIT_GB: '' });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`rendered by ${compose} \\d`));
        const node = r.doc.services.node;
        // The pinned upstream image, or the one built here from the client's binary when that is what a run would use.
        assert.ok([want.image, want.local].includes(node.image), node.image);
        assert.equal(String(node.cpuset), '0');
        const args = nodeArgs(r.doc).join(' ');
        for (const f of want.flags) assert.ok(args.includes(f), `${f} in ${args}`);
        for (const f of want.absent || []) assert.ok(!args.includes(f), `no ${f} in ${args}`);
        assert.match(
          r.stdout,
          new RegExp(`metrics_path: ${want.path.replace(/\//g, '\\/')}\\n[^]*targets: \\['${want.metrics}'\\]`),
        );
        assert.match(
          r.stdout,
          new RegExp(`^node: ${node.image.replace(/[.]/g, '\\.')} \\(`, 'm'),
          "the images are listed, the node's as rendered",
        );
        assert.match(r.stdout, /^prometheus: \S+ \(/m);
        assert.deepEqual(Object.keys(r.doc.services).sort(), ['cadvisor', 'grafana', 'node', 'prometheus']);
      });
    }
  }

  it('a database size limit reaches the clients on MDBX, and is refused by one without it (exit 2)', () => {
    const erigon = config('scenarios/erigon-dev.env', { DB_SIZE_LIMIT_GB: '300' });
    assert.equal(erigon.code, 0, erigon.stderr);
    assert.ok(nodeArgs(erigon.doc).includes('--db.size.limit=300GB'));
    const reth = config('scenarios/reth-dev.env', { DB_SIZE_LIMIT_GB: '300' });
    assert.ok(nodeArgs(reth.doc).join(' ').includes('--db.max-size 300GB'));
    const besu = config('scenarios/besu-dev.env', { DB_SIZE_LIMIT_GB: '300' });
    assert.equal(besu.code, 2);
    assert.match(
      besu.stderr,
      /environment DB_SIZE_LIMIT_GB: DB_SIZE_LIMIT_GB: CLIENT=besu has no database size limit option/,
    );
    assert.equal(besu.stdout, '');
  });

  it("host runtime: anvil's command line, its label, and the scenario with each value's source", () => {
    const r = config('scenarios/anvil-dev.env', { DURATION_S: '7' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^CLIENT += anvil +# scenarios\/anvil-dev\.env:7$/m);
    assert.match(r.stdout, /^DURATION_S += 7 +# environment DURATION_S$/m);
    assert.match(r.stdout, /anvil-linux-amd64\/bin\/anvil --host 127\.0\.0\.1 --port \d+ --block-time 1 --threads 1 /);
    assert.match(r.stdout, /# anvil is a development node, not a production client/);
  });

  it('REPLICAS=3 without NETWORK_NODES: the network chainperf chose, first and with its source; NETWORK_NODES=0 refused', () => {
    const host = config('scenarios/geth-dev.env', { REPLICAS: '3', RUNTIME: 'host' });
    assert.equal(host.code, 0, host.stderr);
    assert.equal(host.stdout.split('\n')[0], '# NETWORK_NODES=1: derived, because REPLICAS=3 needs a network');
    assert.match(host.stdout, /^NETWORK_NODES += 1 +# derived \(REPLICAS=3 needs a network\)$/m);
    assert.match(host.stdout, /^REPLICAS += 3 +# environment REPLICAS$/m);
    // the compose runtime renders that network beside the fleet
    const compose = config('scenarios/geth-dev.env', { REPLICAS: '3', RUNTIME: 'compose' });
    assert.equal(compose.code, 0, compose.stderr);
    assert.match(compose.stdout, /^NETWORK_NODES += 1 +# derived \(REPLICAS=3 needs a network\)$/m);
    for (const service of ['node', 'replica-2', 'replica-3', 'haproxy', 'network-1'])
      assert.ok(compose.doc.services[service], `${service} in ${Object.keys(compose.doc.services)}`);
    assert.equal(compose.doc.services['network-2'], undefined, 'the smallest network: one node');
    const none = config('scenarios/geth-dev.env', { REPLICAS: '3', NETWORK_NODES: '0', RUNTIME: 'host' });
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /NETWORK_NODES=0 \(environment NETWORK_NODES\) starts none; set NETWORK_NODES to 1 or more/,
    );
    assert.equal(none.stdout, '');
  });

  it('secrets are redacted and a bad scenario exits 2 with the usual messages, printing nothing', () => {
    const att = config('scenarios/geth-dev.env', {
      RUNTIME: 'attach',
      RPC_URL: 'https://user:hunter2@rpc.example/v3/0123456789abcdef0123',
      NODE_PID: String(process.pid),
    });
    assert.equal(att.code, 0, att.stderr);
    assert.ok(!att.stdout.includes('hunter2') && !att.stdout.includes('0123456789abcdef0123'), att.stdout);
    const bad = config('scenarios/anvil-dev.env', { PEERS: '8', CLIENT: 'anvil' });
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /the scenario is not valid\.\n {2}environment PEERS: PEERS: CLIENT=anvil has no such setting \(anvil has no peer-to-peer networking\)/,
    );
    assert.equal(bad.stdout, '');
    const missing = config('scenarios/no-such.env');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no-such\.env: cannot read scenario file: no such file/);
  });

  describe('a client added through the documented door: one module, one compose file', () => {
    const dir = tmpDir('chainperf-fake-client-');
    const moduleFile = path.join(dir, 'fakenode.js');
    before(() => {
      fs.writeFileSync(
        path.join(dir, 'node-fakenode.yml'),
        [
          'services:',
          '  node:',
          '    image: ${NODE_IMAGE:?}',
          '    command: ${NODE_COMMAND:?chainperf sets it}',
          '    cpuset: "${NODE_CPUSET:-0}"',
          '    ports:',
          '      - "${BIND_ADDR:-127.0.0.1}:${NODE_RPC_PORT:-8545}:7545"',
          '    volumes:',
          '      - node-data:/data',
          'volumes:',
          '  node-data: {}',
          '',
        ].join('\n'),
      );
      fs.writeFileSync(
        moduleFile,
        `'use strict';
const path = require('node:path');
const PORTS = { rpc: 7545, metrics: 7070 };
function command(s, { dataDir, ports, external = false }) {
  return {
    args: ['serve', '--data', dataDir, '--cache-mb', String(s.DB_CACHE_MB), '--listen', \`\${external ? '0.0.0.0' : '127.0.0.1'}:\${ports.rpc}\`, '--metrics-port', String(ports.metrics)],
    rpcUrl: \`http://127.0.0.1:\${ports.rpc}\`,
    metrics: { target: \`127.0.0.1:\${ports.metrics}\`, path: '/stats' },
  };
}
module.exports = {
  name: 'fakenode',
  summary: 'a client that exists only in this test',
  chains: ['ethereum'],
  defaults: { CLIENT_VERSION: '0.1.0', DB_ENGINE: 'flatfile' },
  dbEngines: ['flatfile'],
  kind: 'node',
  unsupported: { PEERS: 'fakenode has no networking' },
  metrics: { cpu: null, requests: null },
  compose: {
    file: path.join(__dirname, 'node-fakenode.yml'),
    rpc: { scheme: 'http', port: PORTS.rpc },
    metrics: { port: PORTS.metrics, path: '/stats' },
    args: (s) => command(s, { dataDir: '/data', ports: PORTS, external: true }).args,
  },
  image: (s) => ({ upstream: \`example/fakenode:\${s.CLIENT_VERSION}\`, local: null }),
  binaryPath: (s) => s.CLIENT_BIN || 'fakenode',
  ensureBinary: async () => { throw new Error('not installable'); },
  binaryVersion: () => '0.1.0',
  command,
};
`,
      );
      fs.writeFileSync(
        path.join(dir, 'fake.env'),
        'CHAIN=ethereum\nCLIENT=fakenode\nRUNTIME=compose\nDB_CACHE_MB=256\n',
      );
    });

    for (const compose of COMPOSES) {
      it(`${compose}: CLIENT=fakenode is accepted, its database engine too, and its compose file renders with its command`, () => {
        const r = config(path.join(dir, 'fake.env'), { CHAINPERF_CLIENTS: moduleFile, COMPOSE_COMMAND: compose });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /^DB_ENGINE += flatfile +# client default$/m);
        assert.equal(r.doc.services.node.image, 'example/fakenode:0.1.0');
        assert.deepEqual(nodeArgs(r.doc), [
          'serve',
          '--data',
          '/data',
          '--cache-mb',
          '256',
          '--listen',
          '0.0.0.0:7545',
          '--metrics-port',
          '7070',
        ]);
        assert.match(r.stdout, /metrics_path: \/stats\n[^]*targets: \['node:7070'\]/);
      });
    }

    it('its refusals are its own, and without the registration CLIENT=fakenode is unknown', () => {
      const refused = config(path.join(dir, 'fake.env'), { CHAINPERF_CLIENTS: moduleFile, PEERS: '3' });
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /PEERS: CLIENT=fakenode has no such setting \(fakenode has no networking\)/);
      const unknown = config(path.join(dir, 'fake.env'), { CHAINPERF_CLIENTS: '' });
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /CLIENT: expected one of geth \| anvil \| .*, got "fakenode"/);
    });
  });
});
