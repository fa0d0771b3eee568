'use strict';
// Waits until an Ethereum node reports it is not syncing and its head has
// advanced since we first looked, which proves blocks are still arriving.

const { rpcCall } = require('../../util/rpc');
const { pollUntil } = require('../../util/poll');

/**
 * @returns {Promise<{seconds:number, head:number}>} how long it took and the head then
 */
async function waitForSync(url, { timeoutS, signal, log = () => {}, rpc = rpcCall }) {
  let firstHead = null;
  const look = async () => {
    const syncing = await rpc(url, 'eth_syncing', [], { timeoutMs: 5000, signal });
    const head = Number(await rpc(url, 'eth_blockNumber', [], { timeoutMs: 5000, signal }));
    if (syncing)
      return {
        done: false,
        state: `syncing: block ${Number(syncing.currentBlock)} of ${Number(syncing.highestBlock)}`,
      };
    if (firstHead === null) firstHead = head;
    return { done: head > firstHead, state: `not syncing, head ${head}, waiting for it to advance`, value: head };
  };
  const { seconds, value } = await pollUntil(look, {
    timeoutS,
    signal,
    log,
    label: 'waiting for sync',
    failMessage: (last) =>
      `node not synced with its head advancing after ${timeoutS} s (SYNC_TIMEOUT_S); last state: ${last}`,
  });
  return { seconds, head: value };
}

module.exports = { waitForSync };
