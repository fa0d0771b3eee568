'use strict';
// The compose files as Compose itself reads them: every scenario of
// scenarios/ rendered with `config` by Compose v2 and by Compose v1 (EVM
// scenarios with their client's service, Substrate scenarios with the
// parity/polkadot service), the node's command checked to be its client
// module's argument list, and its flags, cpuset, ports, chain spec and images.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const yaml = require('js-yaml');
const { compose } = require('../../src/platform/docker');
const { composeFiles, composeEnv, shellJoin } = require('../../src/runtime/compose-render');
const { resolveScenario } = require('../../src/scenario/resolve');
const { writeNetworkFile } = require('../../src/network/compose-network');
const { parseEnvFile } = require('../../src/scenario/parse');
const clients = require('../../src/clients');
const chains = require('../../src/chains');
const { ROOT } = require('../helpers');

const COMPOSES = [['docker', 'compose'], ['docker-compose']];
const installed = (argv) => spawnSync(argv[0], [...argv.slice(1), 'version'], { encoding: 'utf8' }).status === 0;
const scenarioFiles = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => f.endsWith('.env'));
const fileRuntime = (f) =>
  (parseEnvFile(path.join(ROOT, 'scenarios', f)).settings.find((x) => x.key === 'RUNTIME') || {}).value;
const fileClient = (f) =>
  (parseEnvFile(path.join(ROOT, 'scenarios', f)).settings.find((x) => x.key === 'CLIENT') || {}).value;
// Scenarios that measure a deployment in place start nothing: there is no compose project to render.
const attachOnly = scenarioFiles.filter((f) => fileRuntime(f) === 'attach');
const fileState = (f) =>
  (parseEnvFile(path.join(ROOT, 'scenarios', f)).settings.find((x) => x.key === 'STATE') || {}).value || 'dev';
// A client without a compose service (anvil) runs on the host only; so does a STATE profile its client restores
// on the host only (polkadot-omni-node's: the Substrate cache pair), which the parity/polkadot service cannot take.
const stateHostOnly = (f) =>
  fileState(f) !== 'dev' && clients[fileClient(f)] && !(clients[fileClient(f)].stateRuntimes || []).includes('compose');
// A scenario on a local network (NETWORK_NODES) has its network's services: rendered in a test of its own below.
// A fleet (REPLICAS, BALANCER=haproxy) starts in the host runtime only, for now (docs/fleets.md).
const fileNetwork = (f) =>
  Number(
    (parseEnvFile(path.join(ROOT, 'scenarios', f)).settings.find((x) => x.key === 'NETWORK_NODES') || {}).value || 0,
  );
const hostOnly = scenarioFiles.filter(
  (f) =>
    fileNetwork(f) > 0 ||
    (fileClient(f) &&
      clients[fileClient(f)] &&
      clients[fileClient(f)].chains.includes('ethereum') &&
      !clients[fileClient(f)].compose) ||
    stateHostOnly(f),
);
const rendered = scenarioFiles.filter((f) => !attachOnly.includes(f) && !hostOnly.includes(f));

/** The scenario resolved for the compose runtime; Substrate scenarios with the parity/polkadot node. */
function composeScenario(file) {
  const chain =
    (parseEnvFile(path.join(ROOT, 'scenarios', file)).settings.find((x) => x.key === 'CHAIN') || {}).value ||
    'ethereum';
  const substrate = chains[chain].family === 'substrate';
  const env = { RUNTIME: 'compose', ...(substrate ? { CLIENT: 'polkadot' } : {}) };
  return { substrate, ...resolveScenario(path.join(ROOT, 'scenarios', file), { env, dockerEngine: 'test' }) };
}

async function render(argv, s, prepared, { extraFiles = [] } = {}) {
  const images = {
    node: { ref: 'chainperf/node:test' },
    prometheus: { ref: 'chainperf/prometheus:test' },
    cadvisor: { ref: 'chainperf/cadvisor:test' },
    grafana: { ref: 'grafana/grafana:test' },
  };
  const env = composeEnv(s, {
    images,
    ports: { rpc: 18545, ws: 18546, prometheus: 19090, cadvisor: 18080, grafana: 13000 },
    nodeCpus: '0',
    promConfig: '/tmp/prometheus.yml',
    grafanaPassword: 'not-a-default',
    prepared,
  });
  const files = composeFiles(s, { grafana: true, chainSpecFile: env.CHAIN_SPEC_FILE || null, extraFiles });
  const r = await compose(
    [
      '-p',
      'chainperf-config-test',
      '--project-directory',
      path.join(ROOT, 'compose'),
      ...files.flatMap((f) => ['-f', f]),
      'config',
    ],
    { env, argv },
  );
  assert.equal(r.code, 0, r.out);
  return yaml.load(r.out);
}

function assertLoopbackOnly(doc) {
  for (const [svc, def] of Object.entries(doc.services)) {
    for (const p of def.ports || []) {
      const ip = typeof p === 'string' ? p.split(':')[0] : p.host_ip;
      assert.equal(ip, '127.0.0.1', `${svc} publishes ${JSON.stringify(p)}`);
    }
  }
}

describe('compose files rendered by Compose v2 and v1', () => {
  it('the scenarios left out measure a running deployment (RUNTIME=attach), name a host-only client or a network', () => {
    for (const f of attachOnly) assert.equal(fileRuntime(f), 'attach', f);
    assert.deepEqual([...hostOnly].sort(), [
      'anvil-dev.env',
      'balancer-haproxy.env',
      'balancer-none.env',
      'peers-4.env',
      'peers-50.env',
      'substrate-cache-1024.env',
      'substrate-cache-32.env',
    ]);
    assert.ok(rendered.length >= 10, rendered.join(' '));
  });

  for (const argv of COMPOSES) {
    const name = argv.join(' ');
    it(`${name} is installed (.ci/run installs both)`, () => {
      assert.ok(installed(argv), `${name} is not installed: run scripts/install-docker.sh`);
    });
    for (const file of rendered) {
      it(`${name}: ${file}`, async () => {
        const { substrate, scenario: s, errors } = composeScenario(file);
        assert.deepEqual(errors, []);
        // A Substrate node starts from the funded copy of its spec that chainperf writes; a file mounted into the
        // container.
        const prepared = substrate ? { chainSpec: '/tmp/chainperf-test/bridge-hub-polkadot.chainperf.json' } : {};
        const doc = await render(argv, s, prepared);
        const node = doc.services.node;
        assert.equal(node.image, 'chainperf/node:test');
        assert.equal(String(node.cpuset), '0');
        // The container's command is the client module's argument list, as Compose hands it over
        // (v2 renders it split, v1 as the string it splits at start).
        const args = clients[s.CLIENT].compose.args(s, prepared);
        if (Array.isArray(node.command)) assert.deepEqual(node.command, args);
        else assert.equal(node.command, shellJoin(args));
        const cmd = args.join(' ');
        // The scenario's cache, peers and database become the client's own flags, as the host runtime passes them.
        const where = {
          dataDir: '/data',
          ports: { rpc: 1, ws: 5, metrics: 2, p2p: 3, auth: 4 },
          chainSpec: prepared.chainSpec,
        };
        const host = clients[s.CLIENT].command(s, where).args.join(' ');
        const flags = substrate
          ? [
              ['--db-cache', s.DB_CACHE_MB],
              ['--database', s.DB_ENGINE],
              ['--trie-cache-size', s.TRIE_CACHE_MB * 1048576],
              ['--in-peers', Math.ceil(s.PEERS / 2)],
              ['--out-peers', Math.floor(s.PEERS / 2)],
            ]
          : [
              ['--cache', s.DB_CACHE_MB],
              ['--maxpeers', s.PEERS],
              ['--db.engine', s.DB_ENGINE],
              ['--dev.period', s.DEV_BLOCK_TIME_S],
            ];
        for (const [flag, value] of s.CLIENT === 'geth' || substrate ? flags : []) {
          assert.ok(cmd.includes(`${flag} ${value}`), `${flag} ${value} in ${cmd}`);
          assert.ok(host.includes(`${flag} ${value}`), `host runtime: ${flag} ${value} in ${host}`);
        }
        if (substrate) {
          assert.match(cmd, /--chain \/chainperf\/chain-spec\.json/);
          assert.ok(
            node.volumes.some((v) =>
              (typeof v === 'string' ? v : `${v.source}:${v.target}`).startsWith(
                '/tmp/chainperf-test/bridge-hub-polkadot.chainperf.json:/chainperf/chain-spec.json',
              ),
            ),
            JSON.stringify(node.volumes),
          );
          assert.match(cmd, /--rpc-max-connections \d{4,}/, 'RPC limits raised over the default 100');
          assert.match(cmd, /--prometheus-port 9615 .*--rpc-external --prometheus-external/);
        }
        assertLoopbackOnly(doc);
        assert.equal(doc.services.grafana.environment.GF_SECURITY_ADMIN_PASSWORD, 'not-a-default');
      });
    }
  }

  for (const argv of COMPOSES)
    it(`${argv.join(' ')}: peers-4.env in the compose runtime: 8 network nodes beside a node that is their member`, async () => {
      const { scenario: s, errors } = composeScenario('peers-4.env');
      assert.deepEqual(errors, []);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-network-config-'));
      const networkFile = path.join(dir, 'network.yml');
      const peers = Array.from({ length: s.NETWORK_NODES }, (_, k) => ({
        name: `network-${k + 1}`,
        nodeKeyHex: `${'c'.repeat(63)}${k + 1}`, // not all digits: Compose v1 prints such a word unquoted
        ports: { rpc: 28000 + k, auth: 29000 + k, metrics: 30000 + k },
      }));
      const client = clients.geth;
      const nodePorts = { auth: 18551, metrics: 16060 };
      writeNetworkFile(networkFile, s, { client, dir, imageRef: 'chainperf/node:test', cpus: '1', nodePorts, peers });
      const member = { nodeKeyHex: 'ab'.repeat(32), jwtFile: '/chainperf-network/jwt.hex' };
      const doc = await render(argv, s, { network: member }, { extraFiles: [networkFile] });
      fs.rmSync(dir, { recursive: true, force: true });
      const cmd = (svc) => [doc.services[svc].command].flat().join(' ');
      // The node: a member (no --dev), its engine API reachable through the port published on the loopback.
      assert.doesNotMatch(cmd('node'), /--dev\b/);
      assert.match(
        cmd('node'),
        /--networkid 1337 .*--nodekeyhex (ab){32} --authrpc.jwtsecret \/chainperf-network\/jwt.hex/,
      );
      assert.match(cmd('node'), /--maxpeers 4 /);
      assert.match(cmd('node'), /--authrpc.addr 0.0.0.0 --authrpc.vhosts '?\*'?/);
      const targets = (svc) =>
        doc.services[svc].ports.map((p) => parseInt(typeof p === 'string' ? p.split(':')[2] : p.target, 10));
      assert.deepEqual(targets('node').sort(), [6060, 8545, 8546, 8551]);
      for (const p of peers) {
        assert.equal(doc.services[p.name].image, 'chainperf/node:test');
        assert.equal(String(doc.services[p.name].cpuset), '1');
        assert.match(cmd(p.name), new RegExp(`--nodekeyhex ${p.nodeKeyHex} `));
        assert.match(cmd(p.name), /--http.api eth,net,web3,admin,txpool /);
        assert.deepEqual(targets(p.name).sort(), [6060, 8545, 8551]);
        assert.ok(doc.volumes[`${p.name}-data`], `${p.name} has its own data volume`);
      }
      assertLoopbackOnly(doc);
    });

  it('a Substrate network the node knows by name needs no spec file', async () => {
    const { scenario: s, errors } = composeScenario('polkadot-dev.env');
    assert.deepEqual(errors, []);
    const doc = await render(COMPOSES[0], { ...s, CHAIN_SPEC: 'polkadot' }, { chainSpec: 'polkadot' });
    assert.match(doc.services.node.command.join(' '), /--chain polkadot /);
    assert.deepEqual(
      doc.services.node.volumes.map((v) => v.target || v.split(':')[1]),
      ['/data'],
    );
  });

  it('Grafana refuses to start without a password chosen for it (no default admin password)', async () => {
    const r = await compose(
      ['-p', 'chainperf-config-test', '-f', path.join(ROOT, 'compose', 'grafana.yml'), 'config'],
      { env: { GRAFANA_ADMIN_PASSWORD: '' }, argv: COMPOSES[0] },
    );
    assert.notEqual(r.code, 0);
    assert.match(r.out, /chainperf sets a random admin password per run/);
  });
});
