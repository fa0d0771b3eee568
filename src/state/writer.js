'use strict';
// statewriter (src/state/writer/, Go): writes a STATE profile's whole genesis
// state straight into a fresh geth data directory, in about a minute for
// `large` where geth init of a genesis and StateStore calls through a node took
// 43 minutes. It writes the database layout of the geth it is built against
// (go.mod: go-ethereum v1.16.7), so it serves that version alone; built with Go
// through the module proxy into the cache on first use, rebuilt when its source
// changes.

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('../install/cache');
const { runWithProgress } = require('../install/progress');
const { withCacheLock } = require('../install/lock');

/** The geth version whose database layout the writer writes (its go.mod). */
const WRITER_GETH = '1.16.7';
const SOURCE = path.join(__dirname, 'writer');
const SOURCE_FILES = ['main.go', 'passes.go', 'go.mod', 'go.sum'];
/** Memory for the writer's sorted keys (-memory-mb): more keys take more passes, each hashing them all. */
const WRITER_MEMORY_MB = 1024;

// For the time announced, on 2 cores: items written a second (accounts and slots alike, compaction included), and
// keys hashed a second in a pass over a trie that needs several (accounts take two hashes a key).
const ITEMS_PER_SECOND = 300000;
const HASHES_PER_SECOND = 1500000; // xlarge: written in 1,892 s, announced 1,889
/** Bytes a key takes while its pass sorts it (passes.go's keyBytes). */
const KEY_BYTES = 72;

/** A short hash of the writer's source: its version, and the cached binary's stamp. */
function sourceHash() {
  const h = crypto.createHash('sha256');
  for (const f of SOURCE_FILES) h.update(fs.readFileSync(path.join(SOURCE, f)));
  return h.digest('hex').slice(0, 12);
}

/** Why the writer cannot build this geth version's state (null when it can). */
function writerUnfit(version) {
  if (version !== WRITER_GETH)
    return `statewriter writes geth ${WRITER_GETH}'s database layout, not ${version}'s: building through geth init and the node instead`;
  if (fs.existsSync(cacheDir(`statewriter-${version}`, 'statewriter'))) return null; // Go only to rebuild it
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    return 'statewriter needs Go to be built and Go is not installed: building through geth init and the node instead';
  }
  return null;
}

/** Builds the writer into dir (beside it, then renamed into place) under the cache's lock. */
async function buildWriter(dir, hash, { log, signal }) {
  const tmp = `${dir}.building-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  try {
    const args = ['build', '-C', SOURCE, '-trimpath', '-buildvcs=false', '-o', path.join(tmp, 'statewriter'), '.'];
    await runWithProgress('go', args, {
      label: `building statewriter into ${dir}`,
      step: `statewriter-build-${WRITER_GETH}`,
      usual: 120,
      note: `against go-ethereum v${WRITER_GETH} from the Go module proxy; seconds when geth was built on this machine before, once`,
      env: { GOFLAGS: '-mod=readonly' },
      log,
      signal,
    });
    fs.writeFileSync(path.join(tmp, 'source'), `${hash}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The writer's binary for a geth version, built into the cache when missing or built from another source.
 * @returns {Promise<{bin: string, version: string}>}
 */
async function ensureWriter(version, { log, signal }) {
  const dir = cacheDir(`statewriter-${version}`);
  const bin = path.join(dir, 'statewriter');
  const hash = sourceHash();
  const current = () => {
    try {
      return fs.existsSync(bin) && fs.readFileSync(path.join(dir, 'source'), 'utf8').trim() === hash;
    } catch {
      return false;
    }
  };
  if (!current()) {
    await withCacheLock(
      `statewriter-${version}`,
      async () => {
        if (!current()) await buildWriter(dir, hash, { log, signal }); // or built by another run while this one waited
      },
      { log, signal, what: `building statewriter for geth ${version}` },
    );
  }
  return { bin, version: `${hash} (go-ethereum v${WRITER_GETH})` };
}

/** The writer's command line for a profile: its accounts, the slots and fill accounts the node once added. */
function writerArgs(profile, { dataDir, engine, genesis }) {
  return [
    ...['-datadir', dataDir, '-engine', engine, '-genesis', genesis, '-compact'],
    ...['-accounts', String(profile.accounts), '-slots', String(profile.slots + profile.fill_slots)],
    ...['-fill-accounts-from', String(profile.accounts + profile.transfers)],
    ...['-fill-accounts', String(profile.fill_accounts)],
    ...['-memory-mb', String(WRITER_MEMORY_MB)],
  ];
}

/** How many passes the writer makes over a trie of n keys. */
const writerPasses = (n) => Math.max(1, Math.ceil((n * KEY_BYTES) / (WRITER_MEMORY_MB * 2 ** 20)));

/** About how long the writer takes for a profile, in seconds: writing, and hashing again in every pass beyond one. */
function writerSeconds(profile) {
  const accounts = profile.accounts + profile.fill_accounts;
  const slots = profile.slots + profile.fill_slots;
  const rehashed = (writerPasses(accounts) - 1) * 2 * accounts + (writerPasses(slots) - 1) * slots;
  return Math.ceil((accounts + slots) / ITEMS_PER_SECOND + rehashed / HASHES_PER_SECOND) + 5;
}

/**
 * Writes the profile's genesis state into dataDir (which must not hold a chain) from the base genesis file.
 * name: the profile's name (its step's log and time). An aborted signal stops the writer.
 * @returns {Promise<{root: string, seconds: number}>}
 */
async function writeState(bin, profile, { name, dataDir, engine, genesis, log, signal }) {
  const t0 = Date.now();
  const out = await runWithProgress(bin, writerArgs(profile, { dataDir, engine, genesis }), {
    label: `state writer (STATE=${name})`,
    step: `statewriter-${name}`,
    usual: writerSeconds(profile),
    log,
    signal,
  });
  const root = (out.match(/^(0x[0-9a-f]{64})\s*$/m) || [])[1];
  if (!root) throw new Error(`state writer: no state root in its output: ${out.slice(-300)}`);
  return { root, seconds: Math.round((Date.now() - t0) / 100) / 10 };
}

/**
 * Writes the genesis block alone into dataDir (which must not hold a chain), with the profile's state root and none of
 * its state: geth opens it, finds the genesis state missing and waits for a snap sync to bring the state from its
 * peers (SYNC=network with a STATE profile). genesis: the base genesis file the profile's state was written from.
 */
async function writeGenesisBlockOnly(bin, { dataDir, engine, genesis, root, log, signal }) {
  const args = ['-datadir', dataDir, '-engine', engine, '-genesis', genesis, '-root', root];
  await runWithProgress(bin, args, {
    label: 'state writer (the genesis block alone)',
    step: 'statewriter-genesis-block',
    log,
    signal,
  });
}

module.exports = {
  WRITER_GETH,
  writeGenesisBlockOnly,
  WRITER_MEMORY_MB,
  writerUnfit,
  ensureWriter,
  writerArgs,
  writerPasses,
  writerSeconds,
  writeState,
  sourceHash,
};
