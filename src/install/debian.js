'use strict';
// Finds a program on PATH, or installs the Debian package that has it (root and apt-get needed).

const fs = require('node:fs');
const { runWithProgress } = require('./progress');
const { withCacheLock } = require('./lock');

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(':')) {
    const p = `${dir}/${name}`;
    if (dir && fs.existsSync(p)) return p;
  }
  return null;
}

/**
 * @param {string} program binary name
 * @param {string} pkg Debian package
 * @param {Function} log
 * @param {string} [override] path from an environment variable, used as is when set
 */
async function ensureDebianTool(program, pkg, log, override) {
  if (override) {
    if (!fs.existsSync(override)) throw new Error(`${program}: no such file: ${override}`);
    return override;
  }
  const found = onPath(program);
  if (found) return found;
  if (!(onPath('apt-get') && process.getuid && process.getuid() === 0)) {
    throw new Error(`${program} is not installed: install it (Debian: apt-get install ${pkg})`);
  }
  // apt allows one install at a time: two runs installing at once wait for each other
  await withCacheLock(
    'apt-get',
    async () => {
      if (onPath(program)) return;
      await runWithProgress('apt-get', ['update'], {
        label: `installing ${pkg} (apt-get update)`,
        step: 'apt-get-update',
        log,
      });
      await runWithProgress('apt-get', ['install', '-y', '--no-install-recommends', pkg], {
        label: `installing ${pkg} from Debian`,
        step: `apt-${pkg}`,
        note: 'once',
        env: { DEBIAN_FRONTEND: 'noninteractive' },
        log,
      });
    },
    { log, what: `installing ${pkg} from Debian` },
  );
  const installed = onPath(program);
  if (!installed) throw new Error(`apt-get installed ${pkg} but no ${program} was found on PATH`);
  return installed;
}

module.exports = { ensureDebianTool, onPath };
