// @ts-check
'use strict';
// The consensus-client stand-in of a local Ethereum network. Since the merge an
// execution client follows the chain only through its authenticated engine
// API; no consensus client installs everywhere chainperf runs, so this module
// does, for a network it started, the part of a consensus client's job that
// the execution clients see: every block time it asks the producing node to
// build a payload (engine_forkchoiceUpdatedV3 with payload attributes, then
// engine_getPayloadV5), and hands the payload to every node
// (engine_newPayloadV4, then engine_forkchoiceUpdatedV3 making it the head),
// or, with BLOCK_DELIVERY=head, only the head to every node but the producer:
// each then fetches the block from its peers over devp2p. Transactions travel
// peer to peer (devp2p) either way: the producer includes what gossip brought
// into its pool. docs/network.md says what this leaves out
// (no attestations, no beacon chain, no finality beyond "head is final").
//
// The network does not wait for its slowest member, as a real one does not:
// once the producer has imported a block, the next slot goes on, and every
// other node gets its blocks in order through a queue of its own. What each
// node took to import each block (the engine calls' latency as the driver sees
// it) and when the network reached each block are kept, for the figures of
// whether the node under test keeps up (head-watch.js).

const { engineCall, payloadAttributes, tellHead, ZERO32 } = require('./engine-api');

/**
 * One node's import of a block, as the driver sees it: engine_newPayloadV4 sent at sent_ms, its answer at payload_ms
 * (null when the node is told the head alone), engine_forkchoiceUpdatedV3's answer (the node's head is then the block)
 * at head_ms; status: the forkchoice's payload status (VALID: imported; SYNCING: the node lacks the block's ancestors
 * and fetches them from its peers).
 * @typedef {{number: number, sent_ms: number, payload_ms: number|null, head_ms: number, status: string}} Import
 */

/**
 * A block of the network's chain: its number, hash, gas used and limit, transactions, when the driver got it from the
 * producer (built_ms) and when the producer's head became it (head_ms: the network reached the block then).
 * @typedef {{number: number, hash: string, gas_used: number, gas_limit: number, txs: number, built_ms: number,
 *   head_ms: number}} Block
 */

/** How many blocks (and imports per node) are kept: a day at 1 s blocks is 86,400; the oldest go first. */
const TIMELINE_MAX = 100000;
const keep = (list, x) => {
  list.push(x);
  if (list.length > TIMELINE_MAX) list.shift();
};

/**
 * Hands one block to one node: engine_newPayloadV4 (unless the node is told heads alone), then
 * engine_forkchoiceUpdatedV3 making it the head.
 * @returns {Promise<Import>}
 */
async function deliver(node, call, envelope) {
  const payload = envelope.executionPayload;
  const hash = payload.blockHash;
  const sent = Date.now();
  let payloadMs = null;
  if (!node.headOnly) {
    const requests = envelope.executionRequests || [];
    const status = await call(node, 'engine_newPayloadV4', [payload, [], ZERO32, requests]);
    if (status.status === 'INVALID')
      throw new Error(`block ${Number(payload.blockNumber)} invalid: ${status.validationError}`);
    payloadMs = Date.now();
  }
  const head = { headBlockHash: hash, safeBlockHash: hash, finalizedBlockHash: hash };
  const fcu = await call(node, 'engine_forkchoiceUpdatedV3', [head, null]);
  const status = (fcu && fcu.payloadStatus && fcu.payloadStatus.status) || 'VALID';
  return { number: Number(payload.blockNumber), sent_ms: sent, payload_ms: payloadMs, head_ms: Date.now(), status };
}

/** The block record of a payload the producer built and imported. */
const blockOf = (envelope, builtMs, imported) => {
  const p = envelope.executionPayload;
  return {
    number: Number(p.blockNumber),
    hash: p.blockHash,
    gas_used: Number(p.gasUsed || 0),
    gas_limit: Number(p.gasLimit || 0),
    txs: p.transactions.length,
    built_ms: builtMs,
    head_ms: imported.head_ms,
  };
};

/**
 * Each follower's deliveries, in order, one at a time, none holding up the network: a node still importing an
 * earlier block gets the next one after it. A node cut from the chain (a fault) is handed nothing meanwhile.
 */
function followerQueues(call, stats) {
  const queues = new Map();
  const fail = (node, err) => {
    stats.failures[node.name] = (stats.failures[node.name] || 0) + 1;
    stats.last_error = `${node.name}: ${err.message}`;
  };
  const missed = (node) => {
    stats.missed[node.name] = (stats.missed[node.name] || 0) + 1;
    return null;
  };
  /** Resolves with the delivery's import record, {status: 'failed: …'} when it failed, null when the node was cut. */
  const enqueue = (node, envelope) => {
    if (node.cut) return Promise.resolve(missed(node));
    const next = (queues.get(node.name) || Promise.resolve()).then(() => {
      if (node.cut) return missed(node); // cut while this block waited behind an earlier one
      return deliver(node, call, envelope).then(
        (imp) => {
          keep((stats.imports[node.name] ||= []), imp);
          return imp;
        },
        (err) => {
          fail(node, err);
          return { number: Number(envelope.executionPayload.blockNumber), status: `failed: ${err.message}` };
        },
      );
    });
    queues.set(node.name, next);
    return next;
  };
  return { enqueue, drain: () => Promise.all([...queues.values()]) };
}

/**
 * The producer's slot loop: every periodS, the payload built since the last tick is imported by the producer (the
 * network reaches it then), recorded, and queued for every other node; then the next payload is started.
 */
function producerLoop(d, { periodS, feeRecipient, log }) {
  const { nodes, call, stats } = d;
  /** @type {string | null} the payload being built */
  let pending = null;
  let busy = null;

  /** The producer starts building on the current head; the payload collects transactions until the next tick. */
  async function startPayload() {
    const timestamp = Math.max(d.lastTime + 1, Math.ceil(Date.now() / 1000 + periodS));
    const fcu = await call(nodes[0], 'engine_forkchoiceUpdatedV3', [
      d.state,
      payloadAttributes(timestamp, feeRecipient),
    ]);
    if (!fcu.payloadId) throw new Error(`${nodes[0].name} started no payload (${fcu.payloadStatus.status})`);
    return fcu.payloadId;
  }

  async function tick() {
    if (pending) {
      const envelope = await call(nodes[0], 'engine_getPayloadV5', [pending]);
      const builtMs = Date.now();
      pending = null;
      const imported = await deliver({ ...nodes[0], headOnly: false }, call, envelope); // the producer failing fails it
      const hash = envelope.executionPayload.blockHash;
      d.state = { headBlockHash: hash, safeBlockHash: hash, finalizedBlockHash: hash };
      keep((stats.imports[nodes[0].name] ||= []), imported);
      keep(stats.timeline, blockOf(envelope, builtMs, imported));
      d.lastTime = Number(envelope.executionPayload.timestamp);
      d.lastEnvelope = envelope;
      stats.blocks++;
      stats.transactions += envelope.executionPayload.transactions.length;
      for (const node of nodes.slice(1)) d.queues.enqueue(node, envelope);
    }
    pending = await startPayload();
  }

  let stopped = false;
  const timer = setInterval(() => {
    if (stopped || busy) return;
    busy = tick()
      .catch((err) => {
        stats.last_error = err.message;
        log(`network: block ${stats.blocks + 1} not built: ${err.message}`);
      })
      .finally(() => {
        busy = null;
      });
  }, periodS * 1000);
  return async () => {
    stopped = true;
    clearInterval(timer);
    if (busy) await busy;
  };
}

/**
 * Drives the network's blocks. nodes: [{name, authUrl, headOnly?}], the first one produces; head: the hash of the
 * chain's current head (the same on every node at start), headNumber its number. Each tick takes the payload the
 * producer built since the last one, has the producer import it, queues it for every other node, and starts the next.
 * Returns {stop, join, cut, restore, stats, head, netHead}: join(node) adds a node (headOnly: told the head, and it
 * syncs from its peers; later set headOnly false to hand it payloads); cut(name) hands a node nothing until
 * restore(name), which hands it the network's head (it fetches what it missed from its peers); stats: blocks,
 * transactions in them, failures per node and the last error, which the run reports, the timeline of blocks and each
 * node's imports. headsOnly: every node but the producer is told the head alone, always (BLOCK_DELIVERY=head): it
 * fetches each block from its peers.
 * @param {{nodes: {name: string, authUrl: string, headOnly?: boolean}[], secretHex: string, head: string,
 *   headNumber?: number, headTimeS: number, headsOnly?: boolean,
 *   periodS: number, feeRecipient: string, log: (m: string) => void}} o
 */
function startEngineDriver(o) {
  const { nodes, secretHex, head, headsOnly = false } = o;
  if (headsOnly) for (const n of nodes.slice(1)) n.headOnly = true;
  const call = (node, method, params) => engineCall(node.authUrl, secretHex, method, params);
  const stats = {
    blocks: 0,
    transactions: 0,
    failures: /** @type {Record<string, number>} */ ({}),
    last_error: /** @type {string|null} */ (null),
    /** @type {Block[]} */ timeline: [],
    /** @type {Record<string, Import[]>} */ imports: {},
    /** @type {Record<string, number>} blocks not handed to a node while it was cut from the chain */ missed: {},
  };
  const d = {
    nodes,
    call,
    stats,
    state: { headBlockHash: head, safeBlockHash: head, finalizedBlockHash: head },
    lastTime: o.headTimeS,
    lastEnvelope: null,
    queues: followerQueues(call, stats),
  };
  const start = { number: o.headNumber ?? null, hash: head, at_ms: Date.now() };
  const stopLoop = producerLoop(d, o);
  return {
    stats,
    head: () => d.state.headBlockHash,
    /** The network's head: the producer's last block (number, hash, when it became the head), or the start's. */
    netHead: () => {
      const b = stats.timeline.at(-1);
      return b ? { number: b.number, hash: b.hash, at_ms: b.head_ms } : start;
    },
    /** The chain as keep-up.js reads it: the blocks and the head the driver started from. */
    chain: () => ({ blocks: stats.timeline, start }),
    ...memberControls(d, headsOnly),
    async stop() {
      await stopLoop();
      await d.queues.drain();
    },
  };
}

/** What the driver does for one node: join, confirm its head, hand it every payload, cut it and restore it. */
function memberControls(d, headsOnly) {
  const { nodes, call } = d;
  const byName = (name) => nodes.find((n) => n.name === name);
  return {
    /**
     * Adds a node; one that joins by sync is told the current head at once, again while geth answers that its syncer
     * is busy (a block's head handed to it at the same time had started a sync cycle).
     */
    async join(node, signal) {
      nodes.push(headsOnly ? { ...node, headOnly: true } : node);
      if (node.headOnly) await tellHead(() => call(node, 'engine_forkchoiceUpdatedV3', [d.state, null]), signal);
    },
    /**
     * Tells a node that the head it has is the chain's head (engine_forkchoiceUpdatedV3 with that head, no
     * attributes), as a consensus client does every slot; returns the payload status. geth leaves snap-sync mode on
     * such a call or when a sync cycle completes; a cycle cut short leaves it in snap mode, where it sets every
     * payload it is handed aside and syncs toward it instead. Told again while geth answers that its syncer is busy.
     */
    async confirmHead(node, hash, signal) {
      const own = { headBlockHash: hash, safeBlockHash: ZERO32, finalizedBlockHash: ZERO32 };
      const fcu = await tellHead(() => call(node, 'engine_forkchoiceUpdatedV3', [own, null]), signal);
      return fcu.payloadStatus.status;
    },
    /** A node that has synced gets every payload from now on (with headsOnly, every head). */
    setFull(name) {
      for (const n of nodes) if (n.name === name) n.headOnly = headsOnly;
    },
    /** A fault: the node is handed no block until restore(name), as when its consensus client is down. */
    cut(name) {
      const node = byName(name);
      if (!node || node === nodes[0]) throw new Error(`cut: ${name} is not a follower of the network`);
      node.cut = true;
    },
    /**
     * The node is handed blocks again, starting with the network's head: it lacks the blocks it missed, answers
     * SYNCING and fetches them from its peers. Resolves with that hand-over's import record ({status: 'failed: …'}
     * when it failed; null before any block).
     */
    async restore(name) {
      const node = byName(name);
      node.cut = false;
      if (!d.lastEnvelope) return null;
      return d.queues.enqueue(node, d.lastEnvelope);
    },
  };
}

module.exports = { startEngineDriver };
