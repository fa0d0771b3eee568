'use strict';
// Waits until an Ethereum node reports it is not syncing and its head has
// advanced since we first looked, which proves blocks are still arriving.

const { rpcCall } = require('../../util/rpc');
const { sleep } = require('../../util/time');

/**
 * @returns {Promise<{seconds:number, head:number}>} how long it took and the head then
 */
async function waitForSync(url, { timeoutS, signal, log = () => {} }) {
  const started = Date.now();
  const deadline = started + timeoutS * 1000;
  let firstHead = null;
  let lastState = 'no answer yet';
  let lastLog = 0;
  while (Date.now() < deadline) {
    try {
      const syncing = await rpcCall(url, 'eth_syncing', [], { timeoutMs: 5000, signal });
      const head = Number(await rpcCall(url, 'eth_blockNumber', [], { timeoutMs: 5000, signal }));
      if (syncing) {
        lastState = `syncing: block ${Number(syncing.currentBlock)} of ${Number(syncing.highestBlock)}`;
      } else if (firstHead === null) {
        firstHead = head;
        lastState = `not syncing, head ${head}, waiting for it to advance`;
      } else if (head > firstHead) {
        return { seconds: (Date.now() - started) / 1000, head };
      }
    } catch (err) {
      if (signal && signal.aborted) throw signal.reason;
      lastState = `no answer: ${err.message}`;
    }
    if (Date.now() - lastLog > 10000) {
      log(`waiting for sync (${Math.round((Date.now() - started) / 1000)} s of ${timeoutS} s): ${lastState}`);
      lastLog = Date.now();
    }
    await sleep(500, signal);
  }
  throw new Error(`node not synced with its head advancing after ${timeoutS} s (SYNC_TIMEOUT_S); last state: ${lastState}`);
}

module.exports = { waitForSync };
