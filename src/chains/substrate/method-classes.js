// @ts-check
'use strict';
// What each Substrate JSON-RPC method (and each operation of a dot-* mix) does
// to a node: the same classes as src/chains/ethereum/method-classes.js. The
// node's "unsafe" RPCs (those a node serves only with --rpc-methods unsafe)
// are administration when they change the node and debug when they only read
// its internals.

/** @typedef {import('../ethereum/method-classes').MethodClass} MethodClass */

const READ_PREFIXES = [
  'chain_',
  'state_',
  'childstate_',
  'archive_',
  'chainHead_',
  'chainSpec_',
  'mmr_',
  'beefy_',
  'grandpa_',
  'payment_',
  'query.',
  'at.',
];
const READ = new Set([
  'rpc_methods',
  'system_chain',
  'system_chainType',
  'system_health',
  'system_name',
  'system_nodeRoles',
  'system_properties',
  'system_syncState',
  'system_version',
  'system_accountNextIndex',
  'system_localPeerId',
  'system_localListenAddresses',
  'author_pendingExtrinsics',
  'sync_state_genSyncSpec',
]);
const WRITE = new Set([
  'author_submitExtrinsic',
  'author_submitAndWatchExtrinsic',
  'transaction_v1_broadcast',
  'transaction_v1_stop',
  'transactionWatch_v1_submitAndWatch',
  'transactionWatch_v1_unwatch',
]);
/** Unsafe RPCs that only read the node's internals. */
const DEBUG = new Set([
  'system_peers',
  'system_networkState',
  'system_reservedPeers',
  'system_dryRun',
  'state_traceBlock',
  'state_trieMigrationStatus',
  'babe_epochAuthorship',
  'author_hasKey',
  'author_hasSessionKeys',
  'dev_getBlockStats',
]);
/** Unsafe RPCs that change the node: its peers, its keys, its pool, its logging, its offchain storage. */
const ADMIN = new Set([
  'system_addReservedPeer',
  'system_removeReservedPeer',
  'system_addLogFilter',
  'system_resetLogFilter',
  'author_insertKey',
  'author_rotateKeys',
  'author_removeExtrinsic',
]);
const ADMIN_PREFIXES = ['offchain_', 'engine_'];

/**
 * The class of a Substrate JSON-RPC method or of a dot-* mix operation (balances.* submit transfers).
 * @param {string} method
 * @returns {MethodClass}
 */
function methodClass(method) {
  if (DEBUG.has(method)) return 'debug';
  if (ADMIN.has(method) || ADMIN_PREFIXES.some((p) => method.startsWith(p))) return 'admin';
  if (WRITE.has(method) || method.startsWith('balances.')) return 'write';
  if (READ.has(method) || READ_PREFIXES.some((p) => method.startsWith(p))) return 'read';
  return 'unknown';
}

module.exports = { methodClass };
