'use strict';
// The Ethereum write workloads inside an artillery worker (mix entries tx.*):
//   tx.transfer        a signed value transfer to another writer account
//   tx.token_transfer  an ERC-20 style transfer on the harvested Logger contract (two balances, one Transfer log)
// Each virtual user claims one funded writer account (prepareWrites) for its
// life, fetches its nonce once and counts it up itself, signs with ethers and
// sends eth_sendRawTransaction, then waits until the transaction is in a
// block before sending the next, as a wallet does. One block watcher per
// worker polls the head (eth_blockNumber, then eth_getBlockByNumber for each
// new block) and settles the worker's pending hashes it finds; each hash is
// settled once, so an included transaction is counted once.
//
// A transaction is submitted in the window when eth_sendRawTransaction
// answered inside it, and included in the window when the watcher saw its
// block inside it (inclusion latency: from sending to seeing the block). Every
// JSON-RPC call the workload makes is a request in the figures.

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { ethers } = require('ethers');
const { writerKey } = require('../chains/ethereum/writers');
const LOGGER = require('../chains/ethereum/contracts/Logger.json');

const POLL_MS = 200;
const INCLUSION_TIMEOUT_MS = 60000;
const FEE = {
  maxFeePerGas: ethers.parseUnits('20', 'gwei'),
  maxPriorityFeePerGas: ethers.parseUnits('1', 'gwei'),
  type: 2,
};
const token = new ethers.Interface(LOGGER.abi);

/** The write workloads' mix entries. */
const WRITE_KINDS = ['tx.transfer', 'tx.token_transfer'];
const isWrite = (method) => method.startsWith('tx.');

/** Claims a writer slot across the run's workers (a file per slot, made exclusively). */
function claimer(dir, count) {
  return {
    claim() {
      fs.mkdirSync(dir, { recursive: true });
      for (let i = 0; i < count; i++) {
        try {
          fs.closeSync(fs.openSync(path.join(dir, String(i)), 'wx'));
          return i;
        } catch {
          // another virtual user signs with it
        }
      }
      return null;
    },
    release: (i) => fs.rmSync(path.join(dir, String(i)), { force: true }),
  };
}

/** One recorded JSON-RPC call: counted by the worker's recorder, ok or failed. */
function recordedCall(recorder, send, classify) {
  return async function call(method, params) {
    recorder.started();
    const t0 = performance.now();
    try {
      const r = await send(method, params);
      recorder.completed(method, performance.now() - t0, null, Date.now());
      return r;
    } catch (err) {
      recorder.completed(method, performance.now() - t0, classify(err), Date.now());
      throw err;
    }
  };
}

/**
 * Watches new blocks for the pending transactions while there are any. included(hash, t0) resolves
 * with the block and the instant it was seen, or rejects after INCLUSION_TIMEOUT_MS. state.lastBlock
 * is the last block looked at (set by the first write).
 */
function inclusionWatcher(call) {
  const pending = new Map(); // hash -> {t0, settle}
  const state = { lastBlock: null };
  let watching = false;

  async function poll() {
    const head = Number(await call('eth_blockNumber', []));
    for (let n = state.lastBlock + 1; n <= head; n++) {
      const block = await call('eth_getBlockByNumber', [ethers.toQuantity(n), false]);
      const seenAt = Date.now();
      for (const h of (block && block.transactions) || []) {
        const p = pending.get(h);
        if (!p) continue;
        pending.delete(h);
        p.settle(null, n, seenAt);
      }
      state.lastBlock = n;
    }
  }

  function expire() {
    const now = performance.now();
    for (const [h, p] of pending) {
      if (now - p.t0 > INCLUSION_TIMEOUT_MS) {
        pending.delete(h);
        p.settle(new Error(`not in a block after ${INCLUSION_TIMEOUT_MS / 1000} s`));
      }
    }
  }

  async function watch() {
    watching = true;
    try {
      while (pending.size) {
        await new Promise((r) => setTimeout(r, POLL_MS));
        try {
          await poll();
        } catch {
          // a failed poll is recorded as a failed request; the next one tries again
        }
        expire();
      }
    } finally {
      watching = false;
    }
  }

  function included(hash, t0) {
    return new Promise((resolve, reject) => {
      pending.set(hash, { t0, settle: (err, n, at) => (err ? reject(err) : resolve({ block: n, at })) });
      if (!watching) watch();
    });
  }

  return { state, included };
}

/** Signed transactions from the virtual users' accounts, each waited for until included (a wallet's way). */
class Writer {
  constructor({ spec, pool, recorder, extras, send, classify, claimsDir }) {
    if (!pool.writers) throw new Error('the write workload has no funded writer accounts in the parameter pool');
    this.spec = spec;
    this.pool = pool;
    this.tally = { submitted: 0, included: 0, failed: 0, inclusion_ms: [], included_blocks: {}, errors: {} };
    extras.writes = this.tally;
    this.slots = claimer(claimsDir, pool.writers.count);
    this.call = recordedCall(recorder, send, classify);
    this.watcher = inclusionWatcher(this.call);
  }

  inWindow(t) {
    return t >= this.spec.start_at && t < this.spec.end_at;
  }

  note(err) {
    const tally = this.tally;
    tally.failed++;
    const m = String(err.shortMessage || err.message || err).slice(0, 200);
    if (tally.errors[m] !== undefined || Object.keys(tally.errors).length < 20)
      tally.errors[m] = (tally.errors[m] || 0) + 1;
  }

  /** The account this virtual user signs with, claimed on its first transaction, and its next nonce. */
  async claimWriter(vars) {
    if (vars.chainperfWriter !== undefined && vars.chainperfWriter !== null) return;
    const slot = this.slots.claim();
    if (slot === null)
      throw new Error(`all ${this.pool.writers.count} writer accounts are signing for other virtual users`);
    vars.chainperfWriter = slot;
    vars.chainperfWallet = new ethers.Wallet(writerKey(this.pool.writers.seed, slot));
    vars.chainperfNonce = Number(await this.call('eth_getTransactionCount', [vars.chainperfWallet.address, 'pending']));
  }

  /** The signed transaction of kind for this user's next nonce. */
  signNext(kind, vars) {
    const { pool } = this;
    const to = pool.writers.addresses[(vars.chainperfWriter + 1) % pool.writers.count];
    const body =
      kind === 'tx.token_transfer'
        ? { to: pool.contract, data: token.encodeFunctionData('transfer', [to, 1n]), gasLimit: 100_000 }
        : { to, value: 1_000_000_000n, gasLimit: 21_000 };
    return vars.chainperfWallet.signTransaction({
      ...body,
      ...FEE,
      chainId: pool.chain_id,
      nonce: vars.chainperfNonce,
    });
  }

  /** Waits for the transaction's block; counts it when it was included inside the window. */
  async awaitInclusion(hash, t0) {
    const tally = this.tally;
    try {
      const r = await this.watcher.included(hash, t0);
      if (!this.inWindow(r.at)) return;
      tally.included++;
      tally.inclusion_ms.push(Math.round((performance.now() - t0) * 1000) / 1000);
      tally.included_blocks[r.block] = (tally.included_blocks[r.block] || 0) + 1;
    } catch (err) {
      if (this.inWindow(Date.now())) this.note(err);
    }
  }

  /** One transaction of kind tx.transfer or tx.token_transfer from this virtual user's account. */
  async write(kind, vars) {
    await this.claimWriter(vars);
    // the watcher looks from here on
    if (this.watcher.state.lastBlock === null)
      this.watcher.state.lastBlock = Number(await this.call('eth_blockNumber', []));
    const signed = await this.signNext(kind, vars);
    const t0 = performance.now();
    let hash;
    try {
      hash = await this.call('eth_sendRawTransaction', [signed]);
    } catch (err) {
      const address = vars.chainperfWallet.address;
      vars.chainperfNonce = Number(
        await this.call('eth_getTransactionCount', [address, 'pending']).catch(() => vars.chainperfNonce),
      );
      if (this.inWindow(Date.now())) this.note(err);
      return;
    }
    vars.chainperfNonce++;
    if (this.inWindow(Date.now())) this.tally.submitted++;
    await this.awaitInclusion(hash, t0);
  }

  release(vars) {
    if (vars.chainperfWriter !== undefined && vars.chainperfWriter !== null) this.slots.release(vars.chainperfWriter);
    vars.chainperfWriter = null;
  }
}

/**
 * @param {object} o
 * @param {object} o.spec generator spec (start_at, end_at)
 * @param {object} o.pool harvested pool with writers {seed, count, addresses}, chain_id, contract
 * @param {object} o.recorder the worker's recorder
 * @param {object} o.extras what the worker adds to its samples (extras.writes is filled here)
 * @param {(method:string, params:any[])=>Promise<any>} o.send the worker's JSON-RPC call (throws on failure)
 * @param {(err:Error)=>{kind:string, message:string}} o.classify
 */
const newWriter = (o) => new Writer(o);

module.exports = { newWriter, isWrite, WRITE_KINDS };
