'use strict';
// Creates history on a fresh Substrate dev chain: signed
// balances.transferKeepAlive between the accounts funded in its genesis
// (accounts.js), in rounds so they land in several blocks, each round waiting
// until every transfer is in a block. Signing goes through @polkadot/api, as
// a wallet would.

const { connectApi } = require('./api');
const { devUris, keyring } = require('./accounts');

const ROUNDS = 8;
const ROUND_TIMEOUT_MS = 60000;

/** Sends a signed transfer and resolves when it is in a block; rejects on a dispatch error. */
function transferInBlock(api, from, to, amount, nonce) {
  return new Promise((resolve, reject) => {
    let unsub = null;
    const timer = setTimeout(() => {
      if (unsub) unsub();
      reject(new Error(`a history transfer was not in a block after ${ROUND_TIMEOUT_MS / 1000} s`));
    }, ROUND_TIMEOUT_MS);
    api.tx.balances
      .transferKeepAlive(to, amount)
      .signAndSend(from, { nonce }, (res) => {
        if (res.dispatchError) {
          clearTimeout(timer);
          if (unsub) unsub();
          reject(new Error(`history transfer failed: ${res.dispatchError.toString()}`));
        } else if (res.status.isInBlock || res.status.isFinalized) {
          // A node that finalizes its own blocks at once (omni-node --dev-block-time) reports Finalized without
          // InBlock.
          clearTimeout(timer);
          if (unsub) unsub();
          resolve((res.status.isInBlock ? res.status.asInBlock : res.status.asFinalized).toHex());
        } else if (res.status.isInvalid || res.status.isDropped || res.status.isUsurped) {
          clearTimeout(timer);
          if (unsub) unsub();
          reject(new Error(`history transfer ${res.status.type}`));
        }
      })
      .then(
        (u) => {
          unsub = u;
        },
        (err) => {
          clearTimeout(timer);
          reject(err);
        },
      );
  });
}

/**
 * @param {string} url the node's RPC endpoint
 * @param {{accounts:number, transfers:number, seed:number, signal?:AbortSignal, log?:Function}} opts
 * @returns {Promise<{accounts:string[], txs:number, blocks:string[]}>}
 */
async function createHistory(url, { accounts, transfers, seed = 1, signal, log = () => {} }) {
  const api = await connectApi(url);
  try {
    const ring = await keyring(api.registry.chainSS58);
    const pairs = devUris(accounts).map((u) => ring.addFromUri(u));
    const infos = await api.query.system.account.multi(pairs.map((p) => p.address));
    const funded = pairs.filter((p, i) => infos[i].data.free.toBigInt() > 0n);
    if (funded.length < 2)
      throw new Error(
        'the chain funds none of the dev accounts: history needs a dev chain chainperf started (its genesis funds them)',
      );
    const nonces = await Promise.all(
      funded.map((p) => api.rpc.system.accountNextIndex(p.address).then((n) => n.toNumber())),
    );
    const rounds = Math.max(ROUNDS, Math.ceil(transfers / funded.length));
    log(`creating history: ${transfers} transfers between ${funded.length} funded dev accounts in ${rounds} rounds`);
    const blocks = new Set();
    let sent = 0;
    for (let round = 0; round < rounds && sent < transfers; round++) {
      if (signal && signal.aborted) throw signal.reason;
      const n = Math.min(funded.length, Math.floor(transfers / rounds) + (round < transfers % rounds ? 1 : 0));
      const pending = [];
      for (let i = 0; i < n; i++) {
        const k = (round * 7919 + i + seed) % funded.length; // each sender once per round
        const to = funded[(k + 1 + round) % funded.length].address;
        pending.push(transferInBlock(api, funded[k], to, 10n ** 10n + BigInt(i), nonces[k]++));
      }
      for (const hash of await Promise.all(pending)) blocks.add(hash);
      sent += n;
      log(`creating history: round ${round + 1} of ${rounds} in blocks (${sent} transfers so far)`);
    }
    return { accounts: funded.map((p) => p.address), txs: sent, blocks: [...blocks] };
  } finally {
    await api.disconnect();
  }
}

module.exports = { createHistory };
