'use strict';
// Names and folders that become paths: a scenario's NAME, a plan's PLAN_NAME
// and REPORTS_DIR. chainperf often runs as root, so a name must never lead
// out of REPORTS_DIR, and REPORTS_DIR must be a writable folder before
// anything starts (a run that cannot write its report must not run).

const fs = require('node:fs');
const path = require('node:path');

/** Free space below which REPORTS_DIR is refused: a report with its logs and charts takes a few MB. */
const MIN_FREE_BYTES = 64 * 2 ** 20;

/** Why `name` cannot be one folder name inside the reports (null when it can). */
function folderNameProblem(name) {
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) return `expected letters, digits, _ . or -, got "${name}"`;
  if (name.startsWith('.'))
    return `must not start with a dot (".", ".." and hidden folders would leave or hide in REPORTS_DIR), got "${name}"`;
  return null;
}

/** Whether child, once resolved, lies strictly inside root. */
function isInside(root, child) {
  const rel = path.relative(path.resolve(root), path.resolve(root, child));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The nearest existing ancestor of p (p itself when it exists). */
function existingAncestor(p) {
  let dir = path.resolve(p);
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Why REPORTS_DIR cannot take a report (null when it can): not a folder, not writable, or full. */
function reportsDirProblem(dir) {
  const abs = path.resolve(dir);
  const at = existingAncestor(abs);
  let st;
  try {
    st = fs.statSync(at);
  } catch (err) {
    return `cannot read ${at}: ${err.code || err.message}`;
  }
  if (!st.isDirectory())
    return at === abs ? `${dir} is not a folder` : `${dir} cannot be created: ${at} is not a folder`;
  try {
    fs.accessSync(at, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    return `${at} is not writable (${err.code || err.message})`;
  }
  try {
    const s = fs.statfsSync(at);
    const free = s.bavail * s.bsize;
    if (free < MIN_FREE_BYTES)
      return `the filesystem of ${at} has ${(free / 2 ** 20).toFixed(1)} MB free; a run needs at least ${MIN_FREE_BYTES / 2 ** 20} MB`;
  } catch {
    // statfs unsupported: the write itself will say
  }
  return null;
}

module.exports = { folderNameProblem, isInside, reportsDirProblem, existingAncestor, MIN_FREE_BYTES };
