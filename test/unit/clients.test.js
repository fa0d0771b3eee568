'use strict';
// The client registry as the door to CLIENT: values derived from it, every
// module complete, the scenario keys a client has no setting for refused when
// set (never by default), and each client's flags built from the scenario.

const assert = require('node:assert/strict');
const clients = require('../../src/clients');
const chains = require('../../src/chains');
const { KEYS } = require('../../src/scenario/keys');
const { resolveScenario } = require('../../src/scenario/resolve');
const { shellJoin } = require('../../src/runtime/compose-render');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, tmpDir, writeScenario } = require('../helpers');

const resolve = (file, env = {}) => resolveScenario(file, { env, cpuCount: 2, dockerEngine: null });

describe('client registry', () => {
  const dir = tmpDir();

  it('CHAIN, CLIENT and DB_ENGINE take what the registries hold, nothing typed twice', () => {
    assert.deepEqual(KEYS.CLIENT.values, Object.keys(clients));
    assert.deepEqual(KEYS.CHAIN.values, Object.keys(chains));
    for (const c of Object.values(clients)) {
      for (const e of c.dbEngines || []) assert.ok(KEYS.DB_ENGINE.values.includes(e), `${c.name}: ${e}`);
      assert.match(KEYS.CLIENT.doc, new RegExp(`\\b${c.name} \\(`));
    }
    const { errors } = resolve(writeScenario(dir, 'typo', 'CLIENT=erigom\n'));
    assert.match(errors[0], /CLIENT: expected one of .*erigon.*, got "erigom" \(did you mean erigon\?\)/);
  });

  it('every client module has the contract: name, chains, kind, defaults, install and command', () => {
    for (const [name, c] of Object.entries(clients)) {
      assert.equal(c.name, name);
      assert.ok(
        c.chains.every((ch) => chains[ch]),
        `${name}: chains`,
      );
      assert.ok(['node', 'development node', 'development server'].includes(c.kind), `${name}: kind ${c.kind}`);
      for (const fn of ['command', 'ensureBinary', 'binaryVersion'])
        assert.equal(typeof c[fn], 'function', `${name}.${fn}`);
      if (c.dbEngines)
        assert.ok(!c.defaults.DB_ENGINE || c.dbEngines.includes(c.defaults.DB_ENGINE), `${name}: default engine`);
      if (c.compose) {
        assert.equal(typeof c.compose.args, 'function', `${name}.compose.args`);
        assert.ok(c.compose.file.endsWith(`node-${name}.yml`), c.compose.file);
        assert.ok(c.compose.metrics.port > 0 && c.compose.rpc.port > 0);
        assert.ok(c.image, `${name}: a compose client names its image`);
      }
    }
  });

  for (const name of ['anvil', 'erigon', 'reth', 'nethermind', 'besu']) {
    it(`${name}: the shipped scenario resolves with no refusal from defaults`, () => {
      const { scenario, errors } = resolve(`scenarios/${name}-dev.env`, name === 'anvil' ? {} : { RUNTIME: 'compose' });
      assert.deepEqual(errors, []);
      assert.equal(scenario.CLIENT, name);
      assert.equal(scenario.DB_ENGINE, clients[name].defaults.DB_ENGINE);
    });
  }

  it("a key the client has no setting for is refused when set, with the client's reason", () => {
    const anvil = writeScenario(
      dir,
      'anvil',
      'CLIENT=anvil\nDB_CACHE_MB=512\nPEERS=4\nDB_ENGINE=pebble\nRUNTIME=host\n',
    );
    const { errors } = resolve(anvil);
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.match(
      errors.join('\n'),
      /:2: DB_CACHE_MB: CLIENT=anvil has no such setting \(anvil keeps the chain in memory/,
    );
    assert.match(
      errors.join('\n'),
      /:3: PEERS: CLIENT=anvil has no such setting \(anvil has no peer-to-peer networking\)/,
    );
    assert.match(errors.join('\n'), /:4: DB_ENGINE: anvil takes memory, not pebble/);
    const erigon = resolve(writeScenario(dir, 'erigon', 'CLIENT=erigon\nRUNTIME=compose\n'), { DB_CACHE_MB: '2048' });
    assert.match(erigon.errors.join('\n'), /environment DB_CACHE_MB: DB_CACHE_MB: CLIENT=erigon has no such setting/);
    const geth = resolve(writeScenario(dir, 'geth', 'CLIENT=geth\nRUNTIME=host\nDB_SIZE_LIMIT_GB=100\n'));
    assert.match(geth.errors.join('\n'), /DB_SIZE_LIMIT_GB: CLIENT=geth has no database size limit option/);
    const besu = resolve(writeScenario(dir, 'besu', 'CLIENT=besu\nRUNTIME=compose\nDEV_BLOCK_TIME_S=5\n'));
    assert.match(besu.errors.join('\n'), /DEV_BLOCK_TIME_S: CLIENT=besu has no such setting/);
    const hostReth = resolve(writeScenario(dir, 'reth', 'CLIENT=reth\nRUNTIME=host\n'));
    assert.match(
      hostReth.errors.join('\n'),
      /:2: RUNTIME=host: CLIENT=reth is not built or downloaded by chainperf: set CLIENT_BIN/,
    );
    assert.deepEqual(
      resolve(writeScenario(dir, 'reth2', 'CLIENT=reth\nRUNTIME=host\nCLIENT_BIN=/bin/true\n')).errors,
      [],
    );
  });

  it('each EVM client maps DB_CACHE_MB, PEERS and the database settings to its own flags', () => {
    const s = { DB_CACHE_MB: 512, PEERS: 7, DB_ENGINE: null, DEV_BLOCK_TIME_S: 3, CORES: 1, DB_SIZE_LIMIT_GB: 200 };
    const where = { dataDir: '/data', ports: { rpc: 1, ws: 2, metrics: 3, p2p: 4, auth: 5 } };
    const args = (name, engine) => clients[name].command({ ...s, DB_ENGINE: engine }, where).args.join(' ');
    assert.match(
      args('reth', 'mdbx'),
      /--engine\.cross-block-cache-size 512 --max-outbound-peers 3 --max-inbound-peers 4 --db\.max-size 200GB/,
    );
    assert.match(args('reth', 'mdbx'), /^node --dev --dev\.block-time 3s/);
    assert.match(args('erigon', 'mdbx'), /--chain=dev --mine --dev\.period=3 .*--maxpeers=7 --db\.size\.limit=200GB/);
    assert.doesNotMatch(args('erigon', 'mdbx'), /cache/);
    assert.match(args('nethermind', 'rocksdb'), /--Db\.SharedBlockCacheSize 536870912 --Network\.MaxActivePeers 7/);
    assert.match(
      args('besu', 'forest'),
      /--data-storage-format=FOREST --Xplugin-rocksdb-cache-capacity=536870912 --max-peers=7/,
    );
    assert.match(args('anvil', 'memory'), /--block-time 3 --threads 1/);
    assert.match(args('geth', 'pebble'), /--cache 512 --maxpeers 7 --db\.engine pebble/);
  });

  it("the container command survives Compose's splitting: quoted where a shell would split or expand", () => {
    assert.equal(shellJoin(['--a', 'b c', '*', "it's", '--x=1,2']), "--a 'b c' '*' 'it'\\''s' --x=1,2");
  });

  it('generic modules reach a chain family only through the chain hooks (no family named in their code)', () => {
    const own = ['src/chains/', 'src/clients/', 'src/workload/processors/'];
    const files = [];
    const walk = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const f = path.join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (f.endsWith('.js')) files.push(f);
      }
    };
    walk(path.join(ROOT, 'src'));
    const generic = files.filter((f) => !own.some((d) => path.relative(ROOT, f).startsWith(d)));
    assert.ok(generic.length > 50, 'the walk found the sources');
    const named = /\.substrate\b|family\s*[!=]==|['"]substrate['"]|chains\/substrate\//;
    for (const f of generic) {
      const code = fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l));
      const hits = code.filter((l) => named.test(l.replace(/\s\/\/ .*$/, '')));
      assert.deepEqual(hits, [], path.relative(ROOT, f));
    }
  });

  it("the Substrate family's hooks carry its records, warnings and summary lines", () => {
    const chain = chains.polkadot;
    const part = {
      substrate: {
        ops: { 'at.system.events': { ok: 4, failed: 1 } },
        op_errors: {},
        notifications: 2,
        tx: { submitted: 3, included: 2, failed: 1, inclusion_ms: [100, 300], errors: { 'x: y': 1 } },
      },
    };
    const { fields, writes } = chain.windowRecords([part, {}], 10);
    assert.equal(fields.substrate.operations_ok, 4);
    assert.deepEqual(
      { tps: writes.tps, submitted_tps: writes.submitted_tps, failed: writes.failed },
      { tps: 0.2, submitted_tps: 0.3, failed: 1 },
    );
    assert.equal(chain.windowRecords([{}], 10), null, 'no Substrate processor, no records');
    assert.deepEqual(chain.runWarnings({ substrate: fields.substrate }), [
      '1 operations failed in the window (see substrate.operation_errors)',
    ]);
    assert.match(
      chain.reportLines({ substrate: fields.substrate }).join('\n'),
      /4 operations of the mix completed in the window; 2 new-head notifications/,
    );
    assert.equal(
      chains.ethereum.windowRecords,
      undefined,
      'the Ethereum family keeps its records in the generic figures',
    );
  });
});
