'use strict';
// ARCHIVE=git: commit a report folder to the git repository that holds it.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { scrub } = require('../util/scrub');

function git(cwd, args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The repository top level containing dir, creating one at dir when there is none. */
function repoFor(dir, log) {
  fs.mkdirSync(dir, { recursive: true });
  try {
    return git(dir, ['rev-parse', '--show-toplevel']);
  } catch {
    log(`ARCHIVE=git: ${dir} is in no git repository; creating one there`);
    git(dir, ['init', '--quiet']);
    return git(dir, ['rev-parse', '--show-toplevel']);
  }
}

/**
 * Commits reportDir, and the files `extra` names under reportsRoot (INDEX.md),
 * alone: other staged work is left as it was. Returns the repository and commit.
 */
function archiveGit({ reportsRoot, reportDir, message, log, extra = [] }) {
  const top = repoFor(reportsRoot, log);
  const rootRel = path.relative(top, fs.realpathSync(reportsRoot));
  const rel = [
    path.relative(top, fs.realpathSync(reportDir)),
    ...extra.filter((f) => fs.existsSync(path.join(reportsRoot, f))).map((f) => path.join(rootRel, f)),
  ];
  let who = [];
  try {
    git(top, ['config', 'user.email']);
  } catch {
    who = ['-c', 'user.name=chainperf', '-c', 'user.email=chainperf@localhost'];
  }
  git(top, ['add', '--', ...rel]);
  git(top, [...who, 'commit', '--quiet', '-m', scrub(message), '--', ...rel]);
  return { repository: top, commit: git(top, ['rev-parse', 'HEAD']) };
}

module.exports = { archiveGit };
