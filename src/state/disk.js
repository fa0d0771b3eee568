'use strict';
// Room on the disk for a STATE profile before it is built: the state takes
// about BYTES_PER_ITEM a genesis item (large: 2.4 GiB for 17M items), the
// build a fifth more while it compacts, and a run's copy of it as much again
// (restore.js copies it beside the cache unless the filesystem makes reflinks).

const fs = require('node:fs');
const path = require('node:path');

/** Database bytes an account or slot takes (large and xlarge, pebble). */
const BYTES_PER_ITEM = 150;
/** The build's room beyond the state's size: pebble's compaction rewrites files before it drops the old ones. */
const BUILD_MARGIN = 1.2;

const gib = (b) => `${(b / 2 ** 30).toFixed(1)} GiB`;

/** About how many bytes a profile's built state takes. */
function expectedBytes(profile) {
  const items = profile.accounts + profile.fill_accounts + profile.slots + profile.fill_slots;
  return items * BYTES_PER_ITEM + 64 * 2 ** 20; // + the history, the freezer's files, the logs
}

/** The nearest existing folder at or above dir (the cache's state folder may not exist yet). */
function existingParent(dir) {
  let d = path.resolve(dir);
  while (!fs.existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}

/** The folder whose filesystem holds dir, and the bytes free there for this user. */
function freeAt(dir, statfs) {
  const at = existingParent(dir);
  const st = statfs(at);
  return { at, free: Number(st.bavail) * Number(st.bsize) };
}

/**
 * Why the filesystem of dir has no room to build the profile (and, with copy, for a run's copy of it), or null.
 * statfs is fs.statfsSync unless given (tests).
 */
function diskProblem(name, profile, dir, { copy = true, statfs = fs.statfsSync } = {}) {
  const size = expectedBytes(profile);
  const needed = size * BUILD_MARGIN + (copy ? size : 0);
  const { at, free } = freeAt(dir, statfs);
  if (free >= needed) return null;
  const copyText = copy ? ` and a run's copy of it (${gib(size)})` : '';
  return `STATE=${name} needs about ${gib(needed)} free on the filesystem of ${at}: the state (about ${gib(size)}), a fifth more while it is built${copyText}; ${gib(free)} are free`;
}

/** Why the filesystem of dir has no room for a run's copy of a built state of bytes, or null. */
function copyProblem(name, bytes, dir, { statfs = fs.statfsSync } = {}) {
  const { at, free } = freeAt(dir, statfs);
  if (free >= bytes) return null;
  return `STATE=${name}: the run's copy of the state needs ${gib(bytes)} free on the filesystem of ${at}; ${gib(free)} are free`;
}

module.exports = { BYTES_PER_ITEM, expectedBytes, diskProblem, copyProblem };
