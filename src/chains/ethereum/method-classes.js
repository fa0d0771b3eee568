// @ts-check
'use strict';
// What each Ethereum JSON-RPC method does to a node, so that chainperf never
// sends writes, administration or node internals to a node it did not start
// (src/workload/safety.js). Classes:
//   read    answers from the chain and the node's public state, changes nothing
//   write   submits a transaction (someone's funds, someone's nonce)
//   debug   read-only, but node internals or tracing: not production traffic
//   admin   administers or changes the node (peers, mining, keys, its chain head)
//   unknown a method this table does not know
// A workload's own entries (tx.*, sub.*) are classed here too.

/** @typedef {'read'|'write'|'debug'|'admin'|'unknown'} MethodClass */

const READ = new Set([
  'eth_accounts',
  'eth_blobBaseFee',
  'eth_blockNumber',
  'eth_call',
  'eth_chainId',
  'eth_coinbase',
  'eth_createAccessList',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getCode',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_getHeaderByHash',
  'eth_getHeaderByNumber',
  'eth_getLogs',
  'eth_getProof',
  'eth_getStorageAt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_hashrate',
  'eth_maxPriorityFeePerGas',
  'eth_mining',
  'eth_newBlockFilter',
  'eth_newFilter',
  'eth_newPendingTransactionFilter',
  'eth_protocolVersion',
  'eth_simulateV1',
  'eth_subscribe',
  'eth_syncing',
  'eth_uninstallFilter',
  'eth_unsubscribe',
  'net_listening',
  'net_peerCount',
  'net_version',
  'rpc_modules',
  'txpool_content',
  'txpool_contentFrom',
  'txpool_inspect',
  'txpool_status',
  'web3_clientVersion',
  'web3_sha3',
]);

const WRITE = new Set([
  'eth_sendRawTransaction',
  'eth_sendRawTransactionConditional',
  'eth_sendTransaction',
  'eth_submitHashrate',
  'eth_submitWork',
  'eth_sendBundle',
  'eth_sendPrivateTransaction',
  'eth_cancelPrivateTransaction',
]);

/** Signing with the node's own keys: administration of its accounts, even where nothing is broadcast. */
const ADMIN = new Set([
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v3',
  'eth_signTypedData_v4',
]);
const ADMIN_PREFIXES = [
  'admin_',
  'miner_',
  'personal_',
  'engine_',
  'clique_',
  'les_',
  'signer_',
  'account_',
  'parity_',
];

/** debug_* methods that only read (tracing, raw data, dumps); every other debug_* method changes the node. */
const DEBUG_READS = [
  /^debug_trace/,
  /^trace_/,
  /^debug_getRaw/,
  /^debug_getModifiedAccounts/,
  /^debug_(storageRangeAt|accountRange|dumpBlock|getBadBlocks|intermediateRoots|printBlock|memStats|gcStats)$/,
  /^debug_(getAccessibleState|executionWitness|chaindbProperty|dbGet|dbAncient|dbAncients|getTrieFlushInterval)$/,
];

/**
 * The class of an Ethereum JSON-RPC method or of a workload entry (tx.* writes, sub.* subscriptions).
 * @param {string} method
 * @returns {MethodClass}
 */
function methodClass(method) {
  if (READ.has(method) || method.startsWith('sub.')) return 'read';
  if (WRITE.has(method) || method.startsWith('tx.')) return 'write';
  if (ADMIN.has(method) || ADMIN_PREFIXES.some((p) => method.startsWith(p))) return 'admin';
  if (DEBUG_READS.some((re) => re.test(method))) return 'debug';
  if (method.startsWith('debug_')) return 'admin';
  return 'unknown';
}

module.exports = { methodClass };
