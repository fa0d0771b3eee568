'use strict';
// The accounts of a Substrate STATE profile (state.js beside this file): account
// i has no key, its 32-byte id is blake2_256 of a fixed tag and the 8-byte
// little-endian index, and its free balance is STATE_FREE + i. The builder
// writes them into the genesis; the generator derives account i for each
// request from an index drawn over all of them, so every one can be asked for.

const { blake2AsU8a } = require('@polkadot/util-crypto');
const { u8aToHex } = require('@polkadot/util');

const TAG = Buffer.from('chainperf-state:account:');
/**
 * Free balance of state account 0 (state account i holds STATE_FREE + i): 100 DOT at 10 decimals, above any existential
 * deposit.
 */
const STATE_FREE = 10n ** 12n;

const input = new Uint8Array(TAG.length + 8);
input.set(TAG, 0);

/** The 32-byte account id of state account i. */
function stateAccountId(i) {
  let v = i;
  for (let b = 0; b < 8; b++) {
    input[TAG.length + b] = v % 256;
    v = Math.floor(v / 256);
  }
  return blake2AsU8a(input, 256);
}

/** State account i as @polkadot/api takes an AccountId32: hex, no SS58 encoding for each request. */
const stateAccountHex = (i) => u8aToHex(stateAccountId(i));

/** Σ over i < n of STATE_FREE + i: what the state accounts add to the total issuance. */
const stateIssuance = (n) => BigInt(n) * STATE_FREE + (BigInt(n) * BigInt(n - 1)) / 2n;

module.exports = { stateAccountId, stateAccountHex, stateIssuance, STATE_FREE };
