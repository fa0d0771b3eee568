'use strict';
// COLD=yes: each measured window starts with cold caches. The node is stopped
// (its own caches go with its process), the kernel's page cache is dropped
// while it is down (so its database is read from disk again), and the node is
// started again and waited for until it is synced with its head advancing.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { log } = require('../util/log');

/** sync, then drop the page cache, dentries and inodes; throws when the kernel refuses. */
function dropPageCacheStrict() {
  execFileSync('sync');
  fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
}

/**
 * Restarts the node cold before a window.
 * @param {{s, stack, chain, signal}} ctx the run's measure context
 * @returns {Promise<{seconds:number}>} how long the restart took, until synced
 */
async function coldRestart({ s, stack, chain, signal }, drop = dropPageCacheStrict) {
  if (!stack.restartNode) throw new Error(`COLD=yes: the ${stack.runtime} runtime cannot restart the node`);
  const from = Date.now();
  log('COLD=yes: stopping the node, dropping the page cache, starting it again');
  await stack.restartNode(async () => {
    try {
      drop();
    } catch (err) {
      throw new Error(`COLD=yes: the page cache could not be dropped (${err.code || err.message})`);
    }
  });
  await chain.waitForSync(stack.rpcUrl, { timeoutS: s.SYNC_TIMEOUT_S, signal, log });
  const seconds = (Date.now() - from) / 1000;
  log(`COLD=yes: the node is back and synced after ${seconds.toFixed(1)} s`);
  return { seconds };
}

module.exports = { coldRestart, dropPageCacheStrict };
