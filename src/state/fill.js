'use strict';
// What a STATE build sends through its node: the history (transfers to new
// accounts, Logger calls), the StateStore calls that grow the state by
// hundreds of items each, and the small blocks after them that settle geth's
// in-memory trie changes onto disk.

const { ethers } = require('ethers');
const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { mapLimit } = require('../util/async');
const LOGGER = require('../chains/ethereum/contracts/Logger.json');
const P = require('./profiles');
const { ROUND_PER_SIGNER, groupBy, signers, waitMined } = require('./builder-node');

const FILL_ROUND = 8; // StateStore calls sent before waiting for the previous round

const FILL_PER_CALL = { slots: 650, accounts: 400 }; // about 14.5M and 13.9M gas

/**
 * Sends the history: the Logger contract deployed, then transfers to new accounts and Logger calls in rounds.
 * @returns {Promise<{logger:string, tx_hashes:string[], first_block:number, last_block:number}>}
 */
async function sendHistory(url, profile, { log, signal }) {
  const { wallets, nonces, send } = await signers(url, signal);
  const firstBlock = Number(await rpcCall(url, 'eth_blockNumber', [], { signal })) + 1;
  const deploy = await send(0, { data: LOGGER.bytecode, gasLimit: 1_000_000 });
  await waitMined(url, wallets, nonces, signal);
  const receipt = await rpcCall(url, 'eth_getTransactionReceipt', [deploy], { signal });
  const logger = ethers.getAddress(receipt.contractAddress);
  const iface = new ethers.Interface(LOGGER.abi);
  const total = profile.transfers + profile.calls;
  const hashes = [deploy];
  const perRound = P.SIGNERS * ROUND_PER_SIGNER;
  let transfer = 0;
  let call = 0;
  for (let done = 0; done < total;) {
    const n = Math.min(perRound, total - done);
    // Transfers and calls interleaved in the proportion of the profile, so every part of history has both.
    const jobs = Array.from({ length: n }, (_, j) => {
      const isCall =
        (done + j) % Math.max(1, Math.round(total / Math.max(1, profile.calls))) === 0 && call < profile.calls;
      if (isCall || transfer >= profile.transfers)
        return {
          k: j % P.SIGNERS,
          tx: { to: logger, data: iface.encodeFunctionData('ping', [ethers.id(`state:${call++}`)]), gasLimit: 100_000 },
        };
      const to = P.accountAddress(profile.accounts + transfer);
      return { k: j % P.SIGNERS, tx: { to, value: ethers.parseEther('0.01') + BigInt(transfer++), gasLimit: 21000 } };
    });
    for (const bySigner of groupBy(jobs, (x) => x.k)) {
      hashes.push(...(await mapLimit(bySigner, 1, (x) => send(x.k, x.tx)))); // one signer's nonces in order
    }
    await waitMined(url, wallets, nonces, signal);
    done += n;
    log(`state history: ${done} of ${total} transactions mined`);
  }
  const lastBlock = Number(await rpcCall(url, 'eth_blockNumber', [], { signal }));
  return {
    logger,
    tx_hashes: hashes,
    first_block: firstBlock,
    last_block: lastBlock,
    transfers: transfer,
    calls: call,
  };
}

/**
 * Grows the state with StateStore calls: `count` items of a kind ('slots' or 'accounts') from index `from`,
 * FILL_ROUND calls at a time from different signers, the next round sent while the last is mined.
 * @returns {Promise<{seconds:number, transactions:number}>}
 */
async function fillState(url, kind, from, count, { log, signal }) {
  if (count <= 0) return { seconds: 0, transactions: 0 };
  const { wallets, nonces, send } = await signers(url, signal);
  const iface = new ethers.Interface(P.STORE.abi);
  const per = FILL_PER_CALL[kind];
  const t0 = Date.now();
  const step = Math.max(1, Math.floor(count / 20));
  let done = 0;
  let reported = 0;
  let calls = 0;
  let previous = null; // the nonces a round reached, to wait for while the next one is sent
  while (done < count) {
    for (let j = 0; j < FILL_ROUND && done < count; j++) {
      const k = calls % wallets.length;
      const n = Math.min(per, count - done);
      const data = iface.encodeFunctionData(kind === 'slots' ? 'fillSlots' : 'fillAccounts', [from + done, n]);
      await send(k, { to: P.STORAGE_CONTRACT, data, gasLimit: 16_000_000, value: kind === 'slots' ? 0n : BigInt(n) });
      done += n;
      calls++;
    }
    if (previous) await waitMined(url, wallets, previous, signal);
    previous = [...nonces];
    if (done - reported >= step || done === count) {
      reported = done;
      const s = (Date.now() - t0) / 1000;
      log(`state fill: ${done} of ${count} ${kind} sent (${Math.round(done / s)} a second)`);
    }
  }
  await waitMined(url, wallets, nonces, signal);
  await checkFilled(url, kind, from + count - 1, signal);
  return { seconds: Math.round((Date.now() - t0) / 100) / 10, transactions: calls };
}

/** The last item a fill wrote is in the state (a StateStore call that ran out of gas would have left it out). */
async function checkFilled(url, kind, last, signal) {
  if (kind === 'slots') {
    const v = await rpcCall(url, 'eth_getStorageAt', [P.STORAGE_CONTRACT, P.slotKey(last), 'latest'], { signal });
    if (BigInt(v) !== BigInt(last + 1))
      throw new Error(`state fill: slot ${last} holds ${v}, not ${last + 1}: a StateStore call failed`);
  } else {
    const v = await rpcCall(url, 'eth_getBalance', [P.accountAddress(last), 'latest'], { signal });
    if (BigInt(v) < 1n)
      throw new Error(
        `state fill: account ${last} (${P.accountAddress(last)}) was not created: a StateStore call failed`,
      );
  }
}

/**
 * geth keeps its last 128 blocks' trie changes in memory and journals them at a stop; after a fill those are
 * thousands of new items a block, and a node started on the state loaded them all (killed for memory at
 * MEMORY_MB=1536 on `large`). A block each for SETTLE_BLOCKS small transfers pushes them onto the disk.
 */
const SETTLE_BLOCKS = 130;

async function settleLayers(url, { log, signal }) {
  const { send } = await signers(url, signal);
  for (let i = 0; i < SETTLE_BLOCKS; i++) {
    const hash = await send(i % P.SIGNERS, { to: P.accountAddress(i), value: 1n, gasLimit: 21000 });
    for (;;) {
      if (await rpcCall(url, 'eth_getTransactionReceipt', [hash], { signal })) break;
      await sleep(20, signal);
    }
  }
  log(`state: ${SETTLE_BLOCKS} blocks after the fill, so geth's in-memory trie changes are small ones`);
}

module.exports = {
  FILL_ROUND,
  FILL_PER_CALL,
  sendHistory,
  fillState,
  checkFilled,
  SETTLE_BLOCKS,
  settleLayers,
};
