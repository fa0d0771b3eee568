'use strict';
// The Ethereum subscription workload (mix entries sub.*, TRANSPORT=ws):
//   sub.newHeads  eth_subscribe("newHeads")
//   sub.logs      eth_subscribe("logs", {address: the harvested contract})
// Each virtual user opens its own WebSocket to the node, as a dapp does,
// subscribes to one kind (drawn from the mix) and holds the subscription until
// the window closes. The eth_subscribe calls are requests of the figures; the
// notifications received inside the window are counted by kind and by block,
// with their delay from the block's timestamp (a header's timestamp has whole
// seconds, so this delay is known to within a second) and their spread: how
// long after the first user of the worker to receive a block each other user
// received it.

const WebSocket = require('ws');
const { performance } = require('node:perf_hooks');

const SUB_KINDS = ['sub.newHeads', 'sub.logs'];
const isSubscription = (method) => method.startsWith('sub.');

/** A subscription workload's tally for a worker (extras.subscriptions), and how it counts. */
class SubscriptionTally {
  constructor(spec) {
    this.spec = spec;
    this.record = {
      subscriptions: { 'sub.newHeads': 0, 'sub.logs': 0 },
      notifications: { 'sub.newHeads': 0, 'sub.logs': 0 },
      heads_by_block: {},
      delay_ms: [],
      spread_ms: [],
      errors: {},
    };
    this.firstSeen = new Map(); // block number -> performance.now() of the worker's first header for it
  }

  inWindow(t) {
    return t >= this.spec.start_at && t < this.spec.end_at;
  }

  note(msg) {
    const m = String(msg).slice(0, 200);
    const errors = this.record.errors;
    if (errors[m] !== undefined || Object.keys(errors).length < 20) errors[m] = (errors[m] || 0) + 1;
  }

  subscribed(kind) {
    if (this.inWindow(Date.now()) || Date.now() < this.spec.start_at) this.record.subscriptions[kind]++;
  }

  notified(kind, result) {
    const now = Date.now();
    const n = kind === 'sub.newHeads' ? Number(result.number) : Number(result.blockNumber);
    const t = performance.now();
    if (kind === 'sub.newHeads' && !this.firstSeen.has(n)) this.firstSeen.set(n, t);
    if (!this.inWindow(now)) return;
    const r = this.record;
    r.notifications[kind]++;
    if (kind !== 'sub.newHeads') return;
    r.heads_by_block[n] = (r.heads_by_block[n] || 0) + 1;
    r.delay_ms.push(now - Number(result.timestamp) * 1000);
    r.spread_ms.push(Math.round((t - this.firstSeen.get(n)) * 1000) / 1000);
  }
}

/** One user's subscription of `kind` on its own WebSocket, held until the window closes. */
function holdSubscription(kind, { spec, pool, recorder, tally }) {
  return new Promise((resolve) => {
    const ws = new WebSocket(spec.rpc_url, { perMessageDeflate: false, handshakeTimeout: spec.timeout_ms });
    let subId = null;
    let t0 = null;
    const end = setTimeout(() => ws.close(), Math.max(0, spec.end_at - Date.now()));
    const answered = (msg) => {
      const failure = msg.error ? { kind: 'rpc', message: `JSON-RPC ${msg.error.code}: ${msg.error.message}` } : null;
      recorder.completed('eth_subscribe', performance.now() - t0, failure, Date.now());
      t0 = null;
      if (!failure) {
        subId = msg.result;
        tally.subscribed(kind);
        return;
      }
      tally.note(failure.message);
      ws.close();
    };
    ws.on('open', () => {
      const params = kind === 'sub.newHeads' ? ['newHeads'] : ['logs', { address: pool.contract }];
      recorder.started();
      t0 = performance.now();
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params }));
    });
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.id === 1) answered(msg);
      else if (msg.method === 'eth_subscription' && msg.params && msg.params.subscription === subId)
        tally.notified(kind, msg.params.result);
    });
    ws.on('error', (err) => tally.note(`WebSocket: ${err.code || err.message}`));
    ws.on('close', () => {
      clearTimeout(end);
      if (t0 !== null) {
        const failure = { kind: 'other', message: 'WebSocket closed before eth_subscribe was answered' };
        recorder.completed('eth_subscribe', performance.now() - t0, failure, Date.now());
      }
      resolve();
    });
  });
}

/**
 * @param {object} o
 * @param {object} o.spec generator spec (rpc_url: ws(s)://, start_at, end_at, timeout_ms)
 * @param {object} o.pool harvested pool (contract)
 * @param {object} o.recorder the worker's recorder
 * @param {object} o.extras extras.subscriptions is filled here
 */
function newSubscriber({ spec, pool, recorder, extras }) {
  const tally = new SubscriptionTally(spec);
  extras.subscriptions = tally.record;
  /** Subscribes this user to `kind` and holds it until the window closes. */
  return { hold: (kind) => holdSubscription(kind, { spec, pool, recorder, tally }) };
}

module.exports = { newSubscriber, isSubscription, SUB_KINDS };
