// @ts-check
'use strict';
// SYNC=network: the node under test joins a network that already holds the
// chain, with a database that holds only the genesis, and downloads the chain
// from its peers with the client's own sync. The driver tells it the network's
// head (engine_forkchoiceUpdatedV3 alone, as a consensus client tells a node
// that is behind); geth then fetches headers back from that head and the
// blocks from its peers over devp2p. Synced: its head is the network's and it
// says it is not syncing, both from its own API. Then it is told that its own
// head is the chain's (which ends geth's snap-sync mode) and gets every block as
// the other nodes do. With a STATE profile the node starts with the genesis
// block alone and snap-syncs (the state at a pivot block, then the blocks);
// what it serves is then compared with the network's. Last, chainperf waits
// until the node has finished what the sync left it to do (settle).

const { rpcCall } = require('../util/rpc');
const { accountAddress, slotKey, STORAGE_CONTRACT } = require('../chains/ethereum/state-items');
const { sleep } = require('../util/time');
const { transientReason } = require('../util/retry');
const { BUSY_CORES } = require('../measure/edges');
const { progressLog } = require('./sync-progress');

/** A node using less than this many cores over SETTLE_EVERY_S has finished what its sync left it to do. */
const SETTLED_CORES = BUSY_CORES;
const SETTLE_EVERY_S = 5;

/**
 * After the sync, the node may go on working in the background: geth, after a snap sync, generates its flat-state
 * snapshot from the downloaded tries (over a minute for a state of 6M accounts and 11M slots, at a full core), and a
 * window measured meanwhile measures that. Waits until the node's CPU over SETTLE_EVERY_S is below SETTLED_CORES, for
 * up to timeoutS; then goes on either way, saying so (`settled: false`, a warning in the report).
 */
async function settle(cpu, { timeoutS, signal, log, everyS = SETTLE_EVERY_S }) {
  const t0 = Date.now();
  let prev = { at: Date.now(), cpu: await cpu.read() };
  for (;;) {
    await sleep(everyS * 1000, signal);
    const now = { at: Date.now(), cpu: await cpu.read() };
    const cores = (now.cpu.total_s - prev.cpu.total_s) / Math.max(0.001, (now.at - prev.at) / 1000);
    const seconds = Math.round((now.at - t0) / 100) / 10;
    const record = { seconds, cores_last: Number(cores.toFixed(3)), below_cores: SETTLED_CORES };
    if (cores < SETTLED_CORES) return { ...record, settled: true };
    if (seconds >= timeoutS) {
      log(`after the sync the node was still busy after ${seconds} s (SYNC_TIMEOUT_S): measuring anyway`);
      return { ...record, settled: false };
    }
    log(
      `after the sync the node is still busy: ${cores.toFixed(2)} cores over the last ${everyS} s (background work the sync left, such as geth's snapshot generation); waiting (${Math.round(seconds)} s)`,
    );
    prev = now;
  }
}

const head = async (url) => Number(await rpcCall(url, 'eth_blockNumber', [], { timeoutMs: 5000 }));

/**
 * A read outside the loop of looks (the heads at the start, the state check): a node busy syncing, or serving another
 * node's sync, on a loaded machine may let one call time out; a transient failure (util/retry.js) is asked again, up
 * to `tries` times, a second apart. An answer that is an error is not, unless `anyError` (a counter page that is only
 * read, never judged).
 * @template T
 * @param {() => Promise<T>} read
 * @param {{signal?: AbortSignal, tries?: number, anyError?: boolean}} [o]
 * @returns {Promise<T>}
 */
async function patientRead(read, { signal, tries = 4, anyError = false } = {}) {
  for (let k = 1; ; k++) {
    try {
      return await read();
    } catch (err) {
      if ((signal && signal.aborted) || k >= tries || !(anyError || transientReason(err))) throw err;
      await sleep(1000, signal);
    }
  }
}

/**
 * The node's counters at an edge of the sync, asked up to 3 times: a node busy on a loaded machine has let its metrics
 * page time out. null when every try failed (the sync's byte figures are then null, not guessed).
 */
function patiently(readCounters, signal) {
  return patientRead(readCounters, { signal, tries: 3, anyError: true }).catch((err) => {
    if (signal && signal.aborted) throw err;
    return null;
  });
}

/**
 * One look at a sync: the node's head, the network's, the node's eth_syncing. A node busy syncing on a loaded machine
 * may not answer within the call's time-out: a look that failed for such a transient reason (util/retry.js: a
 * time-out, a connection lost, HTTP 429/5xx) gives `error` and the wait goes on (SYNC_TIMEOUT_S bounds it). An answer
 * that is an error (a JSON-RPC error) ends the sync at once: waiting would not change it.
 * @returns {Promise<{now?: number, network?: number, syncing?: any, error: string|null}>}
 */
async function lookAtSync(nodeRpcUrl, networkRpcUrl, signal) {
  try {
    const [now, network, syncing] = await Promise.all([
      head(nodeRpcUrl),
      head(networkRpcUrl),
      rpcCall(nodeRpcUrl, 'eth_syncing', [], { timeoutMs: 5000 }),
    ]);
    return { now, network, syncing, error: null };
  } catch (err) {
    const reason = signal && signal.aborted ? null : transientReason(err);
    if (!reason) throw err;
    return { error: `${err.message} (${reason})` };
  }
}

/**
 * After a sync of a STATE profile: the node serves the profile's state as the network node does. Accounts 0-3, the
 * storage contract's code and slots 0-3, read from both at the same block; every answer must be equal and the
 * accounts funded. Throws a named error otherwise.
 */
async function compareState(nodeUrl, networkUrl, block, signal) {
  const at = `0x${block.toString(16)}`;
  /** @type {(m: string, p: string[]) => [string, string[]]} */
  const read = (m, p) => [m, p];
  const reads = [
    ...[0, 1, 2, 3].map((i) => read('eth_getBalance', [accountAddress(i), at])),
    read('eth_getCode', [STORAGE_CONTRACT, at]),
    ...[0, 1, 2, 3].map((i) => read('eth_getStorageAt', [STORAGE_CONTRACT, slotKey(i), at])),
  ];
  const ask = (url) =>
    Promise.all(reads.map(([m, p]) => patientRead(() => rpcCall(url, m, p, { timeoutMs: 10000 }), { signal })));
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
 * Before the node is handed payloads, it is told that the head it has is the chain's (driver.confirmHead), and its
 * head is read again: unchanged, the call found the node at that head, which is what ends geth's snap-sync mode (a
 * node left in it sets aside every payload it is handed). Up to 5 tries: a block from a peer in between moves the head.
 */
async function confirmHead(nodeRpcUrl, member, driver, signal) {
  const latest = () =>
    patientRead(() => rpcCall(nodeRpcUrl, 'eth_getBlockByNumber', ['latest', false], { timeoutMs: 5000 }), { signal });
  let status = null;
  for (let k = 0; k < 5; k++) {
    const before = await latest();
    status = await patientRead(() => driver.confirmHead(member, before.hash, signal), { signal });
    const after = await latest();
    if (status === 'VALID' && after.hash === before.hash) return Number(before.number);
  }
  throw new Error(
    `after its sync the node did not take its own head as the chain's (engine_forkchoiceUpdatedV3: ${status})`,
  );
}

/**
 * Looks at the sync every 0.5 s until the node's head is the network's and it says it is not syncing; throws at
 * SYNC_TIMEOUT_S with where it was (and whether its head had stalled) and its last failed answer.
 * @returns {Promise<{reached: number, failedLooks: number}>}
 */
async function untilSynced({ nodeRpcUrl, networkRpcUrl, t0, startHead, target, timeoutS, progress, signal }) {
  /** @type {{now: number, network: number, error: string|null}} */
  let last = { now: startHead, network: target, error: null };
  let failedLooks = 0;
  // when the node's head last changed, to which block, and the network's head then
  let moved = { at: t0, block: startHead, network: target };
  for (;;) {
    const look = await lookAtSync(nodeRpcUrl, networkRpcUrl, signal);
    if (look.error) failedLooks++;
    if (!look.error && look.now >= look.network && look.syncing === false) return { reached: look.now, failedLooks };
    last = look.error ? { ...last, error: look.error } : { now: look.now, network: look.network, error: null };
    if (!look.error && look.now !== moved.block) moved = { at: Date.now(), block: look.now, network: look.network };
    if ((Date.now() - t0) / 1000 > timeoutS)
      throw new Error(
        `the node did not sync from its peers in SYNC_TIMEOUT_S=${timeoutS} s: block ${last.now} of ${last.network}${stalled(moved, last.network, startHead, timeoutS)}${last.error ? `; its last answer: ${last.error}` : ''}`,
      );
    if (!look.error) progress(look.now, look.network, look.syncing);
    await sleep(500, signal);
  }
}

/**
 * @param {{nodeRpcUrl: string, networkRpcUrl: string, member: {name: string, authUrl: string, headOnly?: boolean},
 *   driver: {join: (n: object, signal?: AbortSignal) => Promise<void>, setFull: (name: string) => void,
 *     confirmHead: (n: object, hash: string, signal?: AbortSignal) => Promise<string>},
 *   readCounters: () => Promise<object|null>,
 *   cpu: {read: () => Promise<{total_s: number}>}|null, timeoutS: number, signal?: AbortSignal,
 *   syncMode?: 'full'|'snap', stateCheck?: ((block: number) => Promise<object>)|null, stateItems?: number|null,
 *   log: (m: string) => void}} o syncMode: the node's (snap: it starts with the genesis block alone and
 *   downloads a STATE profile's state); stateCheck: compares what it serves with the network's after the sync;
 *   stateItems: the state's accounts and slots, for the time left
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
  stateItems = null,
  signal,
  log,
}) {
  const t0 = Date.now();
  const startHead = await patientRead(() => head(nodeRpcUrl), { signal });
  const [c0, cpu0] = [await patiently(readCounters, signal), cpu ? await cpu.read() : null];
  const target = await patientRead(() => head(networkRpcUrl), { signal });
  log(`sync from the network: the node is at block ${startHead}, the network at ${target}; telling it the head`);
  await driver.join({ ...member, headOnly: true }, signal);
  const progress = progressLog(t0, startHead, log, stateItems);
  const { reached, failedLooks } = await untilSynced({
    nodeRpcUrl,
    networkRpcUrl,
    t0,
    startHead,
    target,
    timeoutS,
    progress,
    signal,
  });
  const end = { counters: await patiently(readCounters, signal), cpu: cpu ? await cpu.read() : null };
  const seconds = (Date.now() - t0) / 1000;
  await confirmHead(nodeRpcUrl, member, driver, signal); // out of snap-sync mode before it is handed payloads
  driver.setFull(member.name); // synced: from now on it gets every payload like the others
  const state = stateCheck ? await stateCheck(reached) : null;
  const settled = cpu ? await settle(cpu, { timeoutS, signal, log }) : null;
  return {
    mode: 'network',
    sync_mode: syncMode,
    seconds,
    head: reached,
    start_head: startHead,
    blocks: reached - startHead,
    failed_looks: failedLooks,
    ...deltas({ counters: c0, cpu: cpu0 }, end),
    ...(state ? { state_check: state } : {}),
    ...(settled ? { settle: settled } : {}),
    describe: `${DESCRIBE[syncMode]}${settled ? SETTLE_TEXT : ''}`,
  };
}

/**
 * For the time-out's error: a head that had moved from where the node started and then stood still for at least a
 * third of SYNC_TIMEOUT_S while the network's went on is a sync that stalled once it was importing blocks, not a slow
 * one (docs/network.md). network: the network's head at the last look.
 */
function stalled(moved, network, startHead, timeoutS) {
  const stillS = Math.round((Date.now() - moved.at) / 1000);
  if (moved.block === startHead || stillS < timeoutS / 3 || !(network > moved.network)) return '';
  return `; its head had stayed at block ${moved.block} for the last ${stillS} s while the network's went from ${moved.network} to ${network}: the sync stalled (docs/network.md#a-sync-that-stalls)`;
}

/** The sync's bytes (the node's own counters) and CPU, from its start to its end; null where one was not read. */
function deltas(start, end) {
  const c = start.counters && end.counters;
  return {
    p2p_in_bytes: c ? end.counters.p2p_in - start.counters.p2p_in : null,
    p2p_out_bytes: c ? end.counters.p2p_out - start.counters.p2p_out : null,
    cpu_s: start.cpu && end.cpu ? Number((end.cpu.total_s - start.cpu.total_s).toFixed(3)) : null,
  };
}

const DESCRIBE = {
  full: "told the network's head by engine_forkchoiceUpdatedV3 alone, the node downloaded the chain from its peers (devp2p); synced when its eth_blockNumber reached the network's and eth_syncing was false",
  snap: "started with the genesis block alone and told the network's head by engine_forkchoiceUpdatedV3 alone, the node snap-synced the state and the blocks from its peers (devp2p, snap/1); synced when its eth_blockNumber reached the network's and eth_syncing was false; then its state was compared with network-1's at that block",
};
const SETTLE_TEXT = `; then chainperf waited until the node's CPU was below ${SETTLED_CORES} cores over ${SETTLE_EVERY_S} s (settle)`;

module.exports = { syncFromNetwork, compareState, settle };
