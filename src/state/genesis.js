'use strict';
// The genesis of a STATE profile: geth's dev genesis with the profile's
// accounts and storage slots, streamed to a file. With 0 accounts and 0 slots
// it is statewriter's base genesis (the dev genesis, the gas limit, the
// signers, StateStore's code with empty storage). For geth init (versions
// statewriter does not write): the genesis alloc blob geth keeps in its
// database then replaced by an empty one (statewriter writes an empty one).

const fs = require('node:fs');
const { spawnSync, execFileSync } = require('node:child_process');
const { ethers } = require('ethers');
const { runWithProgress } = require('../install/progress');
const P = require('./profiles');
const { BUILD_GAS_LIMIT } = require('./builder-node');

/** Writes the genesis: geth's dev genesis (its forks and system contracts) plus the profile's alloc, streamed. */
function writeGenesis(bin, file, profile, log) {
  const dev = JSON.parse(
    execFileSync(bin, ['--dev', 'dumpgenesis'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    }),
  );
  const alloc = dev.alloc;
  delete dev.alloc;
  dev.gasLimit = ethers.toQuantity(BUILD_GAS_LIMIT);
  const fd = fs.openSync(file, 'w');
  const head = JSON.stringify(dev);
  fs.writeSync(fd, `${head.slice(0, -1)},"alloc":{`);
  let first = true;
  const put = (addr, body) => {
    fs.writeSync(fd, `${first ? '' : ','}"${addr}":${JSON.stringify(body)}`);
    first = false;
  };
  for (const [addr, body] of Object.entries(alloc)) put(addr, body);
  for (const w of P.signerWallets()) put(w.address, { balance: ethers.parseEther('1000000').toString() });
  const step = Math.max(1, Math.floor(profile.accounts / 10));
  const chunk = [];
  for (let i = 0; i < profile.accounts; i++) {
    chunk.push(`,"${P.accountAddress(i)}":{"balance":"${(10n ** 18n + BigInt(i)).toString()}"}`);
    if (chunk.length === 1000) fs.writeSync(fd, chunk.splice(0).join(''));
    if ((i + 1) % step === 0) log(`state genesis: ${i + 1} of ${profile.accounts} accounts`);
  }
  fs.writeSync(fd, chunk.splice(0).join(''));
  fs.writeSync(fd, `,"${P.STORAGE_CONTRACT}":{"balance":"0","code":"${P.STORAGE_CODE}","storage":{`);
  for (let i = 0; i < profile.slots; i++) {
    chunk.push(`${i ? ',' : ''}"${P.slotKey(i)}":"${ethers.toBeHex(i + 1, 32)}"`);
    if (chunk.length === 1000) fs.writeSync(fd, chunk.splice(0).join(''));
  }
  fs.writeSync(fd, `${chunk.join('')}}}}}`);
  fs.closeSync(fd);
}

/**
 * geth keeps the whole genesis alloc as one JSON value in its database (for
 * live tracers only; nothing chainperf runs reads it). For a large genesis it
 * is most of the database, and pebble rewrites it in its compactions: block
 * building then took 2 s for about 15 transactions. Replaced by an empty
 * alloc after init, with the database compacted, the state is what remains.
 */
async function dropGenesisSpec(bin, dataDir, log, signal) {
  const out = execFileSync(bin, ['--datadir', dataDir, 'db', 'get', '0x6800000000000000006e'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const hash = (out.match(/: 0x([0-9a-f]{64})\s*$/m) || [])[1];
  if (!hash) throw new Error(`state: cannot read the genesis hash back from the new database: ${out.slice(-300)}`);
  const key = `0x${Buffer.from('ethereum-genesis-').toString('hex')}${hash}`;
  // An empty alloc ({}), not no value: geth --dev refuses a database without one. geth prints the
  // value it replaces (hundreds of MB of hex): that output is not kept.
  log('state: replacing the genesis alloc blob with {} in the database');
  const r = spawnSync(bin, ['--datadir', dataDir, 'db', 'put', key, '0x7b7d'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
  });
  if (r.status !== 0)
    throw new Error(`state: geth db put exited with status ${r.status}: ${String(r.stderr).slice(-500)}`);
  if (signal && signal.aborted) throw new Error('state: interrupted');
  await runWithProgress(bin, ['--datadir', dataDir, 'db', 'compact'], {
    label: 'state: compacting',
    step: 'state-compacting',
    log,
    signal,
  });
}

module.exports = { writeGenesis, dropGenesisSpec };
