'use strict';
// A STATE profile restored for one run, never the cached original (built by
// state/build.js for geth, or by the chain's ensureState hook):
//   host:    a copy of the cached data directory into the run's work folder
//            (cp --reflink=auto: a reflink where the filesystem offers one)
//   compose: a Docker volume of the run, filled with a copy of it and removed
//            with the project (KEEP=volume or stack keep it)
// and the run's parameter pool, drawn from the state's manifest.
// With MEMORY_MB the copy is then evicted from the page cache: the copy's pages
// were charged to chainperf, not to the node, so left cached they would answer
// the node's reads from beyond its memory limit and no read would reach the disk.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ensureState } = require('./build');
const { writeGenesis } = require('./genesis');
const { WRITER_GETH, writerUnfit, ensureWriter, writeGenesisBlockOnly } = require('./writer');
const { copyProblem } = require('./disk');
const chains = require('../chains');
const { statePool } = require('./pool');
const { rpcCall } = require('../util/rpc');
const { evictDir, mib } = require('../platform/pagecache');
const { withCacheLock } = require('../install/lock');
const { cacheDir } = require('../install/cache');
const { processStart, processesMentioning, killIfSame } = require('../util/proc');

/**
 * MEMORY_MB: the restored copy (in dir) leaves the page cache, so the node reads it within its own limit; st with what
 * was evicted.
 */
function evictRestored(s, st, dir, log) {
  const evicted = evictDir(dir);
  log(
    `STATE=${s.STATE} with MEMORY_MB=${s.MEMORY_MB}: the copy evicted from the page cache (${mib(evicted.bytes)} in ${evicted.files} files; cached before ${mib(evicted.resident_before)}, after ${mib(evicted.resident_after)}), so the node's reads come within its memory limit`,
  );
  return { ...st, evicted };
}

/**
 * The version part of a client's (geth's "1.16.7-stable", polkadot-omni-node's "0.24.0-abc123" -> "1.16.7", "0.24.0").
 */
const plainVersion = (v) => String(v).replace(/-.*$/, '');

/**
 * The profile's cached state for the scenario's client, built when missing: the chain's own builder if it has one,
 * geth's otherwise.
 */
async function ensureScenarioState(s, { bin, version, log, signal }) {
  const chain = chains[s.CHAIN];
  const v = plainVersion(version);
  return lockedBuild(s, v, { log, signal }, () =>
    chain.ensureState
      ? chain.ensureState(s, { bin, version: v, log, signal })
      : ensureState({ profile: s.STATE, bin, version: v, engine: s.DB_ENGINE, log, signal }),
  );
}

/**
 * A state is built by one run at a time (others wait for it and then use it); a build whose run was killed left a
 * half-built folder (<state>.building-<pid>) and maybe its builder node running: both go before building again.
 */
function lockedBuild(s, version, { log, signal }, build) {
  const name = `state-${s.STATE}-${s.CLIENT}-${version}-${s.DB_ENGINE}`;
  return withCacheLock(
    name,
    async ({ abandoned }) => {
      if (abandoned) removeAbandonedBuilds(cacheDir('state'), log);
      return build();
    },
    { log, signal, what: `STATE=${s.STATE} (${s.CLIENT} ${version}, ${s.DB_ENGINE})` },
  );
}

/** Half-built state folders whose builder process is gone, and any process still using them. */
function removeAbandonedBuilds(root, log) {
  if (!fs.existsSync(root)) return;
  for (const name of fs.readdirSync(root)) {
    const m = /\.building-(\d+)$/.exec(name);
    if (!m || processStart(Number(m[1])) !== null) continue;
    const dir = path.join(root, name);
    processesMentioning(dir).forEach(killIfSame);
    fs.rmSync(dir, { recursive: true, force: true });
    log(`removed ${dir}, a state build that did not finish`);
  }
}

/** Host runtime: the profile's state (built when missing) copied into dataDir. */
async function restoreHostState(s, { bin, version, dataDir, log, signal }) {
  const st = await ensureScenarioState(s, { bin, version, log, signal });
  const from = Date.now();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const problem = copyProblem(s.STATE, st.manifest.size_bytes, path.dirname(dataDir));
  if (problem) throw new Error(problem);
  execFileSync('cp', ['-a', '--reflink=auto', st.dataDir, dataDir]);
  log(
    `STATE=${s.STATE}: copied ${st.dir} into the run's data directory in ${((Date.now() - from) / 1000).toFixed(1)} s (the cached state is never written)`,
  );
  return s.MEMORY_MB ? evictRestored(s, st, dataDir, log) : st;
}

/**
 * SYNC=network with a STATE profile: the node under test gets the profile's genesis block alone (in dataDir), no
 * state, and snap-syncs the state and its history from the network nodes, which hold copies of the profile. Only
 * statewriter's states: their genesis block is rebuilt from the base genesis and the manifest's state root.
 */
async function restoreGenesisOnly(s, { bin, version, dataDir, log, signal }) {
  const st = await ensureScenarioState(s, { bin, version, log, signal });
  const v = plainVersion(version);
  const unfit = !st.manifest.writer ? `its state was not written by statewriter` : writerUnfit(v);
  if (unfit)
    throw new Error(
      `SYNC=network with STATE=${s.STATE}: the node under test starts from the profile's genesis block alone, which needs geth ${WRITER_GETH} (${unfit})`,
    );
  fs.rmSync(dataDir, { recursive: true, force: true });
  const genesis = path.join(path.dirname(dataDir), 'state-base-genesis.json');
  writeGenesis(bin, genesis, { accounts: 0, slots: 0 }, log); // as the profile's state was written from
  const writer = await ensureWriter(v, { log, signal });
  await writeGenesisBlockOnly(writer.bin, {
    dataDir,
    engine: s.DB_ENGINE,
    genesis,
    root: st.manifest.writer.root,
    log,
    signal,
  });
  log(
    `STATE=${s.STATE}, SYNC=network: the node starts with the profile's genesis block alone (state root ${st.manifest.writer.root.slice(0, 10)}…, no state); it snap-syncs the state from its peers`,
  );
  return st;
}

/**
 * Compose runtime: a new volume of the run holding a copy of the state (or, with `from`, of that folder instead: the
 * genesis block alone for SYNC=network); returns its name and a remover.
 */
async function restoreComposeState(s, { bin, version, volume, docker, baseRef, log, signal, from = null }) {
  const v = plainVersion(version);
  const cached = await lockedBuild(s, v, { log, signal }, () =>
    ensureState({ profile: s.STATE, bin, version: v, engine: s.DB_ENGINE, log, signal }),
  );
  const st = from ? { ...cached, dataDir: from } : cached;
  const made = await docker.engine('POST', '/volumes/create', {
    body: { Name: volume, Labels: { 'io.chainperf.volume': 'state' } },
  });
  if (made.status !== 201) throw new Error(`cannot create volume ${volume}: HTTP ${made.status}`);
  const remove = async () => {
    const r = await docker.engine('DELETE', `/volumes/${encodeURIComponent(volume)}`);
    if (r.status !== 204 && r.status !== 404) throw new Error(`cannot remove volume ${volume}: HTTP ${r.status}`);
  };
  const t0 = Date.now();
  try {
    execFileSync(
      'docker',
      [
        'run',
        '--rm',
        '-v',
        `${volume}:/data`,
        '-v',
        `${st.dataDir}:/state:ro`,
        baseRef,
        'cp',
        '-a',
        '/state/.',
        '/data/',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (err) {
    await remove();
    throw new Error(`cannot copy STATE=${s.STATE} into volume ${volume}: ${String(err.stderr || err.message).trim()}`);
  }
  log(
    `STATE=${s.STATE}: copied ${from ? st.dataDir : st.dir} into volume ${volume} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  if (s.MEMORY_MB) {
    const info = await docker.engine('GET', `/volumes/${encodeURIComponent(volume)}`);
    if (info.status !== 200 || !info.body || !info.body.Mountpoint) {
      await remove();
      throw new Error(
        `MEMORY_MB: cannot find volume ${volume} on this host to evict its copy of the state from the page cache (HTTP ${info.status})`,
      );
    }
    return { state: evictRestored(s, cached, info.body.Mountpoint, log), remove };
  }
  return { state: cached, remove }; // the cached state's folder: the network's nodes copy it
}

/** The run's parameter pool from a restored state. */
async function poolOfState(st, s, url, { signal, log, rpc = rpcCall }) {
  const chain = chains[s.CHAIN];
  if (chain.statePool) return chain.statePool(st, s, url, { signal, log });
  const txHashes = JSON.parse(fs.readFileSync(path.join(st.dir, 'tx_hashes.json'), 'utf8'));
  const head = Number(await rpc(url, 'eth_blockNumber', [], { signal }));
  const chainId = Number(await rpc(url, 'eth_chainId', [], { signal }));
  return statePool(st.manifest, txHashes, { distribution: s.STATE_DISTRIBUTION, seed: s.SEED, head, chainId });
}

module.exports = {
  restoreHostState,
  restoreGenesisOnly,
  ensureScenarioState,
  restoreComposeState,
  poolOfState,
  plainVersion,
};
