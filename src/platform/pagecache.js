'use strict';
// The kernel's page cache for a folder's files: how much of them it holds
// (fincore), and evicting them from it (written out first, then
// posix_fadvise DONTNEED through `dd iflag=nocache`), so that a node's next
// reads of its data reach the disk.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

/** Every regular file under dir. */
function filesUnder(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Bytes of these files in the page cache (fincore), or null where fincore is missing. */
function residentBytes(files) {
  if (!files.length) return 0;
  try {
    const out = execFileSync('fincore', ['--bytes', '--noheadings', '--raw', '--output', 'RES', ...files], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    return out
      .split('\n')
      .filter(Boolean)
      .reduce((s, x) => s + Number(x), 0);
  } catch {
    return null;
  }
}

/** Bytes as MiB for the log; n/a where fincore could not tell. */
const mib = (x) => (x === null ? 'n/a' : `${(x / 2 ** 20).toFixed(1)} MiB`);

/**
 * Writes out and evicts every file under dir from the page cache; returns {files, bytes, resident_before,
 * resident_after}.
 */
function evictDir(dir) {
  const files = filesUnder(dir);
  const bytes = files.reduce((s, f) => s + fs.statSync(f).size, 0);
  const before = residentBytes(files);
  // dirty pages cannot be evicted
  for (let i = 0; i < files.length; i += 200) execFileSync('sync', files.slice(i, i + 200));
  for (const f of files) execFileSync('dd', [`if=${f}`, 'iflag=nocache', 'count=0', 'status=none']);
  return { files: files.length, bytes, resident_before: before, resident_after: residentBytes(files) };
}

module.exports = { filesUnder, residentBytes, evictDir, mib };
