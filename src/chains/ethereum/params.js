'use strict';
// Request parameters for each Ethereum RPC method, drawn at random from a
// harvested pool (see harvest.js). Pure functions: the load generator calls
// them for every request, the unit tests call them with a fixed pool.

const { stateSpaceDraw } = require('./state-items');

const hex = (n) => `0x${n.toString(16)}`;
const pick = (list, r) => list[Math.floor(r() * list.length)];
// A STATE profile's pool draws accounts and slots over the whole state for each request; others pick from their lists.
const account = (pool, r) => stateSpaceDraw(pool, 'account', r) || pick(pool.addresses, r);
const slot = (pool, r) => stateSpaceDraw(pool, 'slot', r) || pick(pool.storage_slots, r);

/** Largest block span of one eth_getLogs request. */
const LOGS_SPAN = 100;

const BUILDERS = {
  eth_blockNumber: () => [],
  eth_gasPrice: () => [],
  eth_chainId: () => [],
  eth_getBlockByNumber: (pool, r) => [hex(pick(pool.blocks, r)), r() < 0.2],
  eth_getBalance: (pool, r) => [account(pool, r), 'latest'],
  eth_getTransactionCount: (pool, r) => [account(pool, r), 'latest'],
  eth_getCode: (pool, r) => [r() < 0.5 ? pool.contract : account(pool, r), 'latest'],
  eth_getStorageAt: (pool, r) => [pool.storage_contract, slot(pool, r), 'latest'],
  eth_getTransactionByHash: (pool, r) => [pick(pool.tx_hashes, r)],
  eth_getTransactionReceipt: (pool, r) => [pick(pool.tx_hashes, r)],
  eth_call: (pool, r) => [{ to: pool.contract, data: pick(pool.call_data, r) }, 'latest'],
  eth_estimateGas: (pool, r) => [{ from: pick(pool.senders, r), to: pool.contract, data: pick(pool.estimate_data, r) }],
  eth_getLogs: (pool, r) => {
    const from = pick(pool.blocks, r);
    const to = Math.min(pool.head, from + Math.floor(r() * LOGS_SPAN));
    return [{ fromBlock: hex(from), toBlock: hex(to), address: pool.contract }];
  },
};

const METHODS = Object.keys(BUILDERS);

/** Parameters for one request of `method`, drawn with the random source r. */
function paramsFor(method, pool, r) {
  const build = BUILDERS[method];
  if (!build) throw new Error(`no parameter builder for ${method}`);
  return build(pool, r);
}

module.exports = { METHODS, paramsFor, LOGS_SPAN };
