'use strict';
// Harvests request parameters from the chain itself: block numbers, the
// hashes of real transactions, the addresses that sent and received them,
// and the Logger contract with call data for it. The pool goes into the
// report (params.json) so a run can be repeated with the same parameters.

const crypto = require('node:crypto');
const { ethers } = require('ethers');
const { rpcCall } = require('../../util/rpc');
const LOGGER = require('./contracts/Logger.json');
const { mapLimit } = require('../../util/async');
const { sleep } = require('../../util/time');

const SCAN_BLOCKS = 1024; // most recent blocks read for transactions
// The pool stops this many blocks below the head it saw: behind a balancer (REPLICA_METRICS, a fleet) a replica may
// be a block or two behind the one that answered, and a block or a log range it does not have yet would fail there.
const SETTLE_BLOCKS = 2;
const SETTLE_WAIT_S = 15; // a dev chain mines a block a second; one that mines only on a transaction never gets there
const MAX_TXS = 2000;
const MAX_ADDRESSES = 500;
const PING_TOPIC = ethers.id('Ping(address,uint256,bytes32)');

/**
 * The head, once the block `from` (the last of the history's first round of transfers and calls: HISTORY_BLOCKS of 2
 * or fewer puts every round in the top blocks) is SETTLE_BLOCKS below it, so that the pool holds a round; a chain
 * that does not get there in SETTLE_WAIT_S is harvested as it is.
 */
async function settledPast(call, from, { signal, log }) {
  let seen = Number(await call('eth_blockNumber', []));
  if (from === null || seen - SETTLE_BLOCKS >= from) return seen;
  log(`harvest: waiting for block ${from + SETTLE_BLOCKS} (the history's first round's + ${SETTLE_BLOCKS})`);
  const deadline = Date.now() + SETTLE_WAIT_S * 1000;
  while (seen - SETTLE_BLOCKS < from && Date.now() < deadline) {
    await sleep(250, signal);
    seen = Number(await call('eth_blockNumber', []));
  }
  return seen;
}

/**
 * What a block holds, as "<transactions>:<digest of their hashes>", so that an A/B session can pair the blocks of two
 * chains that hold the same transactions, whatever their numbers (ab/shared.js); null for a block that was not read.
 */
function blockContents(b) {
  if (!b) return null;
  const hashes = b.transactions.map((tx) => tx.hash).join(',');
  return `${b.transactions.length}:${crypto.createHash('sha256').update(hashes).digest('hex').slice(0, 16)}`;
}

/**
 * @param {string} url
 * @param {{signal?: AbortSignal, log?: Function, rpc?: Function, from?: number|null}} [o] from: a block the pool
 *   should reach (the last of the run's history's first round), waited for
 * @returns {Promise<object>} the parameter pool (see params.js for its use)
 */
async function harvest(url, { signal, log = () => {}, rpc = rpcCall, from = null } = {}) {
  const call = (method, params) => rpc(url, method, params, { signal, timeoutMs: 30000 });
  const chainId = Number(await call('eth_chainId', []));
  const seen = await settledPast(call, from, { signal, log });
  const head = Math.max(0, seen - SETTLE_BLOCKS);
  const first = Math.max(0, head - SCAN_BLOCKS + 1);
  const numbers = Array.from({ length: head - first + 1 }, (_, i) => first + i);
  log(`harvesting parameters from blocks ${first}..${head} (the head seen: ${seen})`);
  const blocks = await mapLimit(numbers, 8, (n) => call('eth_getBlockByNumber', [`0x${n.toString(16)}`, true]));

  const txHashes = [];
  const addresses = new Set();
  const senders = new Set();
  for (const b of blocks) {
    if (!b) continue;
    for (const tx of b.transactions) {
      if (txHashes.length < MAX_TXS) txHashes.push(tx.hash);
      senders.add(ethers.getAddress(tx.from));
      addresses.add(ethers.getAddress(tx.from));
      if (tx.to) addresses.add(ethers.getAddress(tx.to));
    }
  }
  const logs = await call('eth_getLogs', [
    { fromBlock: `0x${first.toString(16)}`, toBlock: `0x${head.toString(16)}`, topics: [PING_TOPIC] },
  ]);
  const contract = logs.length ? ethers.getAddress(logs[logs.length - 1].address) : null;

  const iface = new ethers.Interface(LOGGER.abi);
  const addrList = [...addresses].slice(0, MAX_ADDRESSES);
  const callData = [];
  const estimateData = [];
  if (contract) {
    for (let i = 0; i < Math.min(16, addrList.length); i++)
      callData.push(iface.encodeFunctionData('counts', [addrList[i]]));
    for (let i = 0; i < 8; i++) callData.push(iface.encodeFunctionData('sumCounts', [addrList.slice(i, i + 8)]));
    callData.push(iface.encodeFunctionData('total', []));
    for (let i = 0; i < 8; i++) estimateData.push(iface.encodeFunctionData('ping', [ethers.id(`estimate:${i}`)]));
  }
  return {
    chain_id: chainId,
    head,
    blocks: numbers,
    block_contents: blocks.map(blockContents),
    tx_hashes: txHashes,
    addresses: addrList,
    senders: [...senders].slice(0, MAX_ADDRESSES),
    contract,
    log_count: logs.length,
    call_data: callData,
    estimate_data: estimateData,
  };
}

/** What each method needs from the pool, so a workload it cannot serve fails before it starts. */
const NEEDS = {
  eth_getTransactionByHash: ['tx_hashes'],
  eth_getTransactionReceipt: ['tx_hashes'],
  eth_getBalance: ['addresses'],
  eth_getTransactionCount: ['addresses'],
  eth_getCode: ['addresses', 'contract'],
  eth_call: ['contract', 'call_data'],
  eth_getStorageAt: ['storage_contract', 'storage_slots'],
  eth_estimateGas: ['contract', 'senders', 'estimate_data'],
  eth_getLogs: ['contract'],
  'tx.token_transfer': ['contract'],
  'sub.logs': ['contract'],
};

/** Names every method of the mix whose parameters the pool cannot supply. */
function missingForMix(pool, methods) {
  const problems = [];
  for (const m of methods) {
    const lacking = (NEEDS[m] || []).filter((k) => !pool[k] || (Array.isArray(pool[k]) && pool[k].length === 0));
    if (lacking.length) problems.push(`${m} needs ${lacking.join(', ')}`);
  }
  return problems;
}

module.exports = { harvest, missingForMix, PING_TOPIC };
