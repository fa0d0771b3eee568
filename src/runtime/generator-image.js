'use strict';
// The generator's image for SWARM_GENERATOR_NODES (images/generator): this
// Node.js, chainperf's sources and its production npm packages, as a tar the
// image's build unpacks. Its tag carries a hash of what goes in, so that a
// changed source builds a new image.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { runWithProgress } = require('../install/progress');

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

/** Short hash of the Node.js version and chainperf's sources and lock file. */
function generatorSourceHash() {
  const h = crypto.createHash('sha256');
  h.update(process.version);
  for (const f of SOURCES.flatMap(filesOf)) h.update(f).update(fs.readFileSync(path.join(ROOT, f)));
  return h.digest('hex').slice(0, 12);
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

/** The image's files: this Node.js binary, and a tar of the sources and production packages (in a temporary folder). */
async function generatorFiles(log) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-generator-'));
  const tar = path.join(dir, 'chainperf.tar');
  const list = path.join(dir, 'files');
  fs.writeFileSync(list, [...SOURCES, ...productionPackages()].join('\n'));
  await runWithProgress('tar', ['-cf', tar, '-C', ROOT, '-T', list], {
    label: "packing chainperf's sources and npm packages for the generator's image",
    expected: 'about 500 MB; under a minute',
    log,
  });
  return { node: process.execPath, 'chainperf.tar': tar, cleanup: () => fs.rmSync(dir, { recursive: true }) };
}

module.exports = { generatorSourceHash, generatorFiles, productionPackages };
