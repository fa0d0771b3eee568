'use strict';
// STATE profiles: what a chain built for measuring holds. Every item is
// derived from its index, so a pool can be drawn across the whole state
// without reading it back: account i, storage slot i, transfer i.
//
// The genesis holds `accounts` funded accounts (account i: 10^18 + i wei) and
// the StateStore contract with `slots` storage slots (slot i holds i + 1);
// transactions then build history: `transfers` value transfers, each to a new
// account (accounts + i), and `calls` calls of the Logger contract, which
// write its storage and emit logs. The fill adds `fill_slots` more slots and
// `fill_accounts` more 1-wei accounts (from accounts + transfers on), as
// StateStore's fillSlots and fillAccounts would. For geth 1.16.7 statewriter
// writes the genesis and the fill's items at once into the genesis state
// (`large` in about a minute; state/writer.js); for other versions they come
// from geth init and StateStore calls through the node, hundreds per
// transaction (`geth init` of 1M accounts and 1M slots peaked at 11.4 GB
// on a 2-core machine; the calls made 12,000 slots a second falling to 4,500 as the trie
// grew to 11M, then about 7,000 accounts a second).

const { ethers } = require('ethers');
const { STORAGE_CONTRACT, accountAddressLower, accountAddress, slotKey } = require('../chains/ethereum/state-items');

const PROFILES = {
  small: {
    accounts: 20000,
    slots: 20000,
    transfers: 2000,
    calls: 500,
    fill_accounts: 5000,
    fill_slots: 10000,
    doc: 'for tests: builds in well under a minute',
  },
  medium: {
    accounts: 1000000,
    slots: 1000000,
    transfers: 20000,
    calls: 5000,
    fill_accounts: 0,
    fill_slots: 0,
    doc: 'about 0.35 GB of database (pebble), built in about 2 minutes on 2 cores (mostly its history); through geth init (other geth versions) about 4 minutes, peaking at about 11.4 GB of memory',
  },
  large: {
    accounts: 1000000,
    slots: 1000000,
    transfers: 20000,
    calls: 5000,
    fill_accounts: 5000000,
    fill_slots: 10000000,
    doc: 'the medium state grown by 5M accounts and 10M slots: larger than the memory its scenarios allow',
  },
  xlarge: {
    accounts: 1000000,
    slots: 1000000,
    transfers: 20000,
    calls: 5000,
    fill_accounts: 50000000,
    fill_slots: 150000000,
    writer_only: true, // through geth init and the node it would take days
    doc: "the medium state grown by 50M accounts and 150M slots: about 28 GiB (30 GB) of database; geth 1.16.7 only (statewriter), written in about 32 minutes on 2 cores at about 2.1 GiB of memory, built in about 34; needs about 34 GiB free to build, 62 GiB with a run's copy",
  },
};
const STATES = ['dev', ...Object.keys(PROFILES)];
const SIGNERS = 64; // funded in the genesis; they sign the history's transactions

/** The signers of the history, from fixed keys. */
const signerWallets = (provider) =>
  Array.from({ length: SIGNERS }, (_, i) => new ethers.Wallet(ethers.id(`chainperf-state:signer:${i}`), provider));

const STORE = require('../chains/ethereum/contracts/StateStore.json');
const STORAGE_CODE = STORE.deployedBytecode;

module.exports = {
  PROFILES,
  STATES,
  SIGNERS,
  accountAddress,
  accountAddressLower,
  slotKey,
  signerWallets,
  STORAGE_CONTRACT,
  STORAGE_CODE,
  STORE,
};
