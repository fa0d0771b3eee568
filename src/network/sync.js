// @ts-check
'use strict';
// SYNC=network: the node under test joins a network that already holds the
// chain, with a database that holds only the genesis, and downloads the chain
// from its peers with the client's own sync. The driver tells it the network's
// head (engine_forkchoiceUpdatedV3 alone, as a consensus client tells a node
// that is behind); geth then fetches headers back from that head and the
// blocks from its peers over devp2p. Synced: its head is the network's and it
// says it is not syncing, both from its own API. Then it gets every block as
// the other nodes do.

const { rpcCall } = require('../util/rpc');
const { accountAddress, slotKey, STORAGE_CONTRACT } = require('../chains/ethereum/state-items');
const { sleep } = require('../util/time');

/** What a snap sync has fetched of the state so far, from the node's eth_syncing. */
function snapProgress(syncing) {
  if (!syncing || syncing.syncedAccounts === undefined) return '';
  const n = (k) => Number(syncing[k] || 0);
  const mb = (n('syncedAccountBytes') + n('syncedStorageBytes') + n('healedTrienodeBytes')) / 1e6;
  return `; state: ${n('syncedAccounts')} accounts, ${n('syncedStorage')} slots, ${n('healedTrienodes')} trie nodes healed (${mb.toFixed(1)} MB)`;
}

/** Logs the sync's progress every 5 s: block, the network's, blocks a second, time left, and a snap sync's state. */
function progressLog(t0, startHead, log) {
  let last = { at: t0, block: startHead };
  let lastLog = 0;
  return (now, network, syncing) => {
    if (Date.now() - lastLog < 5000) return;
    const rate = (now - last.block) / Math.max(0.001, (Date.now() - last.at) / 1000);
    const left = rate > 0 ? `, about ${Math.ceil((network - now) / rate)} s left` : '';
    const elapsed = Math.round((Date.now() - t0) / 1000);
    log(
      `sync from the network (${elapsed} s): block ${now} of ${network}, ${rate.toFixed(1)} blocks/s${left}${snapProgress(syncing)}`,
    );
    last = { at: Date.now(), block: now };
    lastLog = Date.now();
  };
}

const head = async (url) => Number(await rpcCall(url, 'eth_blockNumber', [], { timeoutMs: 5000 }));

/**
 * After a sync of a STATE profile: the node serves the profile's state as the network node does. Accounts 0-3, the
 * storage contract's code and slots 0-3, read from both at the same block; every answer must be equal and the
 * accounts funded. Throws a named error otherwise.
 */
async function compareState(nodeUrl, networkUrl, block) {
  const at = `0x${block.toString(16)}`;
  /** @type {(m: string, p: string[]) => [string, string[]]} */
  const read = (m, p) => [m, p];
  const reads = [
    ...[0, 1, 2, 3].map((i) => read('eth_getBalance', [accountAddress(i), at])),
    read('eth_getCode', [STORAGE_CONTRACT, at]),
    ...[0, 1, 2, 3].map((i) => read('eth_getStorageAt', [STORAGE_CONTRACT, slotKey(i), at])),
  ];
  const ask = (url) => Promise.all(reads.map(([m, p]) => rpcCall(url, m, p, { timeoutMs: 10000 })));
  const [mine, theirs] = await Promise.all([ask(nodeUrl), ask(networkUrl)]);
  const differ = reads
    .filter((r, i) => mine[i] !== theirs[i])
    .map(([m, p]) => `${m}(${p[0]}${p.length > 2 ? ` ${p[1]}` : ''})`);
  if (differ.length || mine.slice(0, 4).some((b) => BigInt(b) === 0n))
    throw new Error(
      `after the sync the node does not serve the network's state at block ${block}: ${differ.join(', ') || 'accounts unfunded'}`,
    );
  return { block, reads: reads.length, equal: true };
}

/**
 * @param {{nodeRpcUrl: string, networkRpcUrl: string, member: {name: string, authUrl: string, headOnly?: boolean},
 *   driver: {join: (n: object) => Promise<void>, setFull: (name: string) => void},
 *   readCounters: () => Promise<object|null>,
 *   cpu: {read: () => Promise<{total_s: number}>}|null, timeoutS: number, signal?: AbortSignal,
 *   syncMode?: 'full'|'snap', stateCheck?: ((block: number) => Promise<object>)|null,
 *   log: (m: string) => void}} o syncMode: the node's (snap: it starts with the genesis block alone and
 *   downloads a STATE profile's state); stateCheck: compares what it serves with the network's after the sync
 * @returns {Promise<object>} run.json's sync record
 */
async function syncFromNetwork({
  nodeRpcUrl,
  networkRpcUrl,
  member,
  driver,
  readCounters,
  cpu,
  timeoutS,
  syncMode = 'full',
  stateCheck = null,
  signal,
  log,
}) {
  const t0 = Date.now();
  const startHead = await head(nodeRpcUrl);
  const [c0, cpu0] = [await readCounters(), cpu ? await cpu.read() : null];
  const target = await head(networkRpcUrl);
  log(`sync from the network: the node is at block ${startHead}, the network at ${target}; telling it the head`);
  await driver.join({ ...member, headOnly: true });
  const joined = member.name;
  const progress = progressLog(t0, startHead, log);
  for (;;) {
    const [now, network, syncing] = await Promise.all([
      head(nodeRpcUrl),
      head(networkRpcUrl),
      rpcCall(nodeRpcUrl, 'eth_syncing', [], { timeoutMs: 5000 }),
    ]);
    if (now >= network && syncing === false) break;
    const elapsed = (Date.now() - t0) / 1000;
    if (elapsed > timeoutS)
      throw new Error(
        `the node did not sync from its peers in SYNC_TIMEOUT_S=${timeoutS} s: block ${now} of ${network}`,
      );
    progress(now, network, syncing);
    await sleep(500, signal);
  }
  const [c1, cpu1] = [await readCounters(), cpu ? await cpu.read() : null];
  const seconds = (Date.now() - t0) / 1000;
  const reached = await head(nodeRpcUrl);
  driver.setFull(joined); // synced: from now on it gets every payload like the others
  const state = stateCheck ? await stateCheck(reached) : null;
  return {
    mode: 'network',
    sync_mode: syncMode,
    seconds,
    head: reached,
    start_head: startHead,
    blocks: reached - startHead,
    p2p_in_bytes: c0 && c1 ? c1.p2p_in - c0.p2p_in : null,
    p2p_out_bytes: c0 && c1 ? c1.p2p_out - c0.p2p_out : null,
    cpu_s: cpu0 && cpu1 ? Number((cpu1.total_s - cpu0.total_s).toFixed(3)) : null,
    ...(state ? { state_check: state } : {}),
    describe:
      syncMode === 'snap'
        ? "started with the genesis block alone and told the network's head by engine_forkchoiceUpdatedV3 alone, the node snap-synced the state and the blocks from its peers (devp2p, snap/1); synced when its eth_blockNumber reached the network's and eth_syncing was false; then its state was compared with network-1's at that block"
        : "told the network's head by engine_forkchoiceUpdatedV3 alone, the node downloaded the chain from its peers (devp2p); synced when its eth_blockNumber reached the network's and eth_syncing was false",
  };
}

module.exports = { syncFromNetwork, compareState };
