'use strict';
// The compose files as Compose itself reads them: every scenario of
// scenarios/ rendered with `config` by Compose v2 and by Compose v1, and the
// node's flags, cpuset, ports and images checked in the result.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const yaml = require('js-yaml');
const { compose } = require('../../src/runtime/docker');
const { composeFiles, composeEnv } = require('../../src/runtime/compose');
const { resolveScenario } = require('../../src/scenario/resolve');
const clients = require('../../src/clients');
const { ROOT } = require('../helpers');

const COMPOSES = [['docker', 'compose'], ['docker-compose']];
const installed = (argv) => spawnSync(argv[0], [...argv.slice(1), 'version'], { encoding: 'utf8' }).status === 0;
const scenarios = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => f.endsWith('.env'));

describe('compose files rendered by Compose v2 and v1', () => {
  for (const argv of COMPOSES) {
    const name = argv.join(' ');
    it(`${name} is installed (.ci/run installs both)`, () => {
      assert.ok(installed(argv), `${name} is not installed: run scripts/install-docker.sh`);
    });
    for (const file of scenarios) {
      it(`${name}: ${file}`, async () => {
        const { scenario: s, errors } = resolveScenario(path.join(ROOT, 'scenarios', file), { env: { RUNTIME: 'compose' }, dockerEngine: 'test' });
        assert.deepEqual(errors, []);
        const images = { node: { ref: 'chainperf/node:test' }, prometheus: { ref: 'chainperf/prometheus:test' }, cadvisor: { ref: 'chainperf/cadvisor:test' }, grafana: { ref: 'grafana/grafana:test' } };
        const env = composeEnv(s, { images, ports: { rpc: 18545, ws: 18546, prometheus: 19090, cadvisor: 18080, grafana: 13000 }, nodeCpus: '0', promConfig: '/tmp/prometheus.yml', grafanaPassword: 'not-a-default' });
        const files = composeFiles(s, { grafana: true });
        const r = await compose(['-p', 'chainperf-config-test', '--project-directory', path.join(ROOT, 'compose'), ...files.flatMap((f) => ['-f', f]), 'config'], { env, argv });
        assert.equal(r.code, 0, r.out);
        const doc = yaml.load(r.out);
        const node = doc.services.node;
        assert.equal(node.image, 'chainperf/node:test');
        assert.equal(String(node.cpuset), '0');
        const cmd = node.command.join(' ');
        // The scenario's cache and peers become geth's own flags, as the host runtime passes them.
        const host = clients[s.CLIENT].command(s, { dataDir: '/data', ports: { rpc: 1, metrics: 2, p2p: 3, auth: 4 } }).args.join(' ');
        for (const [flag, value] of [['--cache', s.DB_CACHE_MB], ['--maxpeers', s.PEERS], ['--db.engine', s.DB_ENGINE], ['--dev.period', s.DEV_BLOCK_TIME_S]]) {
          assert.ok(cmd.includes(`${flag}=${value}`), `${flag}=${value} in ${cmd}`);
          assert.ok(host.includes(`${flag} ${value}`), `host runtime: ${flag} ${value}`);
        }
        // Every published port binds to 127.0.0.1 unless the scenario says otherwise.
        for (const [svc, def] of Object.entries(doc.services)) {
          for (const p of def.ports || []) {
            const ip = typeof p === 'string' ? p.split(':')[0] : p.host_ip;
            assert.equal(ip, '127.0.0.1', `${svc} publishes ${JSON.stringify(p)}`);
          }
        }
        assert.equal(doc.services.grafana.environment.GF_SECURITY_ADMIN_PASSWORD, 'not-a-default');
      });
    }
  }

  it('Grafana refuses to start without a password chosen for it (no default admin password)', async () => {
    const r = await compose(['-p', 'chainperf-config-test', '-f', path.join(ROOT, 'compose', 'grafana.yml'), 'config'], { env: { GRAFANA_ADMIN_PASSWORD: '' }, argv: COMPOSES[0] });
    assert.notEqual(r.code, 0);
    assert.match(r.out, /chainperf sets a random admin password per run/);
  });
});
