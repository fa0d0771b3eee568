'use strict';
// CLIENT=anvil end to end in the host runtime, as a user runs it: a second EVM
// implementation, installed from npm into the cache, labelled a development
// node in every report, with the Ethereum history, harvest and mix unchanged.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, processesWith, readRun } = require('./harness');
const { schemaErrors, ROOT, tmpDir } = require('../helpers');
const clients = require('../../src/clients');

const SHORT = {
  DURATION_S: '6',
  WARMUP_S: '2',
  IDLE_S: '3',
  HISTORY_TRANSFERS: '20',
  HISTORY_CONTRACT_CALLS: '10',
  CONCURRENCY: '8',
  MAX_ERROR_RATE: '0',
};

describe('host runtime: anvil (a development node) end to end', () => {
  let res;
  let run;
  let tmp;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'anvil-dev.env'), SHORT);
    tmp = r.tmp;
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 with run.json valid against the schema and the report folder last on stdout', () => {
    assert.equal(res.code, 0);
    assert.match(res.reportDir, /reports\/anvil-dev\/\d{8}-\d{6}-[0-9a-f]{4}$/);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
  });

  it("runs the anvil binary from the npm package, started with the scenario's block time and cores", () => {
    const c = run.provenance.client;
    assert.equal(c.name, 'anvil');
    assert.equal(c.version, '1.7.1');
    assert.match(c.binary, /@foundry-rs\/anvil-linux-amd64\/bin\/anvil$/);
    assert.match(c.binary_sha256, /^[0-9a-f]{64}$/);
    assert.match(
      res.stderr,
      /starting anvil 1\.7\.1 on cpus 0: anvil --host 127\.0\.0\.1 --port \d+ --block-time 1 --threads 1 /,
    );
  });

  it('is labelled a development node in run.json, its warnings and summary.md', () => {
    assert.equal(run.provenance.client.kind, 'development node');
    assert.ok(run.warnings.includes(clients.anvil.warning), run.warnings.join('\n'));
    const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    assert.match(md.split('\n')[2], /^\*\*anvil is a development node, not a production node/);
  });

  it('created history, harvested it and measured the default mix without a failed request', () => {
    assert.ok(run.history.txs >= 20 + 10 && run.history.contract, `history: ${run.history.txs} transactions`);
    assert.ok(run.figures.requests_ok > 100, `requests_ok ${run.figures.requests_ok}`);
    assert.equal(run.figures.requests_failed, 0, JSON.stringify(run.errors));
    assert.equal(Object.keys(run.figures.methods).length, 10);
    assert.ok(run.figures.cpu_ms_per_request > 0 && run.node.cpu_user_s > 0);
    assert.equal(run.verdict.pass, true);
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
    assert.ok(!fs.existsSync(`/proc/${run.node.pid}`), 'anvil is gone');
  });
});

describe('history funded by a dev account whose key the client module gives (devKey: besu, erigon), on anvil', () => {
  const { spawn } = require('node:child_process');
  const { createHistory } = require('../../src/chains/ethereum/history');
  const { rpcCall } = require('../../src/util/rpc');
  const { freePort } = require('../../src/util/net');
  // anvil's second well-known dev account: not the first unlocked account, so the test tells the two ways apart.
  const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
  const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  let child;
  let url;

  before(async () => {
    const s = { CLIENT_VERSION: clients.anvil.defaults.CLIENT_VERSION, CLIENT_BIN: '', DEV_BLOCK_TIME_S: 1, CORES: 1 };
    const bin = await clients.anvil.ensureBinary(s, () => {});
    const port = await freePort();
    child = spawn(bin, clients.anvil.command(s, { ports: { rpc: port } }).args, { stdio: 'ignore' });
    url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      try {
        await rpcCall(url, 'eth_chainId', [], { timeoutMs: 1000 });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('anvil did not answer');
  });

  after(() => child && child.kill('SIGKILL'));

  it('signs the funding and the deployment with that key, not through an unlocked account', async () => {
    const before = Number(await rpcCall(url, 'eth_getTransactionCount', [ADDRESS, 'latest']));
    const h = await createHistory(url, { accounts: 3, transfers: 8, calls: 8, seed: 1, devKey: KEY });
    assert.equal(h.accounts[0], ADDRESS);
    assert.equal(h.txs, 3 + 1 + 8 + 8);
    assert.equal(
      Number(await rpcCall(url, 'eth_getTransactionCount', [ADDRESS, 'latest'])) - before,
      4,
      "three fundings and the deployment came from the key's account",
    );
    assert.notEqual(await rpcCall(url, 'eth_getCode', [h.contract, 'latest']), '0x');
  });
});

describe('two installs of the same client at once', () => {
  it('both succeed: the second waits for the first and finds the client installed (a fresh cache)', async () => {
    const cache = tmpDir('chainperf-cache-');
    const install = () =>
      startRun(['install', path.join(ROOT, 'scenarios', 'anvil-dev.env')], { CHAINPERF_CACHE: cache }).done;
    const [a, b] = await Promise.all([install(), install()]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const both = a.stderr + b.stderr;
    assert.equal((both.match(/installing anvil 1\.7\.1 into [^\n]*: usually about/g) || []).length, 1, both);
    assert.match(both, /installing anvil 1\.7\.1: waiting for another chainperf run/);
    const bin = path.join(cache, 'anvil', '1.7.1', 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil');
    assert.ok(fs.existsSync(bin), `${bin} installed into the fresh cache`);
  });
});
