'use strict';
// The chain spec of a Substrate STATE profile: the run's funded spec with the
// state's accounts written into its raw genesis (System.Account entries, the
// total issuance raised to match), streamed to a file (hundreds of MB).

const crypto = require('node:crypto');
const fs = require('node:fs');

/**
 * Writes the build's spec: runSpec (a raw spec, dev accounts funded) with `accounts` state accounts added to
 * its genesis and the total issuance raised by theirs. Streamed: a spec of millions of entries is larger than
 * a string can be. Returns its size and sha256.
 */
async function writeStateSpec(runSpec, outFile, accounts, log = () => {}, signal = null) {
  const { cryptoWaitReady } = require('@polkadot/util-crypto');
  const { u8aToHex, bnToU8a, hexToU8a, u8aToBn } = require('@polkadot/util');
  const { accountKey, accountInfo, TOTAL_ISSUANCE } = require('./accounts');
  const { stateAccountId, stateIssuance, STATE_FREE } = require('./state-accounts');
  await cryptoWaitReady();
  const spec = JSON.parse(fs.readFileSync(runSpec, 'utf8'));
  const top = spec.genesis.raw.top;
  const issued = top[TOTAL_ISSUANCE] ? BigInt(u8aToBn(hexToU8a(top[TOTAL_ISSUANCE]), { isLe: true }).toString()) : 0n;
  top[TOTAL_ISSUANCE] = u8aToHex(bnToU8a(issued + stateIssuance(accounts), { bitLength: 128 }));
  const MARK = '"0xc4a1c4a1":"chainperf"'; // the last key of top, replaced by the state's entries
  top['0xc4a1c4a1'] = 'chainperf';
  const text = JSON.stringify(spec);
  const at = text.indexOf(MARK);
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(outFile, 'w');
  const write = (s) => {
    fs.writeSync(fd, s);
    hash.update(s);
  };
  let bytes = 0;
  try {
    write(text.slice(0, at));
    bytes += at;
    const step = Math.max(1, Math.floor(accounts / 10));
    let chunk = [];
    for (let i = 0; i < accounts; i++) {
      chunk.push(`"${accountKey(stateAccountId(i))}":"${accountInfo(STATE_FREE + BigInt(i))}"`);
      if (chunk.length === 2000 || i === accounts - 1) {
        if (signal && signal.aborted) throw new Error('state: interrupted');
        const s = (bytes > at ? ',' : '') + chunk.join(',');
        write(s);
        bytes += s.length;
        chunk = [];
      }
      if ((i + 1) % step === 0) log(`state spec: ${i + 1} of ${accounts} accounts written`);
    }
    const rest = text.slice(at + MARK.length);
    write(rest);
    bytes += rest.length;
  } finally {
    fs.closeSync(fd);
  }
  return { bytes, sha256: hash.digest('hex') };
}

module.exports = { writeStateSpec };
