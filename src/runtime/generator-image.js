'use strict';
// The generator's image for SWARM_GENERATOR_NODES, in two images so that a
// change of chainperf's sources rebuilds seconds, not the 500 MB of packages:
//   chainperf/generator-base:<hash>  images/generator-base: the Node.js
//       chainperf runs on and its production npm packages, on the Debian
//       base; its tag a hash of the Node.js version and package-lock.json.
//   chainperf/generator:<hash>       images/generator: chainperf's sources
//       on it; its tag a hash of the base's and of the sources.
// Each is built from a tar its build unpacks; a new build of either removes
// the older tags of its repository (docker-build.js).

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { runWithProgress } = require('../install/progress');
const { withCacheLock } = require('../install/lock');
const { dockerBuild, imageId, removeOtherTags } = require('./docker-build');

const ROOT = path.resolve(__dirname, '..', '..');
const SOURCES = ['package.json', 'package-lock.json', 'src', 'workloads'];

/** Every file under p (relative to ROOT), sorted. */
function filesOf(p) {
  const abs = path.join(ROOT, p);
  if (!fs.statSync(abs).isDirectory()) return [p];
  return fs
    .readdirSync(abs)
    .sort()
    .flatMap((n) => filesOf(path.join(p, n)));
}

const hashOf = (parts) => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex').slice(0, 12);
};

/** The base's tag: the Node.js version and the lock file. */
const baseRef = () =>
  `chainperf/generator-base:${hashOf([process.version, fs.readFileSync(path.join(ROOT, 'package-lock.json'))])}`;

/** Short hash of the base's tag and chainperf's sources. */
function generatorSourceHash() {
  return hashOf([baseRef(), ...SOURCES.flatMap(filesOf).flatMap((f) => [f, fs.readFileSync(path.join(ROOT, f))])]);
}

/** The installed production packages' folders (node_modules/<name>, node_modules/@scope/<name>), from npm ls. */
function productionPackages() {
  const r = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' });
  const top = /^node_modules\/(@[^/]+\/)?[^/]+$/;
  const dirs = (r.stdout || '')
    .split('\n')
    .map((l) => path.relative(ROOT, l.trim()))
    .filter((l) => top.test(l));
  if (!dirs.length) throw new Error(`npm ls found no production package: ${(r.stderr || '').trim()}`);
  return [...new Set(dirs)].sort();
}

/** A tar of paths under ROOT, in a temporary folder: {tar, cleanup}. */
async function tarOf(paths, { what, step, note }, log) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-generator-'));
  const tar = path.join(dir, 'chainperf.tar');
  const list = path.join(dir, 'files');
  fs.writeFileSync(list, paths.join('\n'));
  await runWithProgress('tar', ['-cf', tar, '-C', ROOT, '-T', list], { label: `packing ${what}`, step, note, log });
  return { tar, cleanup: () => fs.rmSync(dir, { recursive: true }) };
}

/** chainperf/generator-base for this Node.js and lock file, built once (about a minute). */
async function ensureGeneratorBase(log) {
  const ref = baseRef();
  if (await imageId(ref)) return ref;
  return withCacheLock(
    `image-${ref}`,
    async () => {
      if (await imageId(ref)) return ref; // built by another run while this one waited
      log(`generator: building ${ref} (Node.js and chainperf's npm packages, about 700 MB; once per lock file)`);
      const what = { what: "chainperf's npm packages", step: 'pack-generator-packages', note: 'about 500 MB' };
      const { tar, cleanup } = await tarOf(productionPackages(), what, log);
      await dockerBuild('generator-base', ref, log, {
        files: { node: process.execPath, 'packages.tar': tar, cleanup },
      });
      removeOtherTags(ref, log);
      return ref;
    },
    { log, what: `building ${ref}` },
  );
}

/** The generator image's build files (chainperf's sources), once its base is here. */
async function generatorFiles(log) {
  await ensureGeneratorBase(log);
  const what = { what: "chainperf's sources", step: 'pack-generator-sources', note: 'a few MB' };
  const { tar, cleanup } = await tarOf(SOURCES, what, log);
  return { 'chainperf.tar': tar, cleanup };
}

module.exports = { generatorSourceHash, generatorFiles, productionPackages, baseRef, ensureGeneratorBase };
