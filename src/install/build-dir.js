'use strict';
// A folder built for the cache beside its final place (<dir>.building-<pid>),
// renamed into place once complete so that nothing ever finds half of it.

const fs = require('node:fs');
const path = require('node:path');

/**
 * A failed build: the half-built folder goes; the builder node's log (tmp/build.log) stays beside the cache, named in
 * the error.
 */
function abandonBuild(err, { dir, tmp, node }) {
  const buildLog = path.join(tmp, 'build.log');
  if (fs.existsSync(buildLog)) {
    const kept = `${dir}.failed-build.log`;
    fs.copyFileSync(buildLog, kept);
    err.message += ` (the builder's ${node} log: ${kept})`;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  return err;
}

module.exports = { abandonBuild };
