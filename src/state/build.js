'use strict';
// Builds a STATE profile's geth data directory once and caches it outside the
// repository (~/.cache/chainperf/state/<profile>-geth-<version>-<engine>):
// a genesis with the profile's accounts and storage slots, `geth init`, then
// geth --dev on it while the history's transactions are sent and StateStore
// calls grow the state, then a clean stop. The directory is built beside its
// final place and renamed into it when complete, so a run never finds half a
// state. Runs restore a copy (state/restore.js) and never write into the cache.

const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const { ethers } = require('ethers');
const { cacheDir } = require('../install/cache');
const { runWithProgress } = require('../install/progress');
const { freePorts } = require('../util/net');
const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { mapLimit } = require('../util/async');
const LOGGER = require('../chains/ethereum/contracts/Logger.json');
const P = require('./profiles');
const { abandonBuild } = require('../install/build-dir');

// transactions each signer sends per round: 256 a round, so history spreads over many blocks
const ROUND_PER_SIGNER = 4;
// of the built state: a cached state of another format is built again (4: StateStore, its filled accounts and slots)
const FORMAT = 4;
// geth's path scheme keeps its last 128 blocks' trie changes in memory: blocks of thousands of new slots
// each took the builder to 24 GB here. So for the fill the builder mines a block as soon as transactions
// wait (--dev.period 0) and a round is 8 calls: blocks of a few thousand items. (The history is sent with
// a block a second, so its blocks hold many transactions, as a chain's do.) Blocks of 200M gas keep
// a round under half of one (the base fee does not climb); a call stays under the 2^24 gas cap of one transaction.
const BUILD_GAS_LIMIT = 200_000_000;
const FILL_ROUND = 8; // StateStore calls sent before waiting for the previous round
const FILL_PER_CALL = { slots: 650, accounts: 400 }; // about 14.5M and 13.9M gas

/** Where a profile's state lives in the cache. */
function stateDir(profile, version, engine) {
  return cacheDir('state', `${profile}-geth-${version}-${engine}`);
}

/** The cached state's manifest, or null when it is not built (or built by another format of this code). */
function readManifest(dir) {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    return m.format === FORMAT ? m : null;
  } catch {
    return null;
  }
}

function writeManifest(dir, manifest) {
  fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

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
  await runWithProgress(bin, ['--datadir', dataDir, 'db', 'compact'], { label: 'state: compacting', log, signal });
}

/**
 * Starts geth --dev on the data directory with an HTTP endpoint, a block each `period` seconds (0: as soon as
 * transactions wait); resolves {url, stop}.
 */
async function startBuilder(bin, dataDir, engine, logFile, period) {
  const { port, p2p, auth } = await freePorts(['port', 'p2p', 'auth']);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(
    bin,
    [
      '--dev',
      '--dev.period',
      String(period),
      '--datadir',
      dataDir,
      '--db.engine',
      engine,
      '--http',
      '--http.addr',
      '127.0.0.1',
      '--http.port',
      String(port),
      '--http.api',
      'eth,net,web3',
      '--port',
      String(p2p),
      '--authrpc.port',
      String(auth),
      '--ipcdisable',
      '--nodiscover',
      '--maxpeers',
      '0',
      '--txpool.accountslots',
      String(ROUND_PER_SIGNER * 2),
      '--txpool.globalslots',
      '20000',
      '--txpool.globalqueue',
      '20000',
      '--miner.gaslimit',
      String(BUILD_GAS_LIMIT),
    ],
    { stdio: ['ignore', out, out] },
  );
  fs.closeSync(out);
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 120000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`geth exited (status ${child.exitCode}) while starting on the new state`);
    try {
      await rpcCall(url, 'eth_blockNumber', [], { timeoutMs: 2000 });
      return { url, stop };
    } catch (err) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`geth did not answer on the new state in 120 s: ${err.message}`);
      }
      await sleep(300);
    }
  }
}

/** Waits until each signer's mined nonce reaches what was sent. */
async function waitMined(url, wallets, nonces, signal) {
  const deadline = Date.now() + 300000;
  for (;;) {
    const mined = await mapLimit(wallets, 8, (w) =>
      rpcCall(url, 'eth_getTransactionCount', [w.address, 'latest'], { signal }),
    );
    if (mined.every((n, i) => Number(n) >= nonces[i])) return;
    if (Date.now() > deadline) throw new Error("the history's transactions were not mined in 300 s");
    await sleep(300, signal);
  }
}

/** The signers and a send(k, tx) that signs with signer k at its next nonce; resolves the transaction's hash. */
async function signers(url, signal) {
  const chainId = Number(await rpcCall(url, 'eth_chainId', [], { signal }));
  const wallets = P.signerWallets();
  const nonces = await mapLimit(wallets, 8, async (w) =>
    Number(await rpcCall(url, 'eth_getTransactionCount', [w.address, 'pending'], { signal })),
  );
  const fee = {
    maxFeePerGas: ethers.parseUnits('20', 'gwei'),
    maxPriorityFeePerGas: ethers.parseUnits('1', 'gwei'),
    chainId,
    type: 2,
  };
  const send = async (k, tx) => {
    const signed = await wallets[k].signTransaction({ ...tx, ...fee, nonce: nonces[k]++ });
    await rpcCall(url, 'eth_sendRawTransaction', [signed], { signal, timeoutMs: 30000 });
    return ethers.keccak256(signed);
  };
  return { wallets, nonces, send };
}

/**
 * Sends the history: the Logger contract deployed, then transfers to new accounts and Logger calls in rounds.
 * @returns {Promise<{logger:string, tx_hashes:string[], first_block:number, last_block:number}>}
 */
async function sendHistory(url, profile, { log, signal }) {
  const { wallets, nonces, send } = await signers(url, signal);
  const firstBlock = Number(await rpcCall(url, 'eth_blockNumber', [], { signal })) + 1;
  const deploy = await send(0, { data: LOGGER.bytecode, gasLimit: 1_000_000 });
  await waitMined(url, wallets, nonces, signal);
  const receipt = await rpcCall(url, 'eth_getTransactionReceipt', [deploy], { signal });
  const logger = ethers.getAddress(receipt.contractAddress);
  const iface = new ethers.Interface(LOGGER.abi);
  const total = profile.transfers + profile.calls;
  const hashes = [deploy];
  const perRound = P.SIGNERS * ROUND_PER_SIGNER;
  let transfer = 0;
  let call = 0;
  for (let done = 0; done < total;) {
    const n = Math.min(perRound, total - done);
    // Transfers and calls interleaved in the proportion of the profile, so every part of history has both.
    const jobs = Array.from({ length: n }, (_, j) => {
      const isCall =
        (done + j) % Math.max(1, Math.round(total / Math.max(1, profile.calls))) === 0 && call < profile.calls;
      if (isCall || transfer >= profile.transfers)
        return {
          k: j % P.SIGNERS,
          tx: { to: logger, data: iface.encodeFunctionData('ping', [ethers.id(`state:${call++}`)]), gasLimit: 100_000 },
        };
      const to = P.accountAddress(profile.accounts + transfer);
      return { k: j % P.SIGNERS, tx: { to, value: ethers.parseEther('0.01') + BigInt(transfer++), gasLimit: 21000 } };
    });
    for (const bySigner of groupBy(jobs, (x) => x.k)) {
      hashes.push(...(await mapLimit(bySigner, 1, (x) => send(x.k, x.tx)))); // one signer's nonces in order
    }
    await waitMined(url, wallets, nonces, signal);
    done += n;
    log(`state history: ${done} of ${total} transactions mined`);
  }
  const lastBlock = Number(await rpcCall(url, 'eth_blockNumber', [], { signal }));
  return {
    logger,
    tx_hashes: hashes,
    first_block: firstBlock,
    last_block: lastBlock,
    transfers: transfer,
    calls: call,
  };
}

/**
 * Grows the state with StateStore calls: `count` items of a kind ('slots' or 'accounts') from index `from`,
 * FILL_ROUND calls at a time from different signers, the next round sent while the last is mined.
 * @returns {Promise<{seconds:number, transactions:number}>}
 */
async function fillState(url, kind, from, count, { log, signal }) {
  if (count <= 0) return { seconds: 0, transactions: 0 };
  const { wallets, nonces, send } = await signers(url, signal);
  const iface = new ethers.Interface(P.STORE.abi);
  const per = FILL_PER_CALL[kind];
  const t0 = Date.now();
  const step = Math.max(1, Math.floor(count / 20));
  let done = 0;
  let reported = 0;
  let calls = 0;
  let previous = null; // the nonces a round reached, to wait for while the next one is sent
  while (done < count) {
    for (let j = 0; j < FILL_ROUND && done < count; j++) {
      const k = calls % wallets.length;
      const n = Math.min(per, count - done);
      const data = iface.encodeFunctionData(kind === 'slots' ? 'fillSlots' : 'fillAccounts', [from + done, n]);
      await send(k, { to: P.STORAGE_CONTRACT, data, gasLimit: 16_000_000, value: kind === 'slots' ? 0n : BigInt(n) });
      done += n;
      calls++;
    }
    if (previous) await waitMined(url, wallets, previous, signal);
    previous = [...nonces];
    if (done - reported >= step || done === count) {
      reported = done;
      const s = (Date.now() - t0) / 1000;
      log(`state fill: ${done} of ${count} ${kind} sent (${Math.round(done / s)} a second)`);
    }
  }
  await waitMined(url, wallets, nonces, signal);
  await checkFilled(url, kind, from + count - 1, signal);
  return { seconds: Math.round((Date.now() - t0) / 100) / 10, transactions: calls };
}

/** The last item a fill wrote is in the state (a StateStore call that ran out of gas would have left it out). */
async function checkFilled(url, kind, last, signal) {
  if (kind === 'slots') {
    const v = await rpcCall(url, 'eth_getStorageAt', [P.STORAGE_CONTRACT, P.slotKey(last), 'latest'], { signal });
    if (BigInt(v) !== BigInt(last + 1))
      throw new Error(`state fill: slot ${last} holds ${v}, not ${last + 1}: a StateStore call failed`);
  } else {
    const v = await rpcCall(url, 'eth_getBalance', [P.accountAddress(last), 'latest'], { signal });
    if (BigInt(v) < 1n)
      throw new Error(
        `state fill: account ${last} (${P.accountAddress(last)}) was not created: a StateStore call failed`,
      );
  }
}

/**
 * geth keeps its last 128 blocks' trie changes in memory and journals them at a stop; after a fill those are
 * thousands of new items a block, and a node started on the state loaded them all (killed for memory at
 * MEMORY_MB=1536 on `large`). A block each for SETTLE_BLOCKS small transfers pushes them onto the disk.
 */
const SETTLE_BLOCKS = 130;
async function settleLayers(url, { log, signal }) {
  const { send } = await signers(url, signal);
  for (let i = 0; i < SETTLE_BLOCKS; i++) {
    const hash = await send(i % P.SIGNERS, { to: P.accountAddress(i), value: 1n, gasLimit: 21000 });
    for (;;) {
      if (await rpcCall(url, 'eth_getTransactionReceipt', [hash], { signal })) break;
      await sleep(20, signal);
    }
  }
  log(`state: ${SETTLE_BLOCKS} blocks after the fill, so geth's in-memory trie changes are small ones`);
}

/** A state built before settleLayers existed: settled once, in place, before its first use. */
async function settleCached(dir, manifest, { bin, engine, log, signal }) {
  if (manifest.settled || !(manifest.fill.slots + manifest.fill.accounts)) return manifest;
  log(`STATE=${manifest.profile}: settling the cached state once (${SETTLE_BLOCKS} blocks)`);
  const node = await startBuilder(bin, path.join(dir, 'data'), engine, path.join(dir, 'settle.log'), 0);
  try {
    await settleLayers(node.url, { log, signal });
  } finally {
    await node.stop();
  }
  const settled = { ...manifest, settled: true, size_bytes: duBytes(path.join(dir, 'data')) };
  writeManifest(dir, settled);
  return settled;
}

function groupBy(xs, key) {
  const m = new Map();
  for (const x of xs) {
    if (!m.has(key(x))) m.set(key(x), []);
    m.get(key(x)).push(x);
  }
  return [...m.values()];
}

/** Bytes under dir. */
function duBytes(dir) {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/**
 * The profile's cached state, built when missing.
 * @param {{profile:string, bin:string, version:string, engine:string, log:Function, signal?:AbortSignal}} o
 * @returns {Promise<{dir:string, dataDir:string, manifest:object, built:boolean}>}
 */
async function ensureState({ profile: name, bin, version, engine, log, signal }) {
  const dir = stateDir(name, version, engine);
  const existing = readManifest(dir);
  if (existing)
    return {
      dir,
      dataDir: path.join(dir, 'data'),
      manifest: await settleCached(dir, existing, { bin, engine, log, signal }),
      built: false,
    };
  const profile = P.PROFILES[name];
  if (!profile) throw new Error(`no STATE profile ${name}`);
  const from = Date.now();
  const tmp = `${dir}.building-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  log(
    `building STATE=${name} once into ${dir} (${profile.accounts} accounts, ${profile.slots} storage slots, ${profile.transfers} transfers, ${profile.calls} contract calls; ${profile.doc})`,
  );
  try {
    const genesis = path.join(tmp, 'genesis.json');
    writeGenesis(bin, genesis, profile, log);
    const dataDir = path.join(tmp, 'data');
    await runWithProgress(bin, ['init', '--datadir', dataDir, '--db.engine', engine, genesis], {
      label: 'state geth init',
      log,
      signal,
    });
    fs.rmSync(genesis);
    await dropGenesisSpec(bin, dataDir, log, signal);
    const buildLog = path.join(tmp, 'build.log');
    let history;
    const fill = {};
    let node = await startBuilder(bin, dataDir, engine, buildLog, 1);
    try {
      history = await sendHistory(node.url, profile, { log, signal });
      await node.stop();
      node = await startBuilder(bin, dataDir, engine, buildLog, 0);
      fill.slots = await fillState(node.url, 'slots', profile.slots, profile.fill_slots, { log, signal });
      fill.accounts = await fillState(
        node.url,
        'accounts',
        profile.accounts + history.transfers,
        profile.fill_accounts,
        { log, signal },
      );
      fill.last_block = Number(await rpcCall(node.url, 'eth_blockNumber', [], { signal }));
      if (profile.fill_slots + profile.fill_accounts) await settleLayers(node.url, { log, signal });
    } finally {
      await node.stop();
    }
    fs.writeFileSync(path.join(tmp, 'tx_hashes.json'), `${JSON.stringify(history.tx_hashes)}\n`);
    const manifest = {
      format: FORMAT,
      profile: name,
      client: 'geth',
      version,
      db_engine: engine,
      accounts: profile.accounts + history.transfers + profile.fill_accounts,
      genesis_accounts: profile.accounts,
      slots: profile.slots + profile.fill_slots,
      genesis_slots: profile.slots,
      fill: {
        accounts: profile.fill_accounts,
        slots: profile.fill_slots,
        last_block: fill.last_block,
        seconds: fill.slots.seconds + fill.accounts.seconds,
        transactions: fill.slots.transactions + fill.accounts.transactions,
      },
      storage_contract: P.STORAGE_CONTRACT,
      logger: history.logger,
      signers: P.signerWallets().map((w) => w.address),
      history: {
        first_block: history.first_block,
        last_block: history.last_block,
        transactions: history.tx_hashes.length,
        transfers: history.transfers,
        calls: history.calls,
      },
      build_seconds: Math.round((Date.now() - from) / 100) / 10,
      size_bytes: duBytes(dataDir),
      built_at: new Date().toISOString(),
      settled: true,
    };
    writeManifest(tmp, manifest);
    if (readManifest(dir)) {
      fs.rmSync(tmp, { recursive: true, force: true }); // another run finished the same build first
    } else {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
    log(
      `STATE=${name} built in ${manifest.build_seconds} s: ${(manifest.size_bytes / 2 ** 20).toFixed(1)} MiB, ${manifest.accounts} accounts, blocks ${manifest.history.first_block}..${manifest.history.last_block}`,
    );
    return { dir, dataDir: path.join(dir, 'data'), manifest: readManifest(dir), built: true };
  } catch (err) {
    throw abandonBuild(err, { dir, tmp, node: 'geth' });
  }
}

module.exports = { ensureState, stateDir, readManifest, writeGenesis, abandonBuild };
