// @ts-check
'use strict';
// What the blocks held: the block watcher of chain traffic reads every new
// block of the network node that builds them (its gas used and limit, its
// transactions, its base fee) and, when the block holds transactions of the
// feed, their receipts: each kind's gas teaches the gas model, and a
// transaction seen in a block leaves the feed's pending list. A transaction
// still pending after PENDING_BLOCKS blocks is counted as not included.

const { sleep } = require('../../util/time');

const PENDING_BLOCKS = 32;

/**
 * The feed's transactions sent and not yet seen in a block: hash -> its kind, when it was sent, and the average gas
 * of its kind it was sent under (gasModel's predicted()).
 * @typedef {Map<string, {kind: string, at_ms: number, predicted?: number|null}>} Pending
 */
/** @typedef {Record<string, {used: number[], predicted: (number|null)[]}>} Ours a block's transactions of the feed */
// more new blocks than this at once (a long stall of the watcher): the older ones are skipped
const MAX_BLOCKS_PER_LOOK = 16;

/**
 * A block's record, and the feed's transactions in it by kind ({kind: {used: [gas, ...], predicted: [...]}}), from
 * the block and its receipts.
 * @param {any} block eth_getBlockByNumber(n, false)
 * @param {any[]|null} receipts eth_getBlockReceipts(n), or null when the block holds none of the feed's
 * @param {Pending} pending
 */
function readBlock(block, receipts, pending, seenMs) {
  const ours = /** @type {Ours} */ ({});
  const record = {
    number: Number(block.number),
    timestamp: Number(block.timestamp),
    seen_ms: seenMs,
    gas_used: Number(block.gasUsed),
    gas_limit: Number(block.gasLimit),
    base_fee: block.baseFeePerGas ? BigInt(block.baseFeePerGas).toString() : '0',
    txs: block.transactions.length,
    ours: 0,
    ours_gas: 0,
    reverted: 0,
  };
  for (const r of receipts || []) {
    const p = pending.get(r.transactionHash);
    if (!p) continue;
    pending.delete(r.transactionHash);
    const gas = Number(r.gasUsed);
    const k = (ours[p.kind] = ours[p.kind] || { used: [], predicted: [] });
    k.used.push(gas);
    k.predicted.push(p.predicted ?? null);
    record.ours++;
    record.ours_gas += gas;
    if (Number(r.status) !== 1) record.reverted++;
  }
  return { record, ours };
}

/**
 * Watches url's new blocks (every pollMs) from the current head on. onBlock(record, ours) for each; onBaseFee(bigint)
 * with the newest. Returns {stop, counts}: counts.not_included, blocks_skipped, last_error.
 * @param {{url: string, pending: Pending, rpc: Function, pollMs: number,
 *   onBlock: (record: any, ours: Ours) => void, onBaseFee: (fee: bigint) => void,
 *   log: (m: string) => void}} o
 */
function startWatcher({ url, pending, rpc, pollMs, onBlock, onBaseFee, log }) {
  const counts = { not_included: 0, blocks_skipped: 0, look_errors: 0, last_error: /** @type {string|null} */ (null) };
  const stop = new AbortController();
  const firstSent = new Map(); // block number at which each pending hash was first seen pending
  let last = -1;

  const forget = (head) => {
    for (const h of pending.keys()) {
      const since = firstSent.get(h);
      if (since === undefined) firstSent.set(h, head);
      else if (head - since > PENDING_BLOCKS) {
        pending.delete(h);
        firstSent.delete(h);
        counts.not_included++;
      }
    }
    for (const h of firstSent.keys()) if (!pending.has(h)) firstSent.delete(h);
  };

  const look = async () => {
    const head = Number(await rpc(url, 'eth_blockNumber', [], { signal: stop.signal }));
    if (last < 0) last = head;
    if (head - last > MAX_BLOCKS_PER_LOOK) {
      counts.blocks_skipped += head - last - MAX_BLOCKS_PER_LOOK;
      last = head - MAX_BLOCKS_PER_LOOK;
    }
    for (let n = last + 1; n <= head; n++) {
      const tag = `0x${n.toString(16)}`;
      const block = await rpc(url, 'eth_getBlockByNumber', [tag, false], { signal: stop.signal });
      const mine = block.transactions.some((h) => pending.has(h));
      const receipts = mine ? await rpc(url, 'eth_getBlockReceipts', [tag], { signal: stop.signal }) : null;
      const { record, ours } = readBlock(block, receipts, pending, Date.now());
      onBlock(record, ours);
      onBaseFee(BigInt(record.base_fee));
      last = n;
    }
    forget(head);
  };

  const loop = (async () => {
    while (!stop.signal.aborted) {
      try {
        await look();
      } catch (err) {
        if (stop.signal.aborted) break;
        counts.look_errors++;
        if (counts.look_errors === 1 || counts.look_errors % 50 === 0)
          log(`could not read the network's blocks (${counts.look_errors} times so far): ${err.message}`);
        counts.last_error = err.message;
      }
      await sleep(pollMs, stop.signal).catch(() => null);
    }
  })();
  return {
    counts: () => ({ ...counts, pending: pending.size }),
    async stop() {
      stop.abort();
      await loop;
    },
  };
}

module.exports = { startWatcher, readBlock, PENDING_BLOCKS };
