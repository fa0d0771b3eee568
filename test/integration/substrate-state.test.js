'use strict';
// Substrate STATE profiles. First, on chopsticks (installed by .ci/run): a
// real runtime reads the accounts the state spec writes, with the balances
// chainperf derives, and the total issuance that matches them. Then
// STATE=small end to end on polkadot-omni-node, when its binary is built (a
// real node; building it takes about 46 minutes, so .ci/run does not: the test
// says so as pending, with the command that builds it).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { runWatchingNode, processesWith, fileListing } = require('./harness');
const { schemaErrors, ROOT, tmpDir } = require('../helpers');
const { cacheDir } = require('../../src/install/cache');
const { freePorts } = require('../../src/util/net');
const { ensureChainSpec } = require('../../src/chains/substrate/specs');
const { fundedSpec } = require('../../src/chains/substrate/accounts');
const {
  writeStateSpec,
  ensureSubstrateState,
  stateDir,
  specKey,
  PROFILES,
} = require('../../src/chains/substrate/state');
const { stateAccountHex, stateIssuance, STATE_FREE } = require('../../src/chains/substrate/state-accounts');
const chopsticks = require('../../src/clients/chopsticks');

const log = (m) => process.stderr.write(`${m}\n`);
const OMNI =
  process.env.CHAINPERF_OMNI_NODE_BIN || cacheDir('polkadot-omni-node', '0.24.0', 'bin', 'polkadot-omni-node');

describe('Substrate state spec read by a real runtime (chopsticks)', () => {
  let child;
  let api;
  let issuedBefore;
  const n = 3000;

  before(async function () {
    this.timeout(300000);
    const dir = tmpDir();
    const src = await ensureChainSpec('bridge-hub-polkadot', log);
    const runSpec = path.join(dir, 'run.json');
    await fundedSpec(src, runSpec, { accounts: 4 });
    const { TOTAL_ISSUANCE } = require('../../src/chains/substrate/accounts');
    const { u8aToBn, hexToU8a } = require('@polkadot/util');
    issuedBefore = BigInt(
      u8aToBn(hexToU8a(JSON.parse(fs.readFileSync(runSpec, 'utf8')).genesis.raw.top[TOTAL_ISSUANCE]), {
        isLe: true,
      }).toString(),
    );
    const buildSpec = path.join(dir, 'build.json');
    await writeStateSpec(runSpec, buildSpec, n);
    const s = { CLIENT_VERSION: chopsticks.defaults.CLIENT_VERSION, CLIENT_BIN: '' };
    const bin = await chopsticks.ensureBinary(s, log);
    const ports = await freePorts(['rpc']);
    const cmd = chopsticks.command(s, { ports, chainSpec: buildSpec });
    child = spawn(bin, cmd.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-2000);
    });
    const { ApiPromise, WsProvider } = require('@polkadot/api');
    const deadline = Date.now() + 240000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`chopsticks exited: ${err}`);
      try {
        const provider = new WsProvider(cmd.rpcUrl, false);
        await provider.connect();
        api = await ApiPromise.create({ provider, throwOnConnect: true, noInitWarn: true });
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`chopsticks did not answer in 240 s: ${err}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  });

  after(async () => {
    if (api) await api.disconnect();
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('state account i holds STATE_FREE + i, from the first to the last', async () => {
    for (const i of [0, 1, 1234, n - 1]) {
      const info = await api.query.system.account(stateAccountHex(i));
      assert.equal(info.data.free.toBigInt(), STATE_FREE + BigInt(i), `account ${i}`);
      assert.equal(info.providers.toNumber(), 1);
    }
    const none = await api.query.system.account(stateAccountHex(n));
    assert.equal(none.data.free.toBigInt(), 0n, 'account n is not in the state');
  });

  it("the total issuance is the spec's plus the state accounts' balances", async () => {
    assert.equal((await api.query.balances.totalIssuance()).toBigInt(), issuedBefore + stateIssuance(n));
  });
});

describe('STATE=small on polkadot-omni-node: built once, restored for a run', function () {
  this.timeout(900000);
  let res;
  let run;
  let pool;
  let st;
  let cachedBefore;
  let nodeCmd = null;

  before(async function () {
    if (!fs.existsSync(OMNI)) {
      log(
        `  polkadot-omni-node is not built at ${OMNI}: build it with ./run.sh install scenarios/polkadot-omni-dev.env (about 46 minutes, once)`,
      );
      this.skip();
    }
    const version = execFileSync(OMNI, ['--version'], { encoding: 'utf8' }).match(/(\d+\.\d+\.\d+)/)[1];
    const src = await ensureChainSpec('bridge-hub-polkadot', log);
    st = await ensureSubstrateState({
      profile: 'small',
      client: 'polkadot-omni-node',
      bin: OMNI,
      version,
      engine: 'rocksdb',
      specSource: src,
      log,
    });
    assert.equal(st.dir, stateDir('small', 'polkadot-omni-node', version, 'rocksdb', specKey(src)));
    cachedBefore = fileListing(st.dir);
    const env = {
      CLIENT_BIN: OMNI,
      STATE: 'small',
      STATE_DISTRIBUTION: 'skewed',
      MEMORY_MB: '2048',
      WORKLOAD: 'dot-state',
      DURATION_S: '8',
      WARMUP_S: '3',
      IDLE_S: '3',
      HISTORY_TRANSFERS: '8',
      HISTORY_ACCOUNTS: '4',
      CONCURRENCY: '8',
      MAX_ERROR_RATE: '0',
      ARCHIVE: 'none',
    };
    const omniOf = (tmp) =>
      processesWith(tmp).find((x) => /polkadot-omni-node.*--chain/.test(x.cmd) && !x.cmd.startsWith('sh '));
    ({ res, run, pool, nodeCmd } = await runWatchingNode(
      path.join(ROOT, 'scenarios', 'polkadot-omni-dev.env'),
      env,
      omniOf,
    ));
  });

  it("the state holds the profile's accounts, built by the node itself", () => {
    const m = st.manifest;
    assert.equal(m.accounts, PROFILES.small.accounts);
    assert.ok(m.blocks > 256, "the builder authored blocks past the pruning window, so the genesis's journal is gone");
    assert.ok(m.start_peak_rss_bytes > 0 && m.start_seconds > 0, 'a start on the built state measured');
    assert.match(m.genesis_hash, /^0x[0-9a-f]{64}$/);
    assert.ok(m.size_bytes > 0);
    // the genesis is in RocksDB's table files, not in a write-ahead log a run's node would replay into memory
    const logs = execFileSync('find', [st.dataDir, '-name', '*.log', '-size', '+1M'], { encoding: 'utf8' }).trim();
    assert.equal(logs, '', 'no large write-ahead log left');
  });

  it('completes without a failed request, account reads across the state, run.json valid', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.figures.requests_failed, 0);
    assert.equal(run.state.profile, 'small');
    assert.equal(run.state.accounts, PROFILES.small.accounts);
    assert.equal(run.state.history, null);
    assert.deepEqual(pool.state_space, { accounts: PROFILES.small.accounts, slots: 0, distribution: 'skewed' });
    assert.ok(run.history, 'the run created its own history on the copy');
  });

  it("the node started on a copy in the run's folder with the spec without the state accounts; the cache is unchanged", () => {
    assert.ok(nodeCmd, "the run's node was seen");
    assert.ok(nodeCmd.includes(`--chain ${path.join(st.dir, 'spec.json')}`), nodeCmd);
    assert.ok(!nodeCmd.includes(`--base-path ${st.dir}`), 'not the cached data directory');
    assert.equal(fileListing(st.dir), cachedBefore);
    assert.equal(run.provenance.client.name, 'polkadot-omni-node');
  });
});
