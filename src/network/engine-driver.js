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

const crypto = require('node:crypto');
const fs = require('node:fs');
const { sleep } = require('../util/time');

/** A new 32-byte JWT secret, as geth reads it from --authrpc.jwtsecret (hex). */
function writeJwtSecret(file) {
  fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
  return file;
}

const b64url = (buf) => Buffer.from(buf).toString('base64url');

/** The engine API's bearer token: HS256 over {iat}, valid for a minute either side of now. */
function jwtToken(secretHex, nowS = Math.floor(Date.now() / 1000)) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify({ iat: nowS }));
  const sig = crypto.createHmac('sha256', Buffer.from(secretHex.replace(/^0x/, ''), 'hex')).update(`${head}.${body}`);
  return `${head}.${body}.${b64url(sig.digest())}`;
}

/** One authenticated engine API call. */
async function engineCall(url, secretHex, method, params, timeoutMs = 10000) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwtToken(secretHex)}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${method} at ${url}: HTTP ${res.status}`);
  const body = await res.json();
  if (body.error) throw new Error(`${method} at ${url}: ${body.error.message}`);
  return body.result;
}

const ZERO32 = `0x${'00'.repeat(32)}`;

/** Payload attributes (V3) for a block at `timestamp`: a random prevRandao, no withdrawals, a zero beacon root. */
function payloadAttributes(timestamp, feeRecipient) {
  return {
    timestamp: `0x${timestamp.toString(16)}`,
    prevRandao: `0x${crypto.randomBytes(32).toString('hex')}`,
    suggestedFeeRecipient: feeRecipient,
    withdrawals: [],
    parentBeaconBlockRoot: ZERO32,
  };
}

/**
 * geth's answer to a head it is told while its beacon syncer is restarting a sync cycle, for a head told a moment
 * before (eth/downloader/skeleton.go): transient, the same call a moment later is taken.
 */
const syncerBusy = (err) => /beacon syncer reorging/.test(String(err && err.message));
const SYNCER_BUSY_TRIES = 10;
const SYNCER_BUSY_WAIT_MS = 500;

/**
 * tell() (a forkchoice update), again while geth answers that its syncer is busy; any other error at once. An abort
 * of signal (Ctrl-C) ends the waits between tries.
 */
async function tellHead(tell, signal) {
  for (let k = 1; ; k++) {
    try {
      return await tell();
    } catch (err) {
      if (k >= SYNCER_BUSY_TRIES || !syncerBusy(err)) throw err;
      await sleep(SYNCER_BUSY_WAIT_MS, signal);
    }
  }
}

/**
 * Hands a built payload to every node: engine_newPayloadV4, then engine_forkchoiceUpdatedV3 making it the head. A
 * node that fails is counted in stats and gets the next block as usual; the producer failing fails the block.
 */
async function handOver(nodes, call, envelope, stats) {
  const payload = envelope.executionPayload;
  const hash = payload.blockHash;
  const head = { headBlockHash: hash, safeBlockHash: hash, finalizedBlockHash: hash };
  const requests = envelope.executionRequests || [];
  await Promise.all(
    nodes.map(async (node, i) => {
      try {
        // A node joining by sync (headOnly) is told the head alone: it fetches what it lacks from its peers.
        if (!node.headOnly) {
          const status = await call(node, 'engine_newPayloadV4', [payload, [], ZERO32, requests]);
          if (status.status === 'INVALID')
            throw new Error(`block ${Number(payload.blockNumber)} invalid: ${status.validationError}`);
        }
        await call(node, 'engine_forkchoiceUpdatedV3', [head, null]);
      } catch (err) {
        stats.failures[node.name] = (stats.failures[node.name] || 0) + 1;
        stats.last_error = `${node.name}: ${err.message}`;
        if (i === 0) throw err;
      }
    }),
  );
  return head;
}

/**
 * Drives the network's blocks. nodes: [{name, authUrl, headOnly?}], the first one produces; head: the hash of the
 * chain's current head (the same on every node at start). Each tick takes the payload the producer built since the
 * last one, hands it to every node, and starts the next. Returns {stop, join, stats, head}: join(node) adds a node
 * (headOnly: told the head, and it syncs from its peers; later set headOnly false to hand it payloads); stats:
 * blocks, transactions in them, failures per node and the last error, which the run reports. headsOnly: every node
 * but the producer is told the head alone, always (BLOCK_DELIVERY=head): it fetches each block from its peers.
 * @param {{nodes: {name: string, authUrl: string, headOnly?: boolean}[], secretHex: string, head: string,
 *   headTimeS: number, headsOnly?: boolean,
 *   periodS: number, feeRecipient: string, log: (m: string) => void}} o
 */
function startEngineDriver({ nodes, secretHex, head, headTimeS, headsOnly = false, periodS, feeRecipient, log }) {
  if (headsOnly) for (const n of nodes.slice(1)) n.headOnly = true;
  const call = (node, method, params) => engineCall(node.authUrl, secretHex, method, params);
  const stats = { blocks: 0, transactions: 0, failures: /** @type {Record<string, number>} */ ({}), last_error: null };
  let state = { headBlockHash: head, safeBlockHash: head, finalizedBlockHash: head };
  let lastTime = headTimeS;
  let stopped = false;
  let busy = null;
  /** @type {string | null} the payload being built */
  let pending = null;

  /** The producer starts building on the current head; the payload collects transactions until the next tick. */
  async function startPayload() {
    const timestamp = Math.max(lastTime + 1, Math.ceil(Date.now() / 1000 + periodS));
    const fcu = await call(nodes[0], 'engine_forkchoiceUpdatedV3', [state, payloadAttributes(timestamp, feeRecipient)]);
    if (!fcu.payloadId) throw new Error(`${nodes[0].name} started no payload (${fcu.payloadStatus.status})`);
    return fcu.payloadId;
  }

  async function tick() {
    if (pending) {
      const envelope = await call(nodes[0], 'engine_getPayloadV5', [pending]);
      pending = null;
      state = await handOver(nodes, call, envelope, stats);
      lastTime = Number(envelope.executionPayload.timestamp);
      stats.blocks++;
      stats.transactions += envelope.executionPayload.transactions.length;
    }
    pending = await startPayload();
  }

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
  return {
    stats,
    head: () => state.headBlockHash,
    /**
     * Adds a node; one that joins by sync is told the current head at once, again while geth answers that its syncer
     * is busy (a block's head handed to it at the same time had started a sync cycle).
     */
    async join(node, signal) {
      nodes.push(headsOnly ? { ...node, headOnly: true } : node);
      if (node.headOnly) await tellHead(() => call(node, 'engine_forkchoiceUpdatedV3', [state, null]), signal);
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
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (busy) await busy;
    },
  };
}

module.exports = { writeJwtSecret, jwtToken, engineCall, startEngineDriver, handOver };
