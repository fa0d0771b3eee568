'use strict';
// A client that ships as an npm package (chopsticks, anvil) is installed into
// its own folder in chainperf's cache, apart from chainperf's node_modules.

const fs = require('node:fs');
const path = require('node:path');
const { runWithProgress } = require('./progress');
const { installOnce } = require('./lock');

/**
 * npm install pkg@version into dir, with progress, once (under the cache's lock for it; an install that did not
 * finish is started over); resolves with bin.
 * usual: the seconds it typically takes (runWithProgress's), note: what else to say of it.
 * @param {{dir:string, pkg:string, version:string, bin:string, name:string, usual?:number, note?:string,
 *   log:Function}} o
 */
async function installNpmPackage({ dir, pkg, version, bin, name, usual, note, log }) {
  await installOnce(
    `npm-${pkg}-${version}`,
    dir,
    async () => {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'package.json'), '{"private": true}\n');
      await runWithProgress(
        'npm',
        ['install', '--no-audit', '--no-fund', '--loglevel=http', '--prefix', dir, `${pkg}@${version}`],
        { label: `installing ${name} ${version} into ${dir}`, step: `npm-${name}-${version}`, usual, note, log },
      );
      if (!fs.existsSync(bin)) throw new Error(`npm install finished but ${bin} is missing`);
    },
    { log, what: `installing ${name} ${version}` },
  );
  return bin;
}

module.exports = { installNpmPackage };
