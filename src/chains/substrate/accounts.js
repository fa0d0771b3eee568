'use strict';
// Dev accounts for a Substrate dev chain, and a copy of a raw chain spec
// whose genesis funds them. The specs chainperf runs (live parachain specs
// such as bridge-hub-polkadot) fund no key anyone holds: Alice has nothing.
// Writing System.Account entries into genesis.raw.top (and raising
// Balances.TotalIssuance to match) gives the history, the transfer workload
// and payment_queryInfo signers with funds, on any client.

const fs = require('node:fs');
const { Keyring } = require('@polkadot/keyring');
const { cryptoWaitReady, xxhashAsU8a, blake2AsU8a } = require('@polkadot/util-crypto');
const { u8aToHex, u8aConcat, bnToU8a, hexToU8a, u8aToBn } = require('@polkadot/util');

const WELL_KNOWN = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie'];
/** Funds of every dev account: 10^22 planck (1e12 DOT at 10 decimals, 1e10 KSM at 12). */
const FUNDS = 10n ** 22n;

/** The secret URI of chainperf's i-th dev account (the well-known dev phrase, a chainperf path). */
const devUri = (i) => `//chainperf//${i}`;

/** The secret URIs funded in the genesis: the well-known accounts, then `count` chainperf accounts. */
function devUris(count) {
  return [...WELL_KNOWN.map((n) => `//${n}`), ...Array.from({ length: count }, (_, i) => devUri(i))];
}

const twox128 = (s) => xxhashAsU8a(s, 128);
const SYSTEM_ACCOUNT = u8aConcat(twox128('System'), twox128('Account'));
const TOTAL_ISSUANCE = u8aToHex(u8aConcat(twox128('Balances'), twox128('TotalIssuance')));

/** The storage key of System.Account for a 32-byte account id (Blake2_128Concat). */
function accountKey(publicKey) {
  return u8aToHex(u8aConcat(SYSTEM_ACCOUNT, blake2AsU8a(publicKey, 128), publicKey));
}

/**
 * SCALE of AccountInfo { nonce, consumers, providers, sufficients: u32,
 * data: { free, reserved, frozen, flags: u128 } }: 80 bytes, the layout of
 * every runtime with triple reference counts (the older misc_frozen /
 * fee_frozen pair has the same size and encodes zero the same way).
 */
function accountInfo(free) {
  const u32 = (n) => bnToU8a(n, { bitLength: 32 });
  const u128 = (n) => bnToU8a(n, { bitLength: 128 });
  return u8aToHex(u8aConcat(u32(0), u32(0), u32(1), u32(0), u128(free), u128(0n), u128(0n), u128(0n)));
}

async function keyring(ss58Format) {
  await cryptoWaitReady();
  return new Keyring({ type: 'sr25519', ss58Format });
}

/**
 * A run's node must not dial the live chain's public nodes: a chain spec's bootnodes are dropped from the copy a run
 * starts with (the genesis, and so the chain and its state, is unchanged). Returns how many there were.
 */
function dropBootNodes(spec) {
  const n = Array.isArray(spec.bootNodes) ? spec.bootNodes.length : 0;
  spec.bootNodes = [];
  return n;
}

/** Writes a copy of a chain spec file without its bootnodes (dropBootNodes); returns how many it had. */
function specWithoutBootNodes(srcFile, outFile) {
  const spec = JSON.parse(fs.readFileSync(srcFile, 'utf8'));
  const n = dropBootNodes(spec);
  fs.writeFileSync(outFile, JSON.stringify(spec));
  return n;
}

/**
 * Writes a copy of a raw chain spec whose genesis funds the dev accounts, without its bootnodes (dropBootNodes).
 * @returns {Promise<{file:string, funded:number, name:string, id:string, ss58Format:number, bootNodes:number}>}
 */
async function fundedSpec(srcFile, outFile, { accounts }) {
  const spec = JSON.parse(fs.readFileSync(srcFile, 'utf8'));
  const top = spec.genesis && spec.genesis.raw && spec.genesis.raw.top;
  if (!top) throw new Error(`${srcFile}: not a raw chain spec (no genesis.raw.top); build one with --raw`);
  const ss58Format = spec.properties && Number.isInteger(spec.properties.ss58Format) ? spec.properties.ss58Format : 42;
  const ring = await keyring(ss58Format);
  let added = 0n;
  const uris = devUris(accounts);
  for (const uri of uris) {
    const key = accountKey(ring.addFromUri(uri).publicKey);
    if (top[key]) continue; // an account the genesis already has keeps what it has
    top[key] = accountInfo(FUNDS);
    added += FUNDS;
  }
  const issued = top[TOTAL_ISSUANCE] ? u8aToBn(hexToU8a(top[TOTAL_ISSUANCE]), { isLe: true }) : 0n;
  top[TOTAL_ISSUANCE] = u8aToHex(bnToU8a(BigInt(issued.toString()) + added, { bitLength: 128 }));
  const bootNodes = dropBootNodes(spec);
  fs.writeFileSync(outFile, JSON.stringify(spec));
  return { file: outFile, funded: uris.length, name: spec.name, id: spec.id, ss58Format, bootNodes };
}

module.exports = {
  devUri,
  devUris,
  fundedSpec,
  specWithoutBootNodes,
  accountKey,
  accountInfo,
  keyring,
  WELL_KNOWN,
  FUNDS,
  TOTAL_ISSUANCE,
};
