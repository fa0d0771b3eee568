'use strict';
// What a local Substrate network (NETWORK_NODES) carries besides the
// workload: NETWORK_TPS signed balance transfers entering through the network
// nodes (never through the node under test, which receives them by gossip),
// from a few sender accounts that //Alice funds at the start; and a count of
// the blocks network-1 authors and the signed extrinsics in them, read from
// network-1 itself.

const { compactFromU8a, hexToU8a } = require('@polkadot/util');
const { connectApi } = require('./api');
const { keyring } = require('./accounts');
const { transferInBlock } = require('./history');
const { rpcCall } = require('../../util/rpc');
const { httpUrl } = require('./url');

const SENDERS = 4;
const FUNDS = 10n ** 18n;

/** Whether an extrinsic (hex, SCALE: compact length, then its version byte) is signed: the version's top bit. */
function isSigned(hex) {
  const u8a = hexToU8a(hex);
  const [offset] = compactFromU8a(u8a);
  return (u8a[offset] & 0x80) !== 0;
}

/**
 * Counts network-1's blocks and the signed extrinsics in them, every second: the figures a window's `blocks` and
 * `transactions_included` are read from. Shaped as the engine-API driver's stats, so the network's watch reads both.
 */
function countBlocks(url, { log, everyMs = 1000 }) {
  const stats = { blocks: 0, transactions: 0, failures: {}, last_error: null };
  const call = (m, p = []) => rpcCall(httpUrl(url), m, p, { timeoutMs: 5000 });
  let last = null;
  let busy = false;
  const look = async () => {
    const head = Number.parseInt((await call('chain_getHeader')).number, 16);
    if (last === null) last = head;
    for (let n = last + 1; n <= head; n++) {
      const block = await call('chain_getBlock', [await call('chain_getBlockHash', [n])]);
      stats.blocks++;
      stats.transactions += block.block.extrinsics.filter(isSigned).length;
      last = n;
    }
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    look()
      .catch((err) => {
        if (stats.last_error !== err.message) log(`network: reading network-1's blocks: ${err.message}`);
        stats.last_error = err.message;
      })
      .finally(() => {
        busy = false;
      });
  }, everyMs);
  return {
    stats,
    stop: async () => clearInterval(timer),
  };
}

/**
 * The senders, funded by //Alice through `url` (network-1) and in a block before this returns.
 * @returns {Promise<{pairs: any[], nonces: number[], dest: string}>} dest: where the transfers go (//Alice)
 */
async function fundSenders(url, { seed }) {
  const api = await connectApi(url);
  try {
    const ring = await keyring(api.registry.chainSS58);
    const alice = ring.addFromUri('//Alice');
    const pairs = Array.from({ length: SENDERS }, (_, i) => ring.addFromUri(`//chainperf//network//${seed}//${i}`));
    let nonce = (await api.rpc.system.accountNextIndex(alice.address)).toNumber();
    await Promise.all(pairs.map((p) => transferInBlock(api, alice, p.address, FUNDS, nonce++)));
    return { pairs, nonces: pairs.map(() => 0), dest: alice.address };
  } finally {
    await api.disconnect();
  }
}

/**
 * NETWORK_TPS transfers per second, signed here (immortal, so no block hash is needed) and submitted to the network
 * nodes in turn (author_submitExtrinsic). A refused one is counted and its sender's nonce read again.
 * @param {{urls: string[], tps: number, seed: number, log: (m: string) => void}} o
 */
async function startSubstrateFeed({ urls, tps, seed, log }) {
  const { pairs, nonces, dest } = await fundSenders(urls[0], { seed });
  const apis = await Promise.all(urls.map((u) => connectApi(u)));
  const stats = { sent: 0, failed: 0 };
  let k = 0;
  let stopped = false;
  const send = async () => {
    const i = k % pairs.length;
    const api = apis[k % apis.length];
    k++;
    try {
      const tx = await api.tx.balances
        .transferKeepAlive(dest, 10n ** 9n + BigInt(k))
        .signAsync(pairs[i], { nonce: nonces[i]++, era: 0 });
      await api.rpc.author.submitExtrinsic(tx);
      stats.sent++;
    } catch (err) {
      if (stopped) return;
      stats.failed++;
      if (stats.failed === 1) log(`network: a transfer was refused: ${err.message}`);
      nonces[i] = (await api.rpc.system.accountNextIndex(pairs[i].address).catch(() => null))?.toNumber() ?? nonces[i];
    }
  };
  const timer = setInterval(() => send(), 1000 / tps);
  return {
    stats,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all(apis.map((a) => a.disconnect().catch(() => {})));
    },
  };
}

module.exports = { countBlocks, startSubstrateFeed, isSigned };
