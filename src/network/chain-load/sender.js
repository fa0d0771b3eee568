// @ts-check
'use strict';
// The send loop of chain traffic: every TICK_MS the pacer says how many sends
// are due at the rate the profile's gas per second and the learned gas per
// transaction give; each takes the next kind of the mix, the next free
// sender (its nonce kept here) and that sender's entry node, and goes out as
// eth_sendRawTransaction. A refused transaction makes its sender ask the node
// where its nonce stands before its next turn.

const { txFields, signTx, kindCycle } = require('./kinds');
const { fees, addressOf } = require('./setup');
const { pacer, txRate } = require('./rate');

const TICK_MS = 20;
const MAX_IN_FLIGHT = 128;
const SEND_TIMEOUT_MS = 10000;

/** Per-kind counters at 0. */
const perKind = (mix) => Object.fromEntries(Object.keys(mix).map((k) => [k, 0]));

/**
 * The answer of a node that already holds the transaction: sent, as far as the feed is concerned (a retry of one that
 * went through).
 */
const alreadyKnown = (err) => /already known|known transaction/i.test(String(err && err.message));

/**
 * The sends of one feed. keys: the funded senders; nonces: their next nonces; ctx: the kinds' context (token, writer,
 * draws, salt); model: the gas model (rate.js); pending: hash -> {kind, at_ms}, for the block watcher.
 */
class Sender {
  /**
   * @param {{urls: string[], keys: import('ethers').SigningKey[], nonces: number[], profile: any, ctx: any,
   *   model: ReturnType<typeof import('./rate').gasModel>, pending: import('./watcher').Pending,
   *   rpc: Function, log: (m: string) => void, maxInFlight?: number, now?: () => number, baseFee?: bigint}} o
   *   baseFee: the latest block's when the sends start
   */
  constructor(o) {
    this.urls = o.urls;
    this.keys = o.keys;
    this.nonces = o.nonces;
    this.profile = o.profile;
    this.ctx = o.ctx;
    this.model = o.model;
    this.pending = o.pending;
    this.rpc = o.rpc;
    this.log = o.log;
    this.now = o.now || Date.now;
    /** @type {NodeJS.Timeout|undefined} */
    this.timer = undefined;
    this.cap = o.maxInFlight || MAX_IN_FLIGHT;
    this.counts = {
      sent_total: 0,
      sent: perKind(o.profile.mix),
      failed_total: 0,
      failed: perKind(o.profile.mix),
      last_error: /** @type {string|null} */ (null),
      in_flight: 0,
      rate: 0,
    };
    this.addresses = o.keys.map(addressOf);
    this.resyncing = new Set();
    this.nextKind = kindCycle(o.profile.mix);
    this.pace = pacer();
    this.inFlight = new Set();
    this.fee = fees(o.baseFee || 0n);
    this.turn = 0;
    this.n = 0;
    this.paused = false;
  }

  /** Asks sender w's node where its nonce stands; the sender waits meanwhile. */
  async resync(w, url) {
    this.resyncing.add(w);
    try {
      this.nonces[w] = Number(await this.rpc(url, 'eth_getTransactionCount', [this.addresses[w], 'pending']));
    } catch {
      // asked again after its next refusal
    } finally {
      this.resyncing.delete(w);
    }
  }

  refused(kind, err, w, url) {
    const c = this.counts;
    c.failed_total++;
    c.failed[kind]++;
    c.last_error = err.message;
    if (c.failed_total === 1 || c.failed_total % 100 === 0)
      this.log(`a transaction was refused (${c.failed_total} so far): ${err.message}`);
    return this.resync(w, url);
  }

  async sendOne(w) {
    const kind = this.nextKind();
    const url = this.urls[w % this.urls.length]; // a sender keeps to one node: its nonces arrive there in order
    const nonce = this.nonces[w]++;
    let tx = null;
    try {
      tx = signTx(this.keys[w], txFields(kind, { ...this.ctx, n: this.n++ }), { nonce, ...this.fee });
      this.pending.set(tx.hash, { kind, at_ms: this.now(), predicted: this.model.predicted(kind) });
      await this.rpc(url, 'eth_sendRawTransaction', [tx.raw], { timeoutMs: SEND_TIMEOUT_MS });
    } catch (err) {
      if (!tx || !alreadyKnown(err)) {
        if (tx) this.pending.delete(tx.hash);
        return this.refused(kind, err, w, url);
      }
    }
    this.counts.sent_total++;
    this.counts.sent[kind]++;
  }

  /** The next sender not waiting for its nonce, or -1. */
  freeSender() {
    for (let k = 0; k < this.keys.length; k++) {
      const w = this.turn++ % this.keys.length;
      if (!this.resyncing.has(w)) return w;
    }
    return -1;
  }

  /** Starts the sends that are due now. */
  tick() {
    // paused (a quiet chain for an idle baseline): nothing falls due meanwhile, so nothing is owed at the resume
    this.counts.rate = this.paused ? 0 : txRate(this.profile.target_gas_per_s, this.model.perTx());
    const room = this.resyncing.size >= this.keys.length ? 0 : this.cap - this.inFlight.size;
    for (let k = this.pace.take(this.now(), this.counts.rate, room); k > 0; k--) {
      const w = this.freeSender();
      if (w < 0) break;
      const p = this.sendOne(w).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
    }
    this.counts.in_flight = this.inFlight.size;
  }

  /** sent and failed (total, by kind), the last refusal, in flight, the rate aimed at; due and behind. */
  stats() {
    const c = this.counts;
    const { due, behind } = this.pace.counts();
    return { ...c, sent: { ...c.sent }, failed: { ...c.failed }, due, sends_behind: behind };
  }

  /** The latest block's base fee: the fees of the sends from now on. */
  setBaseFee(baseFee) {
    this.fee = fees(baseFee);
  }

  start() {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.tick();
    return this;
  }

  async stop() {
    clearInterval(this.timer);
    await Promise.all([...this.inFlight]);
  }
}

/** Starts sending (Sender's arguments); returns the Sender. */
const startSending = (o) => new Sender(o).start();

module.exports = { startSending, Sender, TICK_MS, MAX_IN_FLIGHT };
