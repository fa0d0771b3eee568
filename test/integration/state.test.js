'use strict';
// STATE=small on a real geth with the host runtime: built once into the cache
// (or found there), copied for the run, never written; the workload's
// parameters drawn across the whole state and history.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { runWatchingNode, gethOf, fileListing } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const { ensureState, stateDir } = require('../../src/state/build');
const geth = require('../../src/clients/geth');
const P = require('../../src/state/profiles');

const SHORT = {
  DURATION_S: '5',
  WARMUP_S: '2',
  IDLE_S: '2',
  RAMP_S: '4',
  STATE: 'small',
  STATE_DISTRIBUTION: 'skewed',
  WORKLOAD: 'eth-state',
  MAX_ERROR_RATE: '0',
};

describe('STATE=small: a built state restored for a run', () => {
  let res;
  let run;
  let pool;
  let dir;
  let cachedBefore;
  let gethCmd = null;

  before(async function () {
    this.timeout(900000);
    const version = geth.defaults.CLIENT_VERSION;
    const bin = await geth.ensureBinary({ CLIENT_VERSION: version, CLIENT_BIN: '' }, (m) =>
      process.stderr.write(`${m}\n`),
    );
    // Built here when missing (with progress), so the run below measures the restore alone.
    const st = await ensureState({
      profile: 'small',
      bin,
      version,
      engine: 'pebble',
      log: (m) => process.stderr.write(`${m}\n`),
    });
    dir = st.dir;
    assert.equal(dir, stateDir('small', version, 'pebble'));
    cachedBefore = fileListing(dir);
    ({
      res,
      run,
      pool,
      nodeCmd: gethCmd,
    } = await runWatchingNode(path.join(ROOT, 'scenarios', 'geth-dev.env'), SHORT, gethOf));
  });

  it('completes without a failed request, run.json valid against the schema', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.figures.requests_failed, 0);
    assert.ok(run.figures.methods.eth_getStorageAt.requests_ok > 0);
  });

  it("the node ran on a copy in the run's folder, and the cached state is unchanged", () => {
    assert.ok(gethCmd, "the run's geth was seen");
    assert.ok(!gethCmd.includes(dir), `geth ran on the cache itself: ${gethCmd}`);
    assert.equal(fileListing(dir), cachedBefore);
    assert.equal(run.history, undefined, 'no history created: the state has it');
    assert.match(
      fs.readFileSync(path.join(res.reportDir, 'run.log'), 'utf8'),
      /STATE=small: copied .* into the run's data directory/,
    );
  });

  it('draws the parameters across the whole state and history, skewed', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    assert.equal(pool.state.distribution, 'skewed');
    assert.equal(pool.state.accounts, manifest.accounts);
    const all = new Set(Array.from({ length: manifest.accounts }, (_, i) => P.accountAddress(i)));
    assert.ok(pool.addresses.every((a) => all.has(a)));
    assert.ok(
      Math.max(...pool.blocks) > manifest.history.last_block * 0.9 &&
        Math.min(...pool.blocks) < manifest.history.last_block * 0.5,
    );
    assert.equal(pool.contract, manifest.logger);
    assert.equal(pool.storage_contract, P.STORAGE_CONTRACT);
  });

  it('holds the accounts and slots StateStore added after the history, and draws from them too', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    const profile = P.PROFILES.small;
    assert.equal(manifest.fill.slots, profile.fill_slots);
    assert.equal(manifest.fill.accounts, profile.fill_accounts);
    // geth 1.16.7: written by statewriter (its root is the genesis block's), not sent as StateStore calls
    assert.equal(manifest.format, 5);
    assert.equal(manifest.fill.transactions, 0);
    assert.match(manifest.writer.root, /^0x[0-9a-f]{64}$/);
    assert.ok(manifest.writer.seconds > 0 && manifest.fill.seconds === manifest.writer.seconds);
    assert.equal(manifest.fill.last_block, manifest.history.last_block);
    assert.equal(
      manifest.settled,
      true,
      'blocks after the fill, so a node on the state does not load its big trie changes',
    );
    assert.equal(manifest.slots, manifest.genesis_slots + profile.fill_slots);
    assert.equal(manifest.accounts, manifest.genesis_accounts + manifest.history.transfers + profile.fill_accounts);
    assert.ok(
      pool.storage_slots.some((s) => BigInt(s) >= BigInt(manifest.genesis_slots)),
      'no draw among the filled slots',
    );
    const filled = new Set(
      Array.from({ length: profile.fill_accounts }, (_, i) => P.accountAddress(manifest.accounts - 1 - i)),
    );
    assert.ok(
      pool.addresses.some((a) => filled.has(a)),
      'no draw among the filled accounts',
    );
  });
});
