'use strict';
// STATE profiles: what a chain built for measuring holds. Every item is
// derived from its index, so a pool can be drawn across the whole state
// without reading it back: account i, storage slot i, transfer i.
//
// The genesis holds `accounts` funded accounts and one storage contract with
// `slots` storage slots; transactions then build history: `transfers` value
// transfers, each to a new account (accounts + i), and `calls` calls of the
// Logger contract, which write its storage and emit logs. `geth init` of a
// genesis with 1M accounts and 1M slots peaked at 11.4 GB here: larger states
// must come from transactions, not genesis.

const { ethers } = require('ethers');

const PROFILES = {
  small: { accounts: 20000, slots: 20000, transfers: 2000, calls: 500, doc: 'for tests: builds in well under a minute' },
  medium: { accounts: 1000000, slots: 1000000, transfers: 20000, calls: 5000, doc: 'about 0.4 GB of database (pebble), built in about 4 minutes here; geth init peaks at about 11.4 GB of memory' },
  large: { accounts: 1000000, slots: 1000000, transfers: 200000, calls: 50000, doc: 'the medium genesis and ten times its history (200,000 new accounts by transfer)' },
};
const STATES = ['dev', ...Object.keys(PROFILES)];
const SIGNERS = 64; // funded in the genesis; they sign the history's transactions

/** Account i of a state: an address derived from i (no key: funded in genesis or by a transfer). */
const accountAddress = (i) => ethers.getAddress(`0x${ethers.keccak256(ethers.toUtf8Bytes(`chainperf-state:account:${i}`)).slice(-40)}`);

/** Storage slot i of the storage contract: its 32-byte key. Its value is i + 1. */
const slotKey = (i) => ethers.keccak256(ethers.toUtf8Bytes(`chainperf-state:slot:${i}`));

/** The signers of the history, from fixed keys. */
const signerWallets = (provider) => Array.from({ length: SIGNERS }, (_, i) => new ethers.Wallet(ethers.id(`chainperf-state:signer:${i}`), provider));

/** The storage contract's address, and its code: returns SLOAD(calldata[0:32]), so eth_call reads a slot too. */
const STORAGE_CONTRACT = '0x00000000000000000000000000000000c0ffee01';
const STORAGE_CODE = '0x6000355460005260206000f3'; // PUSH1 0 CALLDATALOAD SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN

module.exports = { PROFILES, STATES, SIGNERS, accountAddress, slotKey, signerWallets, STORAGE_CONTRACT, STORAGE_CODE };
