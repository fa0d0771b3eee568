'use strict';
// Builds a STATE profile's geth data directory once and caches it outside the
// repository (~/.cache/chainperf/state/<profile>-geth-<version>-<engine>):
// a genesis with the profile's accounts and storage slots, `geth init`, then
// geth --dev on it while the history's transactions are sent and StateStore
// calls grow the state, then a clean stop. The directory is built beside its
// final place and renamed into it when complete, so a run never finds half a
// state. Runs restore a copy (state/restore.js) and never write into the cache.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('../install/cache');
const { runWithProgress } = require('../install/progress');
const { rpcCall } = require('../util/rpc');
const P = require('./profiles');
const { abandonBuild } = require('../install/build-dir');
const { dropGenesisSpec, writeGenesis } = require('./genesis');
const { startBuilder } = require('./builder-node');
const { fillState, sendHistory, settleLayers, SETTLE_BLOCKS } = require('./fill');

// of the built state: a cached state of another format is built again (4: StateStore, its filled accounts and slots)
const FORMAT = 4;

/** Where a profile's state lives in the cache. */
function stateDir(profile, version, engine) {
  return cacheDir('state', `${profile}-geth-${version}-${engine}`);
}

/** The cached state's manifest, or null when it is not built (or built by another format of this code). */
function readManifest(dir) {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    return m.format === FORMAT ? m : null;
  } catch {
    return null;
  }
}

function writeManifest(dir, manifest) {
  fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Bytes under dir. */
function duBytes(dir) {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/** A state built before settleLayers existed: settled once, in place, before its first use. */
async function settleCached(dir, manifest, { bin, engine, log, signal }) {
  if (manifest.settled || !(manifest.fill.slots + manifest.fill.accounts)) return manifest;
  log(`STATE=${manifest.profile}: settling the cached state once (${SETTLE_BLOCKS} blocks)`);
  const node = await startBuilder(bin, path.join(dir, 'data'), engine, path.join(dir, 'settle.log'), 0);
  try {
    await settleLayers(node.url, { log, signal });
  } finally {
    await node.stop();
  }
  const settled = { ...manifest, settled: true, size_bytes: duBytes(path.join(dir, 'data')) };
  writeManifest(dir, settled);
  return settled;
}

/** geth init of the profile's genesis into dataDir, then the genesis alloc blob dropped from it. */
async function initData(bin, { tmp, dataDir, profile, engine, log, signal }) {
  const genesis = path.join(tmp, 'genesis.json');
  writeGenesis(bin, genesis, profile, log);
  const label = 'state geth init';
  await runWithProgress(bin, ['init', '--datadir', dataDir, '--db.engine', engine, genesis], { label, log, signal });
  fs.rmSync(genesis);
  await dropGenesisSpec(bin, dataDir, log, signal);
}

/** The history (a block a second), then the fill (a block as soon as transactions wait) and the settling blocks. */
async function sendThrough(bin, { dataDir, engine, buildLog, profile, log, signal }) {
  let node = await startBuilder(bin, dataDir, engine, buildLog, 1);
  try {
    const history = await sendHistory(node.url, profile, { log, signal });
    await node.stop();
    node = await startBuilder(bin, dataDir, engine, buildLog, 0);
    const fill = {};
    fill.slots = await fillState(node.url, 'slots', profile.slots, profile.fill_slots, { log, signal });
    const firstAccount = profile.accounts + history.transfers;
    fill.accounts = await fillState(node.url, 'accounts', firstAccount, profile.fill_accounts, { log, signal });
    fill.last_block = Number(await rpcCall(node.url, 'eth_blockNumber', [], { signal }));
    if (profile.fill_slots + profile.fill_accounts) await settleLayers(node.url, { log, signal });
    return { history, fill };
  } finally {
    await node.stop();
  }
}

/** The manifest of a built state: what it holds, how its items are derived, how long it took. */
function stateManifest({ name, version, engine, profile, history, fill, from, dataDir }) {
  return {
    format: FORMAT,
    profile: name,
    client: 'geth',
    version,
    db_engine: engine,
    accounts: profile.accounts + history.transfers + profile.fill_accounts,
    genesis_accounts: profile.accounts,
    slots: profile.slots + profile.fill_slots,
    genesis_slots: profile.slots,
    fill: {
      accounts: profile.fill_accounts,
      slots: profile.fill_slots,
      last_block: fill.last_block,
      seconds: fill.slots.seconds + fill.accounts.seconds,
      transactions: fill.slots.transactions + fill.accounts.transactions,
    },
    storage_contract: P.STORAGE_CONTRACT,
    logger: history.logger,
    signers: P.signerWallets().map((w) => w.address),
    history: {
      first_block: history.first_block,
      last_block: history.last_block,
      transactions: history.tx_hashes.length,
      transfers: history.transfers,
      calls: history.calls,
    },
    build_seconds: Math.round((Date.now() - from) / 100) / 10,
    size_bytes: duBytes(dataDir),
    built_at: new Date().toISOString(),
    settled: true,
  };
}

/** Builds the profile's state in tmp (its data, its transactions' hashes, its manifest); returns the manifest. */
async function buildInto(tmp, { name, bin, version, engine, profile, from, log, signal }) {
  const dataDir = path.join(tmp, 'data');
  await initData(bin, { tmp, dataDir, profile, engine, log, signal });
  const buildLog = path.join(tmp, 'build.log');
  const { history, fill } = await sendThrough(bin, { dataDir, engine, buildLog, profile, log, signal });
  fs.writeFileSync(path.join(tmp, 'tx_hashes.json'), `${JSON.stringify(history.tx_hashes)}\n`);
  const manifest = stateManifest({ name, version, engine, profile, history, fill, from, dataDir });
  writeManifest(tmp, manifest);
  return manifest;
}

/**
 * The profile's cached state, built when missing.
 * @param {{profile:string, bin:string, version:string, engine:string, log:Function, signal?:AbortSignal}} o
 * @returns {Promise<{dir:string, dataDir:string, manifest:object, built:boolean}>}
 */
async function ensureState({ profile: name, bin, version, engine, log, signal }) {
  const dir = stateDir(name, version, engine);
  const dataDir = path.join(dir, 'data');
  const existing = readManifest(dir);
  if (existing) {
    const manifest = await settleCached(dir, existing, { bin, engine, log, signal });
    return { dir, dataDir, manifest, built: false };
  }
  const profile = P.PROFILES[name];
  if (!profile) throw new Error(`no STATE profile ${name}`);
  const from = Date.now();
  const tmp = `${dir}.building-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  log(
    `building STATE=${name} once into ${dir} (${profile.accounts} accounts, ${profile.slots} storage slots, ${profile.transfers} transfers, ${profile.calls} contract calls; ${profile.doc})`,
  );
  try {
    const manifest = await buildInto(tmp, { name, bin, version, engine, profile, from, log, signal });
    if (readManifest(dir)) {
      fs.rmSync(tmp, { recursive: true, force: true }); // another run finished the same build first
    } else {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
    log(
      `STATE=${name} built in ${manifest.build_seconds} s: ${(manifest.size_bytes / 2 ** 20).toFixed(1)} MiB, ${manifest.accounts} accounts, blocks ${manifest.history.first_block}..${manifest.history.last_block}`,
    );
    return { dir, dataDir, manifest: readManifest(dir), built: true };
  } catch (err) {
    throw abandonBuild(err, { dir, tmp, node: 'geth' });
  }
}

module.exports = { ensureState, stateDir, readManifest, writeGenesis, abandonBuild };
