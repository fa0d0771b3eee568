'use strict';
// Building a local image: the Debian base every local image starts from
// (debootstrap --variant=minbase bookworm + docker import), docker build of an
// images/<dir> context, and the image queries around them. Used by images.js
// (each service's image) and generator-image.js (the generator's two images).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { inspectImage } = require('../platform/docker');
const { runWithProgress } = require('../install/progress');
const { ensureDebianTool } = require('../install/debian');
const { withCacheLock } = require('../install/lock');

const ROOT = path.resolve(__dirname, '..', '..');
const IMAGES_DIR = path.join(ROOT, 'images');
const BASE_REF = 'chainperf/debian-base:bookworm';

async function imageId(ref) {
  const img = await inspectImage(ref);
  return img ? img.Id : null;
}

/** Removes the other tags of ref's repository (those a container still uses stay). */
function removeOtherTags(ref, log) {
  const repo = ref.slice(0, ref.lastIndexOf(':'));
  const r = spawnSync('docker', ['images', repo, '--format', '{{.Repository}}:{{.Tag}}'], { encoding: 'utf8' });
  const old = (r.stdout || '').split('\n').filter((x) => x && x !== ref);
  if (!old.length) return;
  const rm = spawnSync('docker', ['rmi', ...old], { encoding: 'utf8' });
  log(
    `removed ${old.length} older ${repo} image${old.length === 1 ? '' : 's'}${rm.status ? ' (those in use stay)' : ''}`,
  );
}

/** chainperf/debian-base:bookworm from debootstrap, once. */
async function ensureBase(log) {
  if (await imageId(BASE_REF)) return BASE_REF;
  return withCacheLock('image-debian-base', () => importBase(log), { log, what: `building ${BASE_REF}` });
}

async function importBase(log) {
  if (await imageId(BASE_REF)) return BASE_REF; // built by another run while this one waited
  const debootstrap = await ensureDebianTool('debootstrap', 'debootstrap', log);
  const rootfs = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-rootfs-'));
  try {
    await runWithProgress(
      debootstrap,
      ['--variant=minbase', 'bookworm', rootfs, process.env.DEBIAN_MIRROR || 'http://deb.debian.org/debian'],
      {
        label: `building ${BASE_REF}`,
        step: 'image-debian-base',
        usual: 90,
        note: 'a minimal Debian root file system with debootstrap, once',
        log,
      },
    );
    await runWithProgress(
      'sh',
      ['-c', `tar -C "${rootfs}" -c . | docker import --change 'CMD ["/bin/bash"]' - ${BASE_REF}`],
      { label: `importing ${BASE_REF}`, step: 'image-debian-base-import', log },
    );
  } finally {
    fs.rmSync(rootfs, { recursive: true, force: true });
  }
  return BASE_REF;
}

/** docker build of images/<dir> with extra files copied into the context. */
async function dockerBuild(dir, tag, log, { files = {}, buildArgs = {} } = {}) {
  await ensureBase(log);
  const ctx = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-image-'));
  try {
    fs.cpSync(path.join(IMAGES_DIR, dir), ctx, { recursive: true });
    for (const [name, src] of Object.entries(files)) if (name !== 'cleanup') linkOrCopy(src, path.join(ctx, name));
    const args = [
      'build',
      '--pull=false',
      '-t',
      tag,
      ...Object.entries(buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
      ctx,
    ];
    await runWithProgress('docker', args, {
      label: `building ${tag}`,
      step: `image-${tag.slice(0, tag.lastIndexOf(':'))}`, // its repository: a new tag's build is timed like the last
      note: `docker build of images/${dir}`,
      log,
      env: { DOCKER_BUILDKIT: '0' },
    });
  } finally {
    fs.rmSync(ctx, { recursive: true, force: true });
    if (files.cleanup) files.cleanup();
  }
}

/** A file into a build context: a hard link where it can be (a large tar), else a copy. */
function linkOrCopy(src, dest) {
  try {
    fs.linkSync(src, dest);
  } catch {
    fs.copyFileSync(src, dest);
  }
}

module.exports = { imageId, removeOtherTags, ensureBase, dockerBuild, BASE_REF, IMAGES_DIR };
