'use strict';
// A Substrate node is synced when system_health says it is not syncing, its
// best block advances, and it has reached the sync target (system_syncState.highestBlock
// where the node has that method; chopsticks has not, and its best block is
// the target). A single dev node has no peers, so peers are not required and
// readiness endpoints are not used.

const { rpcCall } = require('../../util/rpc');
const { pollUntil } = require('../../util/poll');
const { httpUrl } = require('./url');

/** One look at the node: {synced, state, head, target, peers}. */
async function syncState(url, { signal, rpc = rpcCall } = {}) {
  const call = (m) => rpc(httpUrl(url), m, [], { timeoutMs: 5000, signal });
  const health = await call('system_health');
  const head = Number.parseInt((await call('chain_getHeader')).number, 16);
  let target = head;
  try {
    const st = await call('system_syncState');
    if (st && st.highestBlock !== undefined && st.highestBlock !== null) target = Number(st.highestBlock);
  } catch (err) {
    if (signal && signal.aborted) throw err;
    // no system_syncState (chopsticks): the best block is the target
  }
  const synced = !health.isSyncing && head >= target;
  const state = `${health.isSyncing ? 'syncing' : 'not syncing'}, best block ${head}, target ${target}, ${health.peers} peers`;
  return { synced, state, head, target, peers: health.peers };
}

/**
 * @returns {Promise<{seconds:number, head:number, target:number, peers:number}>}
 */
async function waitForSync(url, { timeoutS, signal, log = () => {}, rpc = rpcCall }) {
  let firstHead = null; // synced also means producing or importing: the best block moves past the first one seen
  const look = async () => {
    const st = await syncState(url, { signal, rpc });
    if (firstHead === null) firstHead = st.head;
    return {
      done: st.synced && st.head > firstHead,
      state: st.synced ? `${st.state}, waiting for the best block to advance` : st.state,
      value: st,
    };
  };
  const { seconds, value: st } = await pollUntil(look, {
    timeoutS,
    signal,
    log,
    label: 'waiting for sync',
    failMessage: (last) => `node not synced after ${timeoutS} s (SYNC_TIMEOUT_S); last state: ${last}`,
  });
  return { seconds, head: st.head, target: st.target, peers: st.peers };
}

module.exports = { waitForSync, syncState };
