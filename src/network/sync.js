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
const { sleep } = require('../util/time');

const head = async (url) => Number(await rpcCall(url, 'eth_blockNumber', [], { timeoutMs: 5000 }));

/**
 * @param {{nodeRpcUrl: string, networkRpcUrl: string, member: {name: string, authUrl: string, headOnly?: boolean},
 *   driver: {join: (n: object) => Promise<void>, setFull: (name: string) => void},
 *   readCounters: () => Promise<object|null>,
 *   cpu: {read: () => Promise<{total_s: number}>}|null, timeoutS: number, signal?: AbortSignal,
 *   log: (m: string) => void}} o
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
  let last = { at: t0, block: startHead };
  let lastLog = 0;
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
    if (Date.now() - lastLog >= 5000) {
      const rate = (now - last.block) / Math.max(0.001, (Date.now() - last.at) / 1000);
      const left = rate > 0 ? `, about ${Math.ceil((network - now) / rate)} s left` : '';
      log(
        `sync from the network (${Math.round(elapsed)} s): block ${now} of ${network}, ${rate.toFixed(1)} blocks/s${left}`,
      );
      last = { at: Date.now(), block: now };
      lastLog = Date.now();
    }
    await sleep(500, signal);
  }
  const [c1, cpu1] = [await readCounters(), cpu ? await cpu.read() : null];
  const seconds = (Date.now() - t0) / 1000;
  const reached = await head(nodeRpcUrl);
  driver.setFull(joined); // synced: from now on it gets every payload like the others
  return {
    mode: 'network',
    seconds,
    head: reached,
    start_head: startHead,
    blocks: reached - startHead,
    p2p_in_bytes: c0 && c1 ? c1.p2p_in - c0.p2p_in : null,
    p2p_out_bytes: c0 && c1 ? c1.p2p_out - c0.p2p_out : null,
    cpu_s: cpu0 && cpu1 ? Number((cpu1.total_s - cpu0.total_s).toFixed(3)) : null,
    describe:
      "told the network's head by engine_forkchoiceUpdatedV3 alone, the node downloaded the chain from its peers (devp2p); synced when its eth_blockNumber reached the network's and eth_syncing was false",
  };
}

module.exports = { syncFromNetwork };
