'use strict';
// Blocks on request, for a client that builds them only when asked (chopsticks).

const { rpcCall } = require('../util/rpc');

/**
 * A client that builds blocks only when asked (chopsticks) is asked every
 * `periodS` seconds, so its head advances like a dev node's. Calls before the
 * node listens fail quietly. Returns the function that stops it.
 */
function blockTicker(rpcUrl, method, periodS, log) {
  const url = rpcUrl.replace(/^ws(s?):/, 'http$1:');
  let stopped = false;
  let busy = false;
  let built = 0;
  const timer = setInterval(async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      await rpcCall(url, method, [], { timeoutMs: 30000 });
      built++;
    } catch {
      // not listening yet, or stopping
    } finally {
      busy = false;
    }
  }, periodS * 1000);
  log(`${method} every ${periodS} s, so the dev chain's head advances`);
  return () => {
    stopped = true;
    clearInterval(timer);
    log(`${method}: ${built} blocks built on request`);
  };
}

module.exports = { blockTicker };
