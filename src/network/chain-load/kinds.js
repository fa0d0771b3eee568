// @ts-check
'use strict';
// The transactions of chain traffic (CHAIN_LOAD), kind by kind, and whom they
// touch. Each is a signed type-2 transaction on the network's chain id:
//   eth_transfer   - 1 wei to an account: 21,000 gas.
//   erc20_transfer - the token contract's transfer(to, 1) (Logger.sol's ERC-20 balances): two balances written and
//                    a Transfer log, about 35,000 to 55,000 gas (a new holder's balance costs a new slot).
//   storage_write  - SlotWriter.write over WRITE_KEYS slots: with a STATE profile each key's slot of the profile's
//                    storage contract is read (a STATICCALL of StateStore's fallback) and SlotWriter's slot under
//                    the same key is written with a new value; about 100,000 gas when the slots were written before,
//                    270,000 when they are new.
//   deploy         - a new contract: the token's code with 32 bytes of its own after it (never executed), so each
//                    deployment stores new code as most deployments on mainnet do; about 310,000 gas.
// Accounts and slots are drawn over a STATE profile's (accountAddress(i), slot i) with its distribution
// (STATE_DISTRIBUTION), or on a dev chain over DEV_SPACE: derived addresses that hold nothing until the feed
// touches them, and slot indices, skewed as mainnet's traffic is (a hot tenth takes nine draws in ten).

const { ethers } = require('ethers');
const { indexDrawer } = require('../../util/draws');
const { accountAddressLower, STORAGE_CONTRACT } = require('../../chains/ethereum/state-items');
const { LOGGER, WRITER: WRITER_JSON } = require('./compiled');

const CHAIN_ID = 1337;
const WRITE_KEYS = 10; // slots a storage_write reads and writes: a DEX swap's handful
const DEV_SPACE = { accounts: 10000, slots: 10000, distribution: 'skewed' };

/**
 * Per kind: the gas limit each transaction carries (room for its dearest case) and the gas expected before any
 * receipt has said (rate.js learns the real figure from the blocks).
 */
const KIND_GAS = {
  eth_transfer: { limit: 21000, prior: 21000 },
  erc20_transfer: { limit: 120000, prior: 50000 },
  storage_write: { limit: 400000, prior: 250000 },
  deploy: { limit: 500000, prior: 310000 },
};

const TOKEN = new ethers.Interface(LOGGER.abi);
const WRITER = new ethers.Interface(WRITER_JSON.abi);

/**
 * The creation code of a deployment: copies the runtime that follows it (the token's code and `extra`) and returns
 * it. PUSH2 len, DUP1, PUSH2 13, PUSH1 0, CODECOPY, PUSH1 0, RETURN: 13 bytes, then the runtime.
 * @param {string} runtimeHex 0x-prefixed
 */
function creationCode(runtimeHex) {
  const len = (runtimeHex.length - 2) / 2;
  if (len > 0xffff) throw new Error(`a runtime of ${len} bytes does not fit this creation code`);
  const l = len.toString(16).padStart(4, '0');
  return `0x61${l}8061000d6000396000f3${runtimeHex.slice(2)}`;
}

/** A deployment's creation code: the token's runtime with 32 bytes of its own after it. */
const deployCode = (unique32Hex) => creationCode(`${LOGGER.deployedBytecode}${unique32Hex.replace(/^0x/, '')}`);

/**
 * Draws of the accounts and slots a feed touches: over a STATE profile's (state: {accounts, slots, distribution})
 * or, on a dev chain (state null), over DEV_SPACE.
 * @param {{accounts: number, slots: number, distribution: string}|null} state
 * @param {() => number} r a random source in [0, 1)
 */
function spaceDraws(state, r) {
  const space = state || DEV_SPACE;
  const account = indexDrawer(space.accounts, space.distribution);
  const slot = indexDrawer(space.slots, space.distribution);
  return {
    space,
    store: state ? STORAGE_CONTRACT : ethers.ZeroAddress, // a dev chain has no StateStore to read
    accountIndex: () => account(r),
    account: () => accountAddressLower(account(r)),
    slot: () => slot(r),
  };
}

/**
 * The fields of transaction `n` of `kind` (to, data, value, gasLimit), nonce and fees left to the sender.
 * @param {string} kind
 * @param {{token: string, writer: string, draws: ReturnType<typeof spaceDraws>, salt: bigint, n: number}} ctx salt:
 *   a value of this feed's own (storage_write's new values and deployments' own bytes differ from any other feed's)
 */
function txFields(kind, { token, writer, draws, salt, n }) {
  const gasLimit = KIND_GAS[kind].limit;
  switch (kind) {
    case 'eth_transfer':
      return { to: draws.account(), value: 1n, data: '0x', gasLimit };
    case 'erc20_transfer':
      return { to: token, value: 0n, data: TOKEN.encodeFunctionData('transfer', [draws.account(), 1n]), gasLimit };
    case 'storage_write': {
      const keys = Array.from({ length: WRITE_KEYS }, () => draws.slot());
      // even: or(xor(v, salt), 1) in SlotWriter then differs for every n
      const s = (salt + BigInt(n)) << 8n;
      return { to: writer, value: 0n, data: WRITER.encodeFunctionData('write', [draws.store, keys, s]), gasLimit };
    }
    case 'deploy':
      return { to: null, value: 0n, data: deployCode(ethers.toBeHex(salt + BigInt(n), 32)), gasLimit };
    default:
      throw new Error(`unknown transaction kind ${kind}`);
  }
}

/**
 * A signed type-2 transaction on the network's chain id (the raw bytes and their hash). Signed with the key
 * directly: no provider, no address resolution.
 * @param {ethers.SigningKey} key
 * @param {{to: string|null, value: bigint, data: string, gasLimit: number}} fields
 * @param {{nonce: number, maxFeePerGas: bigint, maxPriorityFeePerGas: bigint}} o
 */
function signTx(key, fields, { nonce, maxFeePerGas, maxPriorityFeePerGas }) {
  const tx = ethers.Transaction.from({
    type: 2,
    chainId: CHAIN_ID,
    nonce,
    maxFeePerGas,
    maxPriorityFeePerGas,
    ...fields,
  });
  tx.signature = key.sign(tx.unsignedHash);
  const raw = tx.serialized;
  return { raw, hash: ethers.keccak256(raw) };
}

/**
 * Kinds in turn with the mix's shares exactly (smooth weighted round-robin): every stretch of sends holds each kind
 * at its share, so a block's gas varies with the slot's traffic, not with a random draw of kinds.
 * @param {Record<string, number>} mix shares by kind
 */
function kindCycle(mix) {
  const kinds = Object.keys(mix);
  const current = kinds.map(() => 0);
  return () => {
    let best = 0;
    for (let i = 0; i < kinds.length; i++) {
      current[i] += mix[kinds[i]];
      if (current[i] > current[best]) best = i;
    }
    current[best] -= 1;
    return kinds[best];
  };
}

module.exports = {
  CHAIN_ID,
  KIND_GAS,
  WRITE_KEYS,
  DEV_SPACE,
  creationCode,
  deployCode,
  spaceDraws,
  txFields,
  signTx,
  kindCycle,
};
