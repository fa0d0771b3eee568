// @ts-check
'use strict';
// geth as a member of a local network (NETWORK_NODES): the flags that make a
// node a member rather than a dev chain of its own, and those a network node
// needs for a CHAIN_LOAD profile's traffic.

/** geth's well-known developer key (cmd/utils DeveloperKey): the account its dev genesis funds. Public knowledge. */
const DEV_KEY = '0xb71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291';
const NETWORK_ID = '1337'; // the dev chain's, kept for the network's genesis

/**
 * A network member's flags: the network's id, its node key, the engine API's secret; full sync of what peers hold, or
 * snap sync for a node that starts with the genesis block alone (SYNC=network with a STATE profile).
 */
function memberArgs({ nodeKeyHex, jwtFile, syncMode = 'full' }) {
  return [
    '--networkid',
    NETWORK_ID,
    '--syncmode',
    syncMode,
    '--nodekeyhex',
    nodeKeyHex,
    '--authrpc.jwtsecret',
    jwtFile,
  ];
}

/**
 * CHAIN_LOAD: what a network node needs for the profile's traffic: the gas limit it builds toward, room in its pool
 * for a few blocks' worth, no cap on a transaction's fee through RPC (full blocks raise the base fee).
 */
const chainArgs = (needs) =>
  needs
    ? [
        ...['--miner.gaslimit', String(needs.gas_limit)],
        ...['--txpool.globalslots', String(needs.txpool_global_slots)],
        ...['--txpool.accountslots', String(needs.txpool_account_slots)],
        ...['--rpc.txfeecap', String(needs.rpc_tx_fee_cap)],
      ]
    : [];

module.exports = { DEV_KEY, NETWORK_ID, memberArgs, chainArgs };
