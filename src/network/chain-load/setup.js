// @ts-check
'use strict';
// Before chain traffic flows: its senders funded and its contracts deployed,
// both through the network node that builds the blocks, and awaited until
// mined. Many senders (each with its own nonces, kept by the feed) so that
// no one account's queue in the transaction pool holds the traffic back.

const { ethers } = require('ethers');
const { sleep } = require('../../util/time');
const { signTx } = require('./kinds');
const { LOGGER, WRITER } = require('./compiled');

const { FEED_SENDERS: SENDERS } = require('./profiles');
const TIP = ethers.parseUnits('1', 'gwei');
const MIN_MAX_FEE = ethers.parseUnits('100', 'gwei');

/**
 * The fees of a transaction sent while the base fee is baseFee: a tip of 1 gwei, and room for the base fee to treble
 * before the transaction is included (it rises 12.5% a block when blocks are full).
 * @param {bigint} baseFee
 */
function fees(baseFee) {
  const max = 3n * baseFee + TIP;
  return { maxPriorityFeePerGas: TIP, maxFeePerGas: max > MIN_MAX_FEE ? max : MIN_MAX_FEE };
}

/** The feed's senders: signing keys derived from the seed. */
const senderKeys = (seed, n = SENDERS) =>
  Array.from({ length: n }, (_, i) => new ethers.SigningKey(ethers.id(`chainperf:chain-load:${seed}:${i}`)));

/** A signing key's address. */
const addressOf = (key) => ethers.computeAddress(key.publicKey);

/**
 * Waits until every hash has a receipt at url (up to timeoutS); returns the receipts in order. A node that has just
 * started answers "transaction indexing is in progress" for a while: not mined yet, for this wait.
 */
async function waitMined(url, hashes, { rpc, signal, timeoutS, what }) {
  const deadline = Date.now() + timeoutS * 1000;
  const receipts = [];
  for (const h of hashes) {
    for (;;) {
      const r = await rpc(url, 'eth_getTransactionReceipt', [h], { signal }).catch((err) => {
        if (/indexing is in progress/.test(err.message)) return null;
        throw err;
      });
      if (r) {
        receipts.push(r);
        break;
      }
      if (Date.now() > deadline) throw new Error(`the network did not mine ${what} within ${timeoutS} s`);
      await sleep(250, signal);
    }
  }
  return receipts;
}

/** The latest block's base fee at url (0 before London). */
async function baseFeeAt(url, rpc, signal) {
  const block = await rpc(url, 'eth_getBlockByNumber', ['latest', false], { signal });
  return BigInt(block.baseFeePerGas || 0);
}

/**
 * Funds the senders from funderKey through url: each gets a quarter of the funder's balance shared among them, so
 * that fees never run them dry even when full blocks push the base fee up; waits until mined.
 * @returns {Promise<{value: bigint}>}
 */
async function fundSenders({ url, funderKey, keys, rpc, signal, timeoutS }) {
  const funder = new ethers.SigningKey(funderKey);
  const from = addressOf(funder);
  const balance = BigInt(await rpc(url, 'eth_getBalance', [from, 'latest'], { signal }));
  const value = balance / (4n * BigInt(keys.length));
  if (value < ethers.parseEther('1'))
    throw new Error(
      `the funding account ${from} holds ${ethers.formatEther(balance)} ETH: too little to fund the chain load's ${keys.length} senders`,
    );
  let nonce = Number(await rpc(url, 'eth_getTransactionCount', [from, 'pending'], { signal }));
  const fee = fees(await baseFeeAt(url, rpc, signal));
  const hashes = [];
  for (const k of keys) {
    const tx = signTx(funder, { to: addressOf(k), value, data: '0x', gasLimit: 21000 }, { nonce: nonce++, ...fee });
    hashes.push(await rpc(url, 'eth_sendRawTransaction', [tx.raw], { signal }));
  }
  await waitMined(url, hashes, {
    rpc,
    signal,
    timeoutS,
    what: `the funding of the chain load's ${keys.length} senders`,
  });
  return { value };
}

/**
 * Deploys the token (Logger.sol: ERC-20 balances) and SlotWriter from the first sender; waits until mined. Returns
 * their addresses and the base fee of the latest block then.
 */
async function deployContracts({ url, key, rpc, signal, timeoutS }) {
  const from = addressOf(key);
  let nonce = Number(await rpc(url, 'eth_getTransactionCount', [from, 'pending'], { signal }));
  const fee = fees(await baseFeeAt(url, rpc, signal));
  const hashes = [];
  for (const code of [LOGGER.bytecode, WRITER.bytecode]) {
    const tx = signTx(key, { to: null, value: 0n, data: code, gasLimit: 2_000_000 }, { nonce: nonce++, ...fee });
    hashes.push(await rpc(url, 'eth_sendRawTransaction', [tx.raw], { signal }));
  }
  const receipts = await waitMined(url, hashes, { rpc, signal, timeoutS, what: "the chain load's contracts" });
  for (const r of receipts)
    if (Number(r.status) !== 1)
      throw new Error(`the deployment of the chain load's contract in ${r.transactionHash} failed`);
  return {
    token: receipts[0].contractAddress,
    writer: receipts[1].contractAddress,
    baseFee: await baseFeeAt(url, rpc, signal),
  };
}

module.exports = { SENDERS, fees, senderKeys, addressOf, waitMined, fundSenders, deployContracts, baseFeeAt };
