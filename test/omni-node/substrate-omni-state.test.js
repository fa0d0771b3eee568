'use strict';
// STATE=small end to end on polkadot-omni-node (npm run test:omni-node): built
// once, restored for a run. Not part of npm test: building the node takes
// about 46 minutes on 2 cores, longer than .ci/run can spend, so this file
// runs where the node is built and fails (never skips) where it is not.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { runWatchingNode, processesWith, fileListing } = require('../integration/harness');
const { schemaErrors, ROOT } = require('../helpers');
const { cacheDir } = require('../../src/install/cache');
const { ensureChainSpec } = require('../../src/chains/substrate/specs');
const { ensureSubstrateState, stateDir, specKey, PROFILES } = require('../../src/chains/substrate/state');

const log = (m) => process.stderr.write(`${m}\n`);
const OMNI =
  process.env.CHAINPERF_OMNI_NODE_BIN || cacheDir('polkadot-omni-node', '0.24.0', 'bin', 'polkadot-omni-node');

describe('STATE=small on polkadot-omni-node: built once, restored for a run', function () {
  this.timeout(900000);
  let res;
  let run;
  let pool;
  let st;
  let cachedBefore;
  let nodeCmd = null;

  before(async function () {
    assert.ok(
      fs.existsSync(OMNI),
      `polkadot-omni-node is not built at ${OMNI}: build it with ./run.sh install scenarios/polkadot-omni-dev.env (about 46 minutes, once), or set CHAINPERF_OMNI_NODE_BIN`,
    );
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
