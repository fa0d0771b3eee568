// @ts-check
'use strict';
// NETWORK_TPS: signed transfers that enter a local network through its other
// nodes, never through the node under test, which then receives them the way
// a node of a real network does: by gossip from its peers. A few sending
// accounts (derived from SEED, funded once by the chain's developer account)
// take turns, so a transaction lost on the way holds up one account, not all.

const { ethers } = require('ethers');
const { sleep } = require('../util/time');

const SENDERS = 4;
const CHAIN_ID = 1337;
const FEE = { maxFeePerGas: ethers.parseUnits('100', 'gwei'), maxPriorityFeePerGas: ethers.parseUnits('1', 'gwei') };

/** The sending accounts: public keys derived from the seed, like the dev chain's. */
const senderWallets = (seed) =>
  Array.from({ length: SENDERS }, (_, i) => new ethers.Wallet(ethers.id(`chainperf:network:${seed}:${i}`)));

/** A signed transfer of `value` wei, type 2, on the network's chain id. */
function signTransfer(wallet, { to, value, nonce }) {
  return wallet.signTransaction({ to, value, nonce, gasLimit: 21000, chainId: CHAIN_ID, type: 2, ...FEE });
}

/**
 * Funds the senders from the developer account through `url` and waits until the network has mined them.
 * @returns {Promise<ethers.Wallet[]>}
 */
async function fundSenders({ url, devKey, seed, rpc, signal, timeoutS = 60 }) {
  const dev = new ethers.Wallet(devKey);
  const wallets = senderWallets(seed);
  let nonce = Number(await rpc(url, 'eth_getTransactionCount', [dev.address, 'pending'], { signal }));
  const hashes = [];
  for (const w of wallets) {
    const raw = await signTransfer(dev, { to: w.address, value: ethers.parseEther('1000'), nonce: nonce++ });
    hashes.push(await rpc(url, 'eth_sendRawTransaction', [raw], { signal }));
  }
  const deadline = Date.now() + timeoutS * 1000;
  // A node that has just started answers "transaction indexing is in progress" for a while: not mined yet, for us.
  const receipt = (h) =>
    rpc(url, 'eth_getTransactionReceipt', [h], { signal }).catch((err) => {
      if (/indexing is in progress/.test(err.message)) return null;
      throw err;
    });
  for (const h of hashes) {
    while (!(await receipt(h))) {
      if (Date.now() > deadline)
        throw new Error(`the network did not mine the funding of its transaction senders within ${timeoutS} s`);
      await sleep(250, signal);
    }
  }
  return wallets;
}

/**
 * Sends `tps` transfers per second, taking the senders and the entry nodes in turn. stats: sent, failed, the last
 * error; stop() waits for the sends under way.
 * @param {{urls: string[], wallets: ethers.Wallet[], tps: number, rpc: Function, log: (m: string) => void}} o
 */
function startTxFeed({ urls, wallets, tps, rpc, log }) {
  const stats = { sent: 0, failed: 0, last_error: /** @type {string|null} */ (null) };
  const nonces = wallets.map(() => 0);
  const sink = ethers.Wallet.createRandom().address; // value goes nowhere in particular
  const started = Date.now();
  const inFlight = new Set();
  let turn = 0;
  let due = 0;

  const sendOne = async () => {
    const k = turn++;
    const w = k % wallets.length;
    const url = urls[k % urls.length];
    const nonce = nonces[w]++;
    try {
      const raw = await signTransfer(wallets[w], { to: sink, value: 1n, nonce });
      await rpc(url, 'eth_sendRawTransaction', [raw], { timeoutMs: 10000 });
      stats.sent++;
    } catch (err) {
      stats.failed++;
      if (stats.failed === 1 || stats.failed % 100 === 0) log(`network: a transaction was refused (${err.message})`);
      stats.last_error = err.message;
      // the node did not take it: ask it where this sender stands before its next turn
      nonces[w] = Number(await rpc(url, 'eth_getTransactionCount', [wallets[w].address, 'pending']).catch(() => nonce));
    }
  };
  const timer = setInterval(() => {
    due = Math.floor(((Date.now() - started) / 1000) * tps);
    while (turn < due && inFlight.size < 64) {
      const p = sendOne().finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }, 100);
  return {
    stats,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
    },
  };
}

module.exports = { fundSenders, startTxFeed, senderWallets, signTransfer, CHAIN_ID };
