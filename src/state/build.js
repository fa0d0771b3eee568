'use strict';
// Builds a STATE profile's geth data directory once and caches it outside the
// repository (~/.cache/chainperf/state/<profile>-geth-<version>-<engine>):
// for geth 1.16.7 its whole genesis state written by statewriter, then geth
// --dev on it while the history's transactions are sent; for other versions a
// genesis with the profile's accounts and slots, `geth init`, the history and
// StateStore calls that grow the state (state/recipes.js); then a clean stop.
// The directory is built beside its final place and renamed into it when
// complete, so a run never finds half a state. Runs restore a copy
// (state/restore.js) and never write into the cache.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('../install/cache');
const P = require('./profiles');
const { abandonBuild } = require('../install/build-dir');
const { writeGenesis } = require('./genesis');
const { startBuilder, ROUND_PER_SIGNER } = require('./builder-node');
const { settleLayers, SETTLE_BLOCKS } = require('./fill');
const { writerUnfit, writerSeconds, WRITER_GETH } = require('./writer');
const { diskProblem } = require('./disk');
const { written, throughNode } = require('./recipes');

// of the built state: a cached state of another format is built again (4: StateStore, its filled accounts and
// slots; 5: the genesis state written by statewriter, the manifest's writer)
const FORMAT = 5;

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

/** The manifest of a built state: what it holds, how its items are derived, how long it took. */
function stateManifest({ name, version, engine, profile, history, fill, writer, from, dataDir }) {
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
    // the fill's items: written by statewriter (no transactions; its time) or added by StateStore calls
    fill: { accounts: profile.fill_accounts, slots: profile.fill_slots, ...fill },
    writer, // {root, seconds, version} of the statewriter that wrote the genesis state, or null
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
async function buildInto(tmp, { name, bin, version, engine, profile, useWriter, from, log, signal }) {
  const dataDir = path.join(tmp, 'data');
  const buildLog = path.join(tmp, 'build.log');
  const recipe = useWriter ? written : throughNode;
  const o = { name, tmp, dataDir, version, engine, buildLog, profile, log, signal };
  const { history, fill, writer } = await recipe(bin, o);
  fs.writeFileSync(path.join(tmp, 'tx_hashes.json'), `${JSON.stringify(history.tx_hashes)}\n`);
  const manifest = stateManifest({ name, version, engine, profile, history, fill, writer, from, dataDir });
  writeManifest(tmp, manifest);
  return manifest;
}

/** What a build will do and about how long it takes, for the log line before it. */
function buildPlan(profile, useWriter) {
  const items = `${profile.accounts + profile.fill_accounts} accounts and ${profile.slots + profile.fill_slots} storage slots`;
  const rounds = Math.ceil((profile.transfers + profile.calls) / (P.SIGNERS * ROUND_PER_SIGNER));
  const history = `${profile.transfers} transfers and ${profile.calls} contract calls in about ${rounds} blocks of a second`;
  const settle = profile.fill_accounts + profile.fill_slots ? `, then ${SETTLE_BLOCKS} settling blocks` : '';
  return useWriter
    ? `statewriter writes ${items} into the genesis state (about ${writerSeconds(profile)} s), then geth --dev sends ${history}${settle}`
    : `geth init of ${profile.accounts} accounts and ${profile.slots} slots, then ${history}, then StateStore calls add ${profile.fill_accounts} accounts and ${profile.fill_slots} slots${settle} (${profile.doc})`;
}

/** Throws when the profile cannot be built: statewriter-only and unfit (unfit says why), or too little disk. */
function refuseBuild(name, profile, { dir, unfit, copy }) {
  if (profile.writer_only && unfit)
    throw new Error(
      `STATE=${name} is built by statewriter alone (geth ${WRITER_GETH}): through geth init and the node it would take days. ${unfit.replace(/: building through.*$/, '')}`,
    );
  const problem = diskProblem(name, profile, path.dirname(dir), { copy });
  if (problem) throw new Error(problem);
}

/**
 * The profile's cached state, built when missing; copy (true unless false) asks for room for a run's copy too.
 * @param {{profile:string, bin:string, version:string, engine:string, log:Function, signal?:AbortSignal,
 *   copy?:boolean}} o
 * @returns {Promise<{dir:string, dataDir:string, manifest:object, built:boolean}>}
 */
async function ensureState({ profile: name, bin, version, engine, log, signal, copy = true }) {
  const dir = stateDir(name, version, engine);
  const dataDir = path.join(dir, 'data');
  const existing = readManifest(dir);
  if (existing) {
    const manifest = await settleCached(dir, existing, { bin, engine, log, signal });
    return { dir, dataDir, manifest, built: false };
  }
  const profile = P.PROFILES[name];
  if (!profile) throw new Error(`no STATE profile ${name}`);
  const unfit = writerUnfit(version);
  refuseBuild(name, profile, { dir, unfit, copy });
  const from = Date.now();
  const tmp = `${dir}.building-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  if (unfit) log(unfit);
  log(`building STATE=${name} once into ${dir}: ${buildPlan(profile, !unfit)}`);
  try {
    const o = { name, bin, version, engine, profile, useWriter: !unfit, from, log, signal };
    const manifest = await buildInto(tmp, o);
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

module.exports = { ensureState, refuseBuild, stateDir, readManifest, writeGenesis, abandonBuild };
