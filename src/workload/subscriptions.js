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

/**
 * @param {object} o
 * @param {object} o.spec generator spec (rpc_url: ws(s)://, start_at, end_at, timeout_ms)
 * @param {object} o.pool harvested pool (contract)
 * @param {object} o.recorder the worker's recorder
 * @param {object} o.extras extras.subscriptions is filled here
 */
function newSubscriber({ spec, pool, recorder, extras }) {
  const tally = {
    subscriptions: { 'sub.newHeads': 0, 'sub.logs': 0 },
    notifications: { 'sub.newHeads': 0, 'sub.logs': 0 },
    heads_by_block: {},
    delay_ms: [],
    spread_ms: [],
    errors: {},
  };
  extras.subscriptions = tally;
  const inWindow = (t) => t >= spec.start_at && t < spec.end_at;
  const firstSeen = new Map(); // block number -> performance.now() of the worker's first header for it

  function note(msg) {
    const m = String(msg).slice(0, 200);
    if (tally.errors[m] !== undefined || Object.keys(tally.errors).length < 20)
      tally.errors[m] = (tally.errors[m] || 0) + 1;
  }

  function notified(kind, result) {
    const now = Date.now();
    const n = kind === 'sub.newHeads' ? Number(result.number) : Number(result.blockNumber);
    const t = performance.now();
    if (kind === 'sub.newHeads' && !firstSeen.has(n)) firstSeen.set(n, t);
    if (!inWindow(now)) return;
    tally.notifications[kind]++;
    if (kind !== 'sub.newHeads') return;
    tally.heads_by_block[n] = (tally.heads_by_block[n] || 0) + 1;
    tally.delay_ms.push(now - Number(result.timestamp) * 1000);
    tally.spread_ms.push(Math.round((t - firstSeen.get(n)) * 1000) / 1000);
  }

  /** Subscribes this user to `kind` and holds it until the window closes. */
  function hold(kind) {
    return new Promise((resolve) => {
      const ws = new WebSocket(spec.rpc_url, { perMessageDeflate: false, handshakeTimeout: spec.timeout_ms });
      let subId = null;
      let t0 = null;
      const end = setTimeout(() => ws.close(), Math.max(0, spec.end_at - Date.now()));
      ws.on('open', () => {
        const params = kind === 'sub.newHeads' ? ['newHeads'] : ['logs', { address: pool.contract }];
        recorder.started();
        t0 = performance.now();
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params }));
      });
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString());
        if (msg.id === 1) {
          const failure = msg.error
            ? { kind: 'rpc', message: `JSON-RPC ${msg.error.code}: ${msg.error.message}` }
            : null;
          recorder.completed('eth_subscribe', performance.now() - t0, failure, Date.now());
          t0 = null;
          if (failure) {
            note(failure.message);
            ws.close();
          } else {
            subId = msg.result;
            if (inWindow(Date.now()) || Date.now() < spec.start_at) tally.subscriptions[kind]++;
          }
        } else if (msg.method === 'eth_subscription' && msg.params && msg.params.subscription === subId) {
          notified(kind, msg.params.result);
        }
      });
      ws.on('error', (err) => note(`WebSocket: ${err.code || err.message}`));
      ws.on('close', () => {
        clearTimeout(end);
        if (t0 !== null)
          recorder.completed(
            'eth_subscribe',
            performance.now() - t0,
            { kind: 'other', message: 'WebSocket closed before eth_subscribe was answered' },
            Date.now(),
          );
        resolve();
      });
    });
  }

  return { hold };
}

module.exports = { newSubscriber, isSubscription, SUB_KINDS };
