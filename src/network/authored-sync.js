// @ts-check
'use strict';
// SYNC=network on a network whose nodes author (a Substrate network,
// authored-network.js): the node under test starts with the genesis alone and
// no peer, while the network authors the run's history; then every network
// node is asked to keep it as a reserved peer (system_addReservedPeer), they
// dial in, and the node downloads the blocks it lacks from them with the
// client's own sync (Substrate's full sync: headers and bodies, each block
// executed). Synced: its best block has reached network-1's and it says it is
// not syncing, both from its own API. The wait shows progress; the record
// gives the duration, the blocks, the bytes the node received and sent (its
// own counters) and its CPU meanwhile, as the engine-API network's sync does.

const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { progressLog, settle } = require('./sync');

/**
 * @param {{member: {name: string, rpcUrl: string, address: string}, peers: {name: string, rpcUrl: string}[],
 *   net: import('../contracts').AuthoringPeer, readCounters: () => Promise<{p2p_in: number, p2p_out: number}|null>,
 *   cpu: {read: () => Promise<{total_s: number}>}|null, timeoutS: number, signal?: AbortSignal,
 *   log: (m: string) => void}} o member: the node that syncs, with its multiaddress; peers: the network nodes,
 *   network-1 first
 * @returns {Promise<object>} run.json's sync record
 */
async function syncAuthored({ member, peers, net, readCounters, cpu, timeoutS, signal, log }) {
  const t0 = Date.now();
  const startHead = await net.bestBlock(member.rpcUrl);
  const [c0, cpu0] = [await readCounters().catch(() => null), cpu ? await cpu.read() : null];
  const target = await net.bestBlock(peers[0].rpcUrl);
  log(`sync from the network: the node is at block ${startHead}, the network at ${target}; its peers dial it now`);
  // the network nodes run with --rpc-methods unsafe (theirs, on 127.0.0.1): they are told to keep the node connected
  for (const p of peers) await rpcCall(p.rpcUrl.replace(/^ws/, 'http'), 'system_addReservedPeer', [member.address]);
  const progress = progressLog(t0, startHead, log);
  for (;;) {
    const [now, network, health] = await Promise.all([
      net.bestBlock(member.rpcUrl),
      net.bestBlock(peers[0].rpcUrl),
      net.answers(member.rpcUrl),
    ]);
    if (now >= network && !health.isSyncing && health.peers > 0) break;
    if ((Date.now() - t0) / 1000 > timeoutS)
      throw new Error(
        `the node did not sync from its peers in SYNC_TIMEOUT_S=${timeoutS} s: block ${now} of ${network}`,
      );
    progress(now, network, null);
    await sleep(500, signal);
  }
  const [c1, cpu1] = [await readCounters().catch(() => null), cpu ? await cpu.read() : null];
  const seconds = (Date.now() - t0) / 1000;
  const reached = await net.bestBlock(member.rpcUrl);
  const settled = cpu ? await settle(cpu, { timeoutS, signal, log }) : null;
  return {
    mode: 'network',
    sync_mode: 'full',
    seconds,
    head: reached,
    start_head: startHead,
    blocks: reached - startHead,
    p2p_in_bytes: c0 && c1 ? c1.p2p_in - c0.p2p_in : null,
    p2p_out_bytes: c0 && c1 ? c1.p2p_out - c0.p2p_out : null,
    cpu_s: cpu0 && cpu1 ? Number((cpu1.total_s - cpu0.total_s).toFixed(3)) : null,
    ...(settled ? { settle: settled } : {}),
    describe:
      "started with the genesis alone and no peer while the network authored the chain; then the network nodes dialled it (system_addReservedPeer) and it downloaded the blocks from them with its own full sync; synced when its best block reached network-1's and system_health said it was not syncing",
  };
}

module.exports = { syncAuthored };
