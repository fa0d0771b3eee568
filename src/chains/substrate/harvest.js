'use strict';
// Harvests request parameters from a Substrate chain: block numbers and
// hashes across its recent history, accounts with their balances, the funded
// dev accounts that can sign (on a dev chain chainperf started), and signed
// transfers for payment_queryInfo. The pool goes into the report
// (params.json) so a run can be repeated with the same parameters.

const { connectApi } = require('./api');
const { keyring, WELL_KNOWN, devUri } = require('./accounts');
const { mapLimit } = require('../../util/async');

const SCAN_BLOCKS = 1024; // most recent blocks whose hashes are harvested
// Of which the most recent, for historical state and decoded blocks: a pruning node keeps the state of its
// last 256 blocks, so 64 leave a run 192 blocks (6.4 minutes at a block each 2 s) before the oldest is gone.
const STATE_BLOCKS = 64;
const MAX_ACCOUNTS = 500;
const MAX_SIGNERS = 4096;

/** The dev accounts that have funds: the well-known ones, then chainperf's until the first without. */
async function fundedSigners(api, ring) {
  const free = async (uris) => {
    const infos = await api.query.system.account.multi(uris.map((u) => ring.addFromUri(u).address));
    return uris.filter((u, i) => infos[i].data.free.toBigInt() > 0n);
  };
  const out = await free(WELL_KNOWN.map((n) => `//${n}`));
  for (let from = 0; from < MAX_SIGNERS; from += 64) {
    const chunk = Array.from({ length: 64 }, (_, i) => devUri(from + i));
    const ok = await free(chunk);
    out.push(...ok);
    if (ok.length < chunk.length) break;
  }
  return out;
}

/**
 * @returns {Promise<object>} the parameter pool (see ops.js for its use)
 */
async function harvest(url, { signal, log = () => {} } = {}) {
  const api = await connectApi(url);
  try {
    const head = (await api.rpc.chain.getHeader()).number.toNumber();
    const first = Math.max(0, head - SCAN_BLOCKS + 1);
    log(`harvesting parameters from blocks ${first}..${head}`);
    const numbers = Array.from({ length: head - first + 1 }, (_, i) => first + i);
    const blocks = await mapLimit(numbers, 8, async (number) => {
      if (signal && signal.aborted) throw signal.reason;
      return { number, hash: (await api.rpc.chain.getBlockHash(number)).toHex() };
    });
    const page = await api.query.system.account.entriesPaged({ args: [], pageSize: MAX_ACCOUNTS });
    const accounts = page
      .map(([key, info]) => ({ address: key.args[0].toString(), free: info.data.free.toString() }))
      .filter((a) => BigInt(a.free) > 0n);
    const ring = await keyring(api.registry.chainSS58);
    const signers = await fundedSigners(api, ring);
    // Funded dev accounts are accounts with funds too (chopsticks lists only the keys blocks wrote).
    const known = new Set(accounts.map((a) => a.address));
    const signerInfos = await api.query.system.account.multi(signers.map((u) => ring.addFromUri(u).address));
    signers.forEach((u, i) => {
      const address = ring.addFromUri(u).address;
      if (!known.has(address) && accounts.length < MAX_ACCOUNTS)
        accounts.push({ address, free: signerInfos[i].data.free.toString() });
    });
    // payment_queryInfo does not check signatures or funds: Alice's signature serves any chain.
    const alice = ring.addFromUri('//Alice');
    const payment = [];
    for (let i = 0; i < 8; i++) {
      const dest = accounts.length ? accounts[i % accounts.length].address : alice.address;
      const tx = api.tx.balances.transferKeepAlive(dest, 10n ** 10n + BigInt(i));
      await tx.signAsync(alice, { nonce: i, era: 0 });
      payment.push(tx.toHex());
    }
    const version = api.runtimeVersion;
    return {
      chain: (await api.rpc.system.chain()).toString(),
      genesis_hash: api.genesisHash.toHex(),
      spec_name: version.specName.toString(),
      spec_version: version.specVersion.toNumber(),
      ss58_format: api.registry.chainSS58,
      head,
      blocks,
      state_blocks: blocks.slice(-STATE_BLOCKS),
      accounts,
      signers,
      payment_extrinsics: payment,
    };
  } finally {
    await api.disconnect();
  }
}

/** One line for the run log. */
function describePool(pool) {
  return `${pool.blocks.length} blocks (head ${pool.head}), ${pool.accounts.length} accounts with funds, ${pool.signers.length} funded dev signers, runtime ${pool.spec_name} ${pool.spec_version}`;
}

module.exports = { harvest, describePool, fundedSigners };
