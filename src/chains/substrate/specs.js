'use strict';
// Chain specs for Substrate nodes. A CHAIN_SPEC is a path to a raw chain spec
// or the name of one shipped in the crates.io crate polkadot-parachain-bin
// 5.0.0 (chain-specs/). The crate is downloaded once into the cache, its
// digest checked against the one the crates.io index publishes.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('../../install/cache');

const CRATE = { name: 'polkadot-parachain-bin', version: '5.0.0' };
const CRATE_URL = `https://static.crates.io/crates/${CRATE.name}/${CRATE.name}-${CRATE.version}.crate`;
const INDEX_URL = `https://index.crates.io/po/lk/${CRATE.name}`;

/** The specs the crate ships and the network each belongs to (its relay chain). */
const SHIPPED = {
  'asset-hub-kusama': 'kusama',
  'asset-hub-polkadot': 'polkadot',
  'asset-hub-rococo': 'rococo',
  'asset-hub-westend': 'westend',
  'asset-hub-wococo': 'wococo',
  'bridge-hub-kusama': 'kusama',
  'bridge-hub-polkadot': 'polkadot',
  'bridge-hub-rococo': 'rococo',
  'bridge-hub-westend': 'westend',
  'bridge-hub-wococo': 'wococo',
  'collectives-polkadot': 'polkadot',
  'collectives-westend': 'westend',
  'contracts-rococo': 'rococo',
  tick: 'rococo',
  track: 'rococo',
  trick: 'rococo',
};

const isPath = (spec) => spec.includes('/') || spec.endsWith('.json');

function specsDir() {
  return cacheDir('chain-specs', `${CRATE.name}-${CRATE.version}`);
}

/** The file a CHAIN_SPEC names, downloaded when it is a shipped name not in the cache yet. */
async function ensureChainSpec(spec, log = () => {}) {
  if (isPath(spec)) {
    const file = path.resolve(spec);
    if (!fs.existsSync(file)) throw new Error(`CHAIN_SPEC: no such file: ${file}`);
    return file;
  }
  if (!SHIPPED[spec])
    throw new Error(`CHAIN_SPEC: ${spec} is not a chain spec shipped in ${CRATE.name} ${CRATE.version}`);
  const dir = specsDir();
  const file = path.join(dir, `${spec}.json`);
  if (fs.existsSync(file)) return file;
  await downloadCrateSpecs(dir, log);
  if (!fs.existsSync(file)) throw new Error(`${CRATE.name} ${CRATE.version} has no chain-specs/${spec}.json`);
  return file;
}

/** Downloads the crate, checks its sha256 against the crates.io index, extracts chain-specs/ into dir. */
async function downloadCrateSpecs(dir, log) {
  log(`downloading ${CRATE.name} ${CRATE.version} from crates.io for its chain specs (about 10 MB, once) into ${dir}`);
  const get = async (url) => {
    let res;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(120000) });
    } catch (err) {
      throw new Error(`cannot download ${url}: ${err.cause ? err.cause.message : err.message}`);
    }
    if (!res.ok) throw new Error(`cannot download ${url}: HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const crate = await get(CRATE_URL);
  const index = (await get(INDEX_URL))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const entry = index.find((e) => e.vers === CRATE.version);
  const digest = crypto.createHash('sha256').update(crate).digest('hex');
  if (!entry || entry.cksum !== digest)
    throw new Error(
      `${CRATE_URL}: sha256 ${digest} is not the one the crates.io index publishes (${entry ? entry.cksum : 'no entry'})`,
    );
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const tarball = path.join(tmp, 'crate.tar.gz');
  fs.writeFileSync(tarball, crate);
  execFileSync('tar', [
    'xzf',
    tarball,
    '-C',
    tmp,
    '--strip-components=2',
    `${CRATE.name}-${CRATE.version}/chain-specs`,
  ]);
  fs.rmSync(tarball);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  log(`chain specs: ${fs.readdirSync(dir).length} files in ${dir} (sha256 of the crate checked)`);
}

module.exports = { ensureChainSpec, SHIPPED, CRATE, CRATE_URL, isPath, specsDir };
