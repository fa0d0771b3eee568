// @ts-check
'use strict';
// Install steps of a client chainperf does not build or download (erigon,
// reth, nethermind, besu: no package registry this machine reaches has them):
// in the host runtime it runs the binary CLIENT_BIN names; in the compose
// runtime the pinned upstream image.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

/**
 * @param {string} name client name, for messages
 * @param {string[]} versionArgs arguments that make the binary print its version
 */
function prebuilt(name, versionArgs = ['--version']) {
  return {
    /** The host runtime needs CLIENT_BIN: checked with the scenario, before anything starts. */
    needsClientBin: true,
    /** @param {import('../contracts').Scenario} s */
    binaryPath: (s) => s.CLIENT_BIN || name,
    /** @param {import('../contracts').Scenario} s */
    ensureBinary: async (s) => {
      if (!s.CLIENT_BIN)
        throw new Error(
          `CLIENT=${name} is not built or downloaded by chainperf: set CLIENT_BIN to a ${name} binary, use RUNTIME=compose with its image, or measure a running node with RUNTIME=attach`,
        );
      if (!fs.existsSync(s.CLIENT_BIN)) throw new Error(`CLIENT_BIN: no such file: ${s.CLIENT_BIN}`);
      return s.CLIENT_BIN;
    },
    /** @param {string} bin */
    binaryVersion: (bin) => {
      const m = /(\d+\.\d+\.\d+\S*)/.exec(execFileSync(bin, versionArgs, { encoding: 'utf8' }));
      return m ? m[1] : 'unknown';
    },
  };
}

module.exports = { prebuilt };
