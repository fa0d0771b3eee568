// @ts-check
'use strict';
// The answers that name the chain's head: eth_blockNumber, and
// eth_getBlockByNumber('latest'). On a network that moves (NETWORK_NODES),
// each one's block and arrival are kept, so the toolkit can count the stale
// ones against the network's head when they arrived (measure/keep-up.js); and
// each client's (a virtual user's, or a connection's) highest block so far, so
// an answer naming a lower one is counted as gone backwards, as a client behind
// a balancer sees when its requests land on a replica that lags.

/** Answers kept per worker and window; beyond it they are counted, not kept (`dropped`). */
const MAX_KEPT = 200000;

/** The block an answer names, or null: eth_blockNumber's result, eth_getBlockByNumber('latest')'s number. */
function namedBlock(method, params, result) {
  if (method === 'eth_blockNumber' && typeof result === 'string') return Number(result);
  if (method === 'eth_getBlockByNumber' && params && params[0] === 'latest' && result && result.number)
    return Number(result.number);
  return null;
}

/** eth_blockNumber's block from a raw HTTP or WebSocket answer ('..."result":"0x1a2"}'), without decoding it. */
function blockNumberIn(body) {
  const m = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(body.toString('latin1', 0, Math.min(body.length, 200)));
  return m ? Number(m[1]) : null;
}

/** eth_getBlockByNumber('latest')'s block number from a raw answer, without decoding it (its header comes first). */
function latestNumberIn(body) {
  const m = /"number"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(body.toString('latin1', 0, Math.min(body.length, 4096)));
  return m ? Number(m[1]) : null;
}

/** How to read the head from a raw answer to this request (the lean engine's), or null when it names none. */
function headReader(method, params) {
  if (method === 'eth_blockNumber') return blockNumberIn;
  if (method === 'eth_getBlockByNumber' && params && params[0] === 'latest') return latestNumberIn;
  return null;
}

class NamedBlocks {
  /** @param {{start_at: number, end_at: number}} spec the window */
  constructor(spec) {
    this.spec = spec;
    /** @type {[number, number][]} */
    this.answers = [];
    this.dropped = 0;
    this.backwards = 0;
    this.of = 0;
    /** @type {Map<any, number>} each client's highest block so far */
    this.highest = new Map();
  }

  /**
   * An answer naming `block`, arrived at `now`, to `client` (a virtual user, or a connection; null: requests of no
   * client of their own, an open loop's, whose order of arrival says nothing of going backwards).
   */
  record(now, block, client) {
    const high = client === null ? undefined : this.highest.get(client);
    const back = high !== undefined && block < high;
    if (client !== null && (high === undefined || block > high)) this.highest.set(client, block);
    if (now < this.spec.start_at || now >= this.spec.end_at) return;
    this.of++;
    if (back) this.backwards++;
    if (this.answers.length < MAX_KEPT) this.answers.push([now, block]);
    else this.dropped++;
  }

  toJSON() {
    return { answers: this.answers, dropped: this.dropped, backwards: this.backwards, of: this.of };
  }
}

/** Every worker's named answers of a window, merged: null when no worker kept any. */
function mergeNamedBlocks(snapshots) {
  const parts = snapshots.map((x) => x.named_blocks).filter(Boolean);
  if (!parts.length) return null;
  return {
    answers: parts.flatMap((p) => p.answers),
    dropped: parts.reduce((n, p) => n + p.dropped, 0),
    backwards: parts.reduce((n, p) => n + p.backwards, 0),
    of: parts.reduce((n, p) => n + p.of, 0),
  };
}

module.exports = { NamedBlocks, namedBlock, blockNumberIn, latestNumberIn, headReader, mergeNamedBlocks, MAX_KEPT };
