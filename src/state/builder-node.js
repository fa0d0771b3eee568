'use strict';
// The geth --dev node a STATE build drives: started on the state's data
// directory with the transaction pool and gas limit a build needs, the
// history's signers (fixed keys funded in the genesis), and the wait for their
// transactions to be mined.

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { ethers } = require('ethers');
const { freePorts } = require('../util/net');
const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { mapLimit } = require('../util/async');
const P = require('./profiles');

// transactions each signer sends per round: 256 a round, so history spreads over many blocks
const ROUND_PER_SIGNER = 4;

// geth's path scheme keeps its last 128 blocks' trie changes in memory: blocks of thousands of new slots
// each took the builder to 24 GB here. So for the fill the builder mines a block as soon as transactions
// wait (--dev.period 0) and a round is 8 calls: blocks of a few thousand items. (The history is sent with
// a block a second, so its blocks hold many transactions, as a chain's do.) Blocks of 200M gas keep
// a round under half of one (the base fee does not climb); a call stays under the 2^24 gas cap of one transaction.
const BUILD_GAS_LIMIT = 200_000_000;

/**
 * Starts geth --dev on the data directory with an HTTP endpoint, a block each `period` seconds (0: as soon as
 * transactions wait); resolves {url, stop}.
 */
/** geth --dev's arguments for a build: its endpoints, no peers, the pool and gas limit a build's rounds need. */
function builderArgs({ dataDir, engine, period, port, p2p, auth }) {
  return [
    ...['--dev', '--dev.period', String(period), '--datadir', dataDir, '--db.engine', engine],
    ...['--http', '--http.addr', '127.0.0.1', '--http.port', String(port), '--http.api', 'eth,net,web3'],
    ...['--port', String(p2p), '--authrpc.port', String(auth), '--ipcdisable', '--nodiscover', '--maxpeers', '0'],
    ...['--txpool.accountslots', String(ROUND_PER_SIGNER * 2)],
    ...['--txpool.globalslots', '20000', '--txpool.globalqueue', '20000'],
    ...['--miner.gaslimit', String(BUILD_GAS_LIMIT)],
  ];
}

async function startBuilder(bin, dataDir, engine, logFile, period) {
  const { port, p2p, auth } = await freePorts(['port', 'p2p', 'auth']);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(bin, builderArgs({ dataDir, engine, period, port, p2p, auth }), { stdio: ['ignore', out, out] });
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

function groupBy(xs, key) {
  const m = new Map();
  for (const x of xs) {
    if (!m.has(key(x))) m.set(key(x), []);
    m.get(key(x)).push(x);
  }
  return [...m.values()];
}

module.exports = { ROUND_PER_SIGNER, BUILD_GAS_LIMIT, startBuilder, waitMined, signers, groupBy };
