'use strict';
// STATE profiles for a Substrate node (polkadot-omni-node): the scenario's
// chain spec with many more accounts in its genesis, built once into a data
// directory cached outside the repository
// (~/.cache/chainperf/state/<profile>-polkadot-omni-node-<version>-<engine>-<spec>),
// then copied for each run, as the geth states are (src/state/restore.js
// reaches this module through the chain's ensureState and statePool hooks).
//
// The build writes the genesis straight into the raw spec (System.Account
// entries, total issuance raised to match: chains/substrate/state-accounts.js
// says what account i is), starts the node on it until it has authored two
// blocks, and stops it. A Substrate node builds the whole genesis storage in
// memory from the spec each time it starts, even on a database that has it
// already (sc-chain-spec's GenesisBlockBuilder::new), and only writes it to
// an empty one. Runs therefore start the node with the spec without the state
// accounts (the dev accounts funded, as in the build): the database's genesis
// is the one that counts, and a start does not parse a spec of hundreds of
// megabytes under the run's memory limit. The built spec is not kept; its
// sha256 is in the manifest.
//
// The node writes the genesis to RocksDB as one batch that stays in the
// write-ahead log when the node stops (medium: a 1 GB .log, no table files).
// A node opening that database replays the log into memory, so every run
// would have its state in memory, not on disk. The builder therefore starts
// the node a second time, with the small spec: opening the database flushes
// the log into table files (medium: 300 MB of them). That start also
// authors PRUNED_BLOCKS blocks, a block each 100 ms: the state database keeps
// a journal of every trie node each of its last 256 blocks inserted, the
// genesis's included, and loads it at each start (on large: 4.4 GB of memory
// for a few seconds, a node under MEMORY_MB=1024 killed as it started). Past
// that window the genesis's journal is gone from the database's view, but
// the journal's one huge record (every node the genesis inserted) stays in a
// table file of the state-meta column until RocksDB compacts that column
// (large: a 690 MB file). A node whose memory budget sizes the levels small
// (--db-cache 32) compacts it at its first start, holding the record in
// memory while it does (large: 1.8 GB for 5 s, a node under MEMORY_MB=1024
// killed as it started); at 256 and 1024 MiB it did not. So a third start,
// with --db-cache 32, waits for RocksDB's compactions to finish: the file is
// dropped (large: 1.5 GB of database down to 0.84 GB). A fourth start,
// recorded in the manifest (start_peak_rss_bytes), shows what opening the
// state costs a run's node.
//
// Only the genesis is large: the history is the run's own (chains/substrate/
// history.js, on the run's copy), as on a dev chain.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { cacheDir } = require('../../install/cache');
const { ensureChainSpec } = require('./specs');
const { abandonBuild } = require('../../install/build-dir');
const { runBuilder, compactionsSettled, duBytes } = require('./state-builder');
const { writeStateSpec } = require('./state-spec');

// 2: the write-ahead log moved into table files; 3: the genesis's pruning journal gone; 4: and compacted away
const FORMAT = 4;
/**
 * Dev accounts funded in a state's genesis: enough for any scenario (HISTORY_ACCOUNTS up to 1,000, a signer per virtual
 * user up to 256).
 */
const DEV_ACCOUNTS = 1256;
const PROFILES = {
  small: { accounts: 20000, doc: 'for tests: a spec of about 8 MB, built in about a minute' },
  medium: { accounts: 1000000, doc: 'a spec of 316 MiB, 170 MiB of database' },
  large: { accounts: 5000000, doc: 'a spec of about 1.6 GB' },
};
const BUILT_BLOCKS = 2; // authored on the new genesis before the builder stops: the database is a working chain
const PRUNED_BLOCKS = 300; // past the state database's pruning window (256 blocks), so the genesis's journal is pruned
// a memory budget that makes RocksDB compact the state-meta column at the first start
const COMPACTING_DB_CACHE_MB = 32;

/** The short name of a spec file and the first 12 hex digits of its sha256: a state is keyed by its spec. */
function specKey(file) {
  const sha = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  return { name: path.basename(file, '.json').replace(/[^A-Za-z0-9_.-]/g, '_'), sha256: sha };
}

function stateDir(profile, client, version, engine, spec) {
  return cacheDir('state', `${profile}-${client}-${version}-${engine}-${spec.name}-${spec.sha256.slice(0, 12)}`);
}

function readManifest(dir) {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    return m.format === FORMAT && m.family === 'substrate' ? m : null;
  } catch {
    return null;
  }
}

/** The state's four builder runs into dataDir (state-builder.js says why four); what each found. */
async function buildData(bin, { buildSpec, runSpec, dataDir, engine, logFile, log, signal }) {
  const run = (o) => runBuilder(bin, { dataDir, engine, logFile, log, signal, ...o });
  const built = await run({ spec: buildSpec, until: BUILT_BLOCKS, doing: 'building the genesis' });
  fs.rmSync(buildSpec);
  const logged = duBytes(dataDir);
  log(
    `state: genesis written (${(logged / 2 ** 20).toFixed(0)} MiB); starting the node again: its write-ahead log into table files, then ${PRUNED_BLOCKS} blocks`,
  );
  const again = await run({
    spec: runSpec,
    until: PRUNED_BLOCKS,
    blockTimeMs: 100,
    doing: 'opening the database (its log into table files)',
  });
  if (again.genesis_hash !== built.genesis_hash)
    throw new Error(
      `state: the node opened the built database with genesis ${again.genesis_hash}, not ${built.genesis_hash}`,
    );
  const pruned = duBytes(dataDir);
  log(
    `state: ${(pruned / 2 ** 20).toFixed(0)} MiB after ${again.head} blocks; starting the node with --db-cache ${COMPACTING_DB_CACHE_MB} until RocksDB has compacted the pruned journal away`,
  );
  const compacted = await run({
    spec: runSpec,
    until: again.head + 1,
    args: ['--db-cache', String(COMPACTING_DB_CACHE_MB)],
    settle: (s) => compactionsSettled(dataDir, s),
    doing: 'opening the database (compacting)',
  });
  const last = await run({ spec: runSpec, until: compacted.head + 1, doing: 'opening the database' });
  log(
    `state: a start on the built state took ${last.seconds} s and ${(last.peak_rss_bytes / 2 ** 20).toFixed(0)} MiB of memory at most`,
  );
  return { built, again, compacted, last, logged, pruned };
}

/** The manifest of a built state. */
function stateManifest({
  name,
  client,
  version,
  engine,
  specSource,
  spec,
  funded,
  written,
  profile,
  runs,
  from,
  dataDir,
}) {
  const { built, again, compacted, last, logged, pruned } = runs;
  return {
    format: FORMAT,
    family: 'substrate',
    profile: name,
    client,
    version,
    db_engine: engine,
    chain_spec: { source: specSource, sha256: spec.sha256, id: funded.id, name: funded.name },
    build_spec: { bytes: written.bytes, sha256: written.sha256 },
    accounts: profile.accounts,
    dev_accounts: funded.funded,
    slots: 0,
    genesis_hash: built.genesis_hash,
    blocks: last.head,
    build_seconds: Math.round((Date.now() - from) / 100) / 10,
    builder_seconds: built.seconds + again.seconds + compacted.seconds,
    builder_peak_rss_bytes: Math.max(built.peak_rss_bytes, again.peak_rss_bytes, compacted.peak_rss_bytes),
    start_seconds: last.seconds,
    start_peak_rss_bytes: last.peak_rss_bytes,
    size_bytes: duBytes(dataDir),
    size_bytes_before_flush: logged,
    size_bytes_before_compaction: pruned,
    built_at: new Date().toISOString(),
  };
}

/** Builds the state in tmp: its specs, its data, its manifest. */
async function buildInto(tmp, o) {
  const { profile, specSource, bin, engine, log, signal } = o;
  const { fundedSpec } = require('./accounts');
  const runSpec = path.join(tmp, 'spec.json');
  const funded = await fundedSpec(specSource, runSpec, { accounts: DEV_ACCOUNTS });
  const buildSpec = path.join(tmp, 'build-spec.json');
  const written = await writeStateSpec(runSpec, buildSpec, profile.accounts, log, signal);
  log(`state spec: ${(written.bytes / 2 ** 20).toFixed(0)} MiB; starting ${o.client} on it`);
  const dataDir = path.join(tmp, 'data');
  const logFile = path.join(tmp, 'build.log');
  const runs = await buildData(bin, { buildSpec, runSpec, dataDir, engine, logFile, log, signal });
  const manifest = stateManifest({ ...o, funded, written, runs, dataDir });
  fs.writeFileSync(path.join(tmp, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * The profile's cached state for this client, version, engine and chain spec, built when missing.
 * @param {{profile:string, client:string, bin:string, version:string, engine:string, specSource:string, log:Function,
 * signal?:AbortSignal}} o
 * @returns {Promise<{dir:string, dataDir:string, chainSpec:string, manifest:object, built:boolean}>}
 */
async function ensureSubstrateState({ profile: name, client, bin, version, engine, specSource, log, signal }) {
  const spec = specKey(specSource);
  const dir = stateDir(name, client, version, engine, spec);
  const found = (manifest, built) => {
    const chainSpec = path.join(dir, 'spec.json');
    return { dir, dataDir: path.join(dir, 'data'), chainSpec, manifest, built };
  };
  const existing = readManifest(dir);
  if (existing) return found(existing, false);
  const profile = PROFILES[name];
  if (!profile) throw new Error(`no STATE profile ${name}`);
  const from = Date.now();
  const tmp = `${dir}.building-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  log(
    `building STATE=${name} once into ${dir} (${spec.name} with ${profile.accounts} more accounts in its genesis; ${profile.doc})`,
  );
  try {
    const o = { name, client, bin, version, engine, specSource, spec, profile, from, log, signal };
    const manifest = await buildInto(tmp, o);
    if (readManifest(dir)) {
      fs.rmSync(tmp, { recursive: true, force: true }); // another run finished the same build first
    } else {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
    log(
      `STATE=${name} built in ${manifest.build_seconds} s: ${(manifest.size_bytes / 2 ** 20).toFixed(1)} MiB of database, ${manifest.accounts} state accounts, the node at ${(manifest.builder_peak_rss_bytes / 2 ** 30).toFixed(1)} GiB resident at most`,
    );
    return found(readManifest(dir), true);
  } catch (err) {
    throw abandonBuild(err, { dir, tmp, node: client });
  }
}

/**
 * The run's pool on a Substrate state: the chain's own harvest (blocks, funded signers, the run's history),
 * plus the state's accounts, which the generator draws over for each request (ops.js).
 */
async function statePool(st, s, url, { signal, log }) {
  const pool = await require('./harvest').harvest(url, { signal, log });
  const m = st.manifest;
  pool.state_space = { accounts: m.accounts, slots: 0, distribution: s.STATE_DISTRIBUTION };
  pool.state = {
    profile: m.profile,
    distribution: s.STATE_DISTRIBUTION,
    accounts: m.accounts,
    slots: 0,
    family: 'substrate',
  };
  return pool;
}

/** One line for the log. */
function describeStatePool(pool) {
  const st = pool.state;
  return `STATE=${st.profile}, ${st.distribution} draws over ${st.accounts} state accounts (for each account request), blocks and signers harvested as on a dev chain`;
}

/** The chain's ensureState hook: the scenario's profile, client, version, engine and chain spec. */
async function ensureState(s, { bin, version, log, signal }) {
  const specSource = await ensureChainSpec(s.CHAIN_SPEC, log);
  return ensureSubstrateState({
    profile: s.STATE,
    client: s.CLIENT,
    bin,
    version,
    engine: s.DB_ENGINE,
    specSource,
    log,
    signal,
  });
}

module.exports = {
  ensureState,
  ensureSubstrateState,
  writeStateSpec,
  compactionsSettled,
  statePool,
  describeStatePool,
  readManifest,
  stateDir,
  specKey,
  PROFILES,
  DEV_ACCOUNTS,
  FORMAT,
};
