'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { parseEnvText } = require('../../src/scenario/parse');
const { resolveScenario, redactScenario, redactUrl } = require('../../src/scenario/resolve');
const { KEYS } = require('../../src/scenario/keys');
const { closest } = require('../../src/util/strings');
const { ROOT, tmpDir, writeScenario } = require('../helpers');

const noEnv = {};
const resolve = (file, env = noEnv, cpuCount = 2, dockerEngine = null) =>
  resolveScenario(file, { env, cpuCount, dockerEngine });

describe('scenario parsing', () => {
  it('reads settings with their line numbers, skipping comments and blanks', () => {
    const { settings, errors } = parseEnvText('# c\n\nA=1\nexport B = two # note\nC="x # y"\nD=\'q\'\n', 'f.env');
    assert.deepEqual(errors, []);
    assert.deepEqual(settings, [
      { key: 'A', value: '1', line: 3 },
      { key: 'B', value: 'two', line: 4 },
      { key: 'C', value: 'x # y', line: 5 },
      { key: 'D', value: 'q', line: 6 },
    ]);
  });

  it('names the line of something that is not a setting, and of an unbalanced quote', () => {
    const { errors } = parseEnvText('A=1\njust words\nB="open\n', 'f.env');
    assert.equal(errors.length, 2);
    assert.match(errors[0], /^f\.env:2: not a setting/);
    assert.match(errors[1], /^f\.env:3: B: unbalanced " quote/);
  });
});

describe('scenario resolution', () => {
  let dir;
  beforeEach(() => {
    dir = tmpDir();
  });

  it('fills defaults, then chain and client defaults, then the file, then the environment', () => {
    const file = writeScenario(dir, 'layers', 'DB_CACHE_MB=256\nDURATION_S=30\n');
    const { scenario, sources, errors } = resolve(file, { DURATION_S: '20' });
    assert.deepEqual(errors, []);
    assert.equal(scenario.DB_CACHE_MB, 256);
    assert.equal(sources.DB_CACHE_MB, `${file}:1`);
    assert.equal(scenario.DURATION_S, 20, 'the environment overrides the file');
    assert.equal(sources.DURATION_S, 'environment DURATION_S');
    assert.equal(scenario.CLIENT_VERSION, '1.16.7', 'geth default');
    assert.equal(sources.CLIENT_VERSION, 'client default');
    assert.equal(scenario.WORKLOAD, 'eth-default');
    assert.equal(scenario.NAME, 'layers', 'named after the file');
    assert.equal(scenario.PEERS, KEYS.PEERS.default);
  });

  it('reports every problem in the file at once, each with file, line and key', () => {
    const file = writeScenario(
      dir,
      'bad',
      [
        'DB_CACHE=512', // unknown key, near DB_CACHE_MB
        'PEERS=many', // not an integer
        'DB_ENGINE=rocks', // not allowed
        'this is not a setting',
        'DURATION_S=0', // out of range
        'RUNTIME=hots',
      ].join('\n'),
    );
    const { scenario, errors } = resolve(file);
    assert.equal(scenario, null);
    assert.equal(errors.length, 6, errors.join('\n'));
    assert.match(
      errors.find((e) => e.includes(':1:')),
      /unknown key DB_CACHE \(did you mean DB_CACHE_MB\?\)/,
    );
    assert.match(
      errors.find((e) => e.includes(':2:')),
      /PEERS: expected an integer from 0 to 1000, got "many"/,
    );
    assert.match(
      errors.find((e) => e.includes(':3:')),
      /DB_ENGINE: expected one of pebble \| leveldb \| .*rocksdb.*, got "rocks" \(did you mean rocksdb\?\)/,
    );
    assert.match(
      errors.find((e) => e.includes(':4:')),
      /not a setting/,
    );
    assert.match(
      errors.find((e) => e.includes(':5:')),
      /DURATION_S: expected an integer from 1 to 86400/,
    );
    assert.match(
      errors.find((e) => e.includes(':6:')),
      /RUNTIME: .*did you mean host\?/,
    );
    for (const e of errors) assert.ok(e.startsWith(`${file}:`), e);
  });

  it('names a missing file by its path', () => {
    const { errors } = resolve(path.join(dir, 'nope.env'));
    assert.deepEqual(errors, [`${path.join(dir, 'nope.env')}: cannot read scenario file: no such file`]);
  });

  it('names a bad value that came from the environment', () => {
    const file = writeScenario(dir, 'ok', 'PEERS=4\n');
    const { errors } = resolve(file, { CONCURRENCY: '-3' });
    assert.equal(errors.length, 1);
    assert.match(errors[0], /^environment CONCURRENCY: CONCURRENCY: expected an integer from 1/);
  });

  it("rejects CORES above the machine's core count", () => {
    const file = writeScenario(dir, 'cores', 'CORES=3\n');
    const { errors } = resolve(file, noEnv, 2);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /CORES: 3 cores asked but this machine has 2/);
  });

  it('rejects RATE together with CONCURRENCY', () => {
    const file = writeScenario(dir, 'both', 'RATE=100\nCONCURRENCY=8\n');
    assert.match(resolve(file).errors.join('\n'), /RATE and CONCURRENCY are both set/);
    const rateOnly = writeScenario(dir, 'rate', 'RATE=100\n');
    assert.deepEqual(resolve(rateOnly).errors, []);
    // the environment's choice replaces the file's load shape
    const closed = writeScenario(dir, 'closed', 'CONCURRENCY=8\n');
    const r = resolve(closed, { RATE: '200' });
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.RATE, 200);
    const back = resolve(rateOnly, { CONCURRENCY: '4' });
    assert.deepEqual(back.errors, []);
    assert.equal(back.scenario.RATE, null);
    assert.equal(back.scenario.CONCURRENCY, 4);
  });

  it('checks WORKLOAD names against workloads/ and methods against the chain', () => {
    const file = writeScenario(dir, 'w', 'WORKLOAD=eth-defualt\n');
    assert.match(resolve(file).errors[0], /no workload "eth-defualt" .*did you mean eth-default\?/);
    const m = writeScenario(dir, 'm', 'WORKLOAD=method:eth_getBalanse\n');
    assert.match(resolve(m).errors[0], /did you mean method:eth_getBalance\?/);
    const ok = writeScenario(dir, 'm2', 'WORKLOAD=method:eth_getLogs\n');
    assert.deepEqual(resolve(ok).errors, []);
  });

  it('asks attach for an endpoint and a CPU source', () => {
    const file = writeScenario(dir, 'a', 'RUNTIME=attach\n');
    const errs = resolve(file).errors.join('\n');
    assert.match(errs, /RUNTIME=attach needs RPC_URL/);
    assert.match(errs, /needs a CPU source: NODE_PID .* or METRICS_URL/);
    const good = writeScenario(dir, 'a2', 'RUNTIME=attach\nRPC_URL=http://127.0.0.1:8545\nNODE_PID=1\n');
    assert.deepEqual(resolve(good).errors, []);
    const stray = writeScenario(dir, 'h', 'RPC_URL=http://127.0.0.1:8545\n');
    assert.match(resolve(stray).errors[0], /RPC_URL is only used with RUNTIME=attach/);
  });

  it('attach: a ws:// RPC_URL means TRANSPORT=ws, a contradicting TRANSPORT is an error, METRICS_URL stays http', () => {
    const ws = writeScenario(dir, 'w', 'RUNTIME=attach\nRPC_URL=ws://127.0.0.1:8546\nNODE_PID=1\n');
    const r = resolve(ws);
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.TRANSPORT, 'ws');
    assert.match(r.sources.TRANSPORT, /^RPC_URL \(ws:\/\/, .*w\.env:2\)$/);
    assert.equal(
      resolve(writeScenario(dir, 'h2', 'RUNTIME=attach\nRPC_URL=https://x.example/k\nNODE_PID=1\n')).scenario.TRANSPORT,
      'http',
    );
    assert.deepEqual(resolve(ws, { TRANSPORT: 'ws' }).errors, []);
    const contra = resolve(ws, { TRANSPORT: 'http' }).errors;
    assert.equal(contra.length, 1);
    assert.match(
      contra[0],
      /^environment TRANSPORT: TRANSPORT=http contradicts RPC_URL \(ws:\/\/, .*w\.env:2\): .*give an http:\/\/ or https:\/\/ RPC_URL, or leave TRANSPORT unset/,
    );
    const http = writeScenario(dir, 'h3', 'RUNTIME=attach\nRPC_URL=http://127.0.0.1:8545\nNODE_PID=1\nTRANSPORT=ws\n');
    assert.match(
      resolve(http).errors[0],
      /h3\.env:4: TRANSPORT=ws contradicts RPC_URL \(http:\/\/.*give a ws:\/\/ or wss:\/\/ RPC_URL/,
    );
    const badScheme = writeScenario(dir, 'b', 'RUNTIME=attach\nRPC_URL=ftp://x\nMETRICS_URL=ws://127.0.0.1:6060/m\n');
    const errs = resolve(badScheme).errors.join('\n');
    assert.match(errs, /RPC_URL: expected http:\/\/, https:\/\/, ws:\/\/ or wss:\/\/ URL, got "ftp:\/\/x"/);
    assert.match(errs, /METRICS_URL: expected http:\/\/ or https:\/\/ URL, got "ws:/);
  });

  it('host: TRANSPORT=ws is accepted, http by default', () => {
    const file = writeScenario(dir, 't', 'TRANSPORT=ws\nWS_CONNECTIONS=2\n');
    const r = resolve(file);
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.TRANSPORT, 'ws');
    assert.equal(resolve(writeScenario(dir, 't2', '')).scenario.TRANSPORT, 'http');
    assert.match(
      resolve(writeScenario(dir, 't3', 'TRANSPORT=wss\n')).errors[0],
      /TRANSPORT: expected one of http \| ws, got "wss" \(did you mean ws\?\)/,
    );
  });

  it('rejects a key set twice', () => {
    const file = writeScenario(dir, 'twice', 'PEERS=4\nPEERS=5\n');
    assert.match(resolve(file).errors[0], /:2: PEERS is set twice \(first on line 1\)/);
  });

  it('redacts credentials and keys in URLs', () => {
    assert.equal(
      redactUrl('https://user:pw@rpc.example.com/v3/0123456789abcdef0123456789abcdef?key=s'),
      'https://<redacted>@<redacted>.example.com/v3/<redacted>?key=<redacted>',
    );
    assert.equal(redactUrl('http://127.0.0.1:8545'), 'http://127.0.0.1:8545/');
    const r = redactScenario({ RPC_URL: 'https://x.io/abcdefghijklmnopqrstuvwxyz', PEERS: 4 });
    assert.equal(r.RPC_URL, 'https://x.io/<redacted>');
    assert.equal(r.PEERS, 4);
  });

  it('suggests the closest name only when one is close', () => {
    assert.equal(closest('DURATON_S', Object.keys(KEYS)), 'DURATION_S');
    assert.equal(closest('ZZZZZZZZZZZZ', Object.keys(KEYS)), null);
  });
});

describe('shipped scenarios', () => {
  const files = fs.readdirSync(path.join(ROOT, 'scenarios')).filter((f) => f.endsWith('.env'));

  it('include geth-dev and the seed study set', () => {
    for (const f of ['geth-dev', 'cache-32', 'cache-1024', 'peers-4', 'peers-50', 'cores-1', 'cores-2']) {
      assert.ok(files.includes(`${f}.env`), f);
    }
  });

  for (const f of files) {
    // A node measured in place is the user's: its endpoint and PID come from the environment.
    const attach = /^RUNTIME=attach$/m.test(fs.readFileSync(path.join(ROOT, 'scenarios', f), 'utf8'));
    it(`${f} resolves on a 2-core machine${attach ? " (given the node's NODE_PID from the environment)" : ''}`, () => {
      assert.deepEqual(resolve(path.join(ROOT, 'scenarios', f), attach ? { NODE_PID: '1' } : noEnv).errors, []);
    });
  }

  it('cores-2 is rejected clearly on a 1-core machine', () => {
    const { errors } = resolve(path.join(ROOT, 'scenarios', 'cores-2.env'), noEnv, 1);
    assert.match(errors.join('\n'), /cores-2\.env:\d+: CORES: 2 cores asked but this machine has 1/);
  });
});

describe('docs/scenario-keys.md', () => {
  it('documents every key and is what npm run docs writes', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'scenario-keys.md'), 'utf8');
    for (const key of Object.keys(KEYS)) assert.match(doc, new RegExp(`\`${key}\``), key);
    assert.equal(doc, require('../../scripts/gen-scenario-keys').render(), 'run npm run docs');
  });
});
