'use strict';
// Notices that a node chainperf did not start (attach) is gone while the run
// goes on, so that the run stops at once (and the load generator with it)
// rather than at the end of the window: with NODE_PID, its /proc entry
// disappearing or turning into a zombie (an exited process stays one until
// its parent reaps it); otherwise its metrics endpoint and its RPC endpoint both
// failing to answer several times in a row.

const { processId, isRunning } = require('../util/proc');
const { rpcCall } = require('../util/rpc');

/** Checks in a row that must fail, both endpoints, before the node counts as gone. */
const MISSES = 3;

/** Whether url answers an HTTP GET within timeoutMs (any status: something listens). */
async function answers(url, timeoutMs) {
  try {
    await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts watching; calls onGone({message}) once when the node is gone.
 * @returns {() => void} stops watching
 */
function watchAttachedNode({ pid, metricsUrl, rpcUrl, periodMs = 1000, timeoutMs = 3000 }, onGone) {
  let done = false;
  let misses = 0;
  let busy = false;
  const gone = (message) => {
    if (done) return;
    done = true;
    clearInterval(timer);
    onGone({ message });
  };
  const check = async () => {
    if (done || busy) return;
    if (pid) {
      if (!isRunning(processId(pid))) gone(`the node (NODE_PID=${pid}) exited`);
      return;
    }
    busy = true;
    try {
      const metricsUp = metricsUrl ? await answers(metricsUrl, timeoutMs) : false;
      // Any JSON-RPC answer, an error too (a Substrate node has no web3_clientVersion), means the node is there.
      const rpcUp =
        metricsUp ||
        (await rpcCall(rpcUrl, 'web3_clientVersion', [], { timeoutMs }).then(
          () => true,
          (err) => typeof err.code === 'number',
        ));
      misses = metricsUp || rpcUp ? 0 : misses + 1;
      if (misses >= MISSES)
        gone(
          `the node stopped answering: neither its metrics endpoint (METRICS_URL) nor RPC_URL answered ${MISSES} checks in a row`,
        );
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(check, pid ? Math.min(periodMs, 500) : periodMs);
  timer.unref();
  return () => {
    done = true;
    clearInterval(timer);
  };
}

module.exports = { watchAttachedNode, MISSES };
