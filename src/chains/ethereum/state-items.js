'use strict';
// The items of an Ethereum STATE profile, each derived from its index, so
// that the state builder writes them and the load generator asks for them
// without any list between the two: account i, storage slot i of the storage
// contract. And the generator's draw of one over the whole state.

const { ethers } = require('ethers');
const { indexDrawer } = require('../../util/draws');

/** The storage contract's address; its code is StateStore's (eth_call with a slot's key returns that slot). */
const STORAGE_CONTRACT = '0x00000000000000000000000000000000c0ffee01';

/**
 * Account i of a state, lower case: the last 20 bytes of keccak256(abi.encode(i)), as StateStore derives it. For each
 * request: no checksum.
 */
const word = new Uint8Array(32);
function accountAddressLower(i) {
  let v = BigInt(i);
  for (let b = 31; b >= 24; b--) {
    word[b] = Number(v & 0xffn);
    v >>= 8n;
  }
  return `0x${ethers.keccak256(word).slice(26)}`;
}

/** Account i of a state, checksummed (no key: funded in genesis, by a transfer or by StateStore). */
const accountAddress = (i) => ethers.getAddress(accountAddressLower(i));

/**
 * Storage slot i of the storage contract: its 32-byte key, i itself (the trie's key is its hash, so slots spread over
 * the trie). Its value is i + 1.
 */
const slotKey = (i) => ethers.toBeHex(i, 32);

const spaces = new WeakMap(); // pool -> its drawers, built once per generator

/**
 * The generator's draw of an account address or storage slot key from the whole state, for pools that
 * carry a state_space; null for other pools (the caller picks from the pool's list).
 * @param {'account'|'slot'} kind
 */
function stateSpaceDraw(pool, kind, r) {
  const space = pool.state_space;
  if (!space) return null;
  let d = spaces.get(pool);
  if (!d) {
    d = {
      account: indexDrawer(space.accounts, space.distribution),
      slot: indexDrawer(space.slots, space.distribution),
    };
    spaces.set(pool, d);
  }
  return kind === 'account' ? accountAddressLower(d.account(r)) : slotKey(d.slot(r));
}

module.exports = { STORAGE_CONTRACT, accountAddressLower, accountAddress, slotKey, stateSpaceDraw };
