'use strict';
// The parameter pool of a STATE profile, drawn across the whole state and
// history (not only the last blocks, as the dev chain's harvest does).
// Accounts and storage slots are drawn for each request by the generator
// (stateSpaceDraw in chains/ethereum/state-items.js): an index over all of the state's accounts or slots,
// turned into the address or slot it names, so every one of them can be
// asked for and the node's working set is the state, not a list. Blocks and
// transactions (which cannot be derived from an index) are drawn here, and
// the generator picks uniformly from those lists. The distributions:
//   uniform - every account, slot, block and transaction equally likely.
//   skewed  - hot and cold: 90% of draws from a hot 10% of the items, 10%
//             from the other 90%, uniform within each. Hot accounts and slots
//             are a fixed pseudo-random tenth (spread over the whole trie);
//             hot blocks and transactions are the most recent tenth of history,
//             as production traffic favours the chain's head.

const { ethers } = require('ethers');
const { seededRandom } = require('../util/random');
const LOGGER = require('../chains/ethereum/contracts/Logger.json');
const P = require('./profiles');
const { drawer, indexDrawer, HOT_SHARE, HOT_DRAWS } = require('../util/draws');
const { stateSpaceDraw } = require('../chains/ethereum/state-items');

const POOL_SIZE = 4096; // draws per list
const DISTRIBUTIONS = ['uniform', 'skewed'];

/**
 * @param {object} manifest the state's manifest (state/build.js)
 * @param {string[]} txHashes every transaction of its history, in order
 * @param {{distribution:string, seed:number, head:number, chainId?:number, size?:number}} o head and chainId: the
 * chain's now
 * @returns {object} a pool in the shape harvest.js gives, plus storage_slots and how it was drawn
 */
function statePool(manifest, txHashes, { distribution, seed, head, chainId = 1337, size = POOL_SIZE }) {
  const r = seededRandom(seed);
  const draw = (n, hot) => {
    const d = drawer(n, distribution, r, hot);
    return Array.from({ length: size }, d);
  };
  const accountIdx = draw(manifest.accounts);
  const addresses = accountIdx.map(P.accountAddress);
  const slots = draw(manifest.slots).map(P.slotKey);
  const h = manifest.history;
  const blocks = draw(h.last_block).map((i) => i + 1); // blocks 1..last_block of the built history
  const txs = draw(txHashes.length, 'recent').map((i) => txHashes[i]);
  const iface = new ethers.Interface(LOGGER.abi);
  const who = [...manifest.signers, ...addresses.slice(0, 64)];
  const callData = [];
  for (let i = 0; i < 16; i++) callData.push(iface.encodeFunctionData('counts', [who[i % who.length]]));
  for (let i = 0; i < 8; i++) callData.push(iface.encodeFunctionData('sumCounts', [who.slice(i * 8, i * 8 + 8)]));
  callData.push(iface.encodeFunctionData('total', []));
  const estimateData = Array.from({ length: 8 }, (_, i) =>
    iface.encodeFunctionData('ping', [ethers.id(`estimate:${i}`)]),
  );
  return {
    chain_id: chainId,
    head,
    blocks,
    tx_hashes: txs,
    addresses,
    senders: manifest.signers,
    contract: manifest.logger,
    storage_contract: manifest.storage_contract,
    storage_slots: slots,
    // accounts and slots for each request: drawn over all of them by the generator (stateSpaceDraw)
    state_space: { accounts: manifest.accounts, slots: manifest.slots, distribution },
    log_count: h.calls,
    call_data: callData,
    estimate_data: estimateData,
    state: {
      profile: manifest.profile,
      distribution,
      accounts: manifest.accounts,
      slots: manifest.slots,
      history_blocks: h.last_block,
      transactions: txHashes.length,
      draws: size,
    },
  };
}

/** One line for the log. */
function describeStatePool(pool) {
  const st = pool.state;
  return `STATE=${st.profile}, ${st.distribution} draws over ${st.accounts} accounts and ${st.slots} storage slots (for each request), and over blocks 1..${st.history_blocks} and ${st.transactions} transactions (${st.draws} of each)`;
}

module.exports = {
  statePool,
  describeStatePool,
  drawer,
  indexDrawer,
  stateSpaceDraw,
  DISTRIBUTIONS,
  POOL_SIZE,
  HOT_SHARE,
  HOT_DRAWS,
};
