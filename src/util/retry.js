// @ts-check
'use strict';
// Retries for the toolkit's own calls before the measured window (the sync
// wait, history, the harvest): a provider's balancer that answers 503 now and
// then, a connection reset, a call that timed out, must not cost the operator
// a run. A call that failed for such a reason is tried again with backoff for
// at most RETRY_S seconds in all, said in the log and counted for run.json.
// The node's own answers (a JSON-RPC error) are not retried, and nothing in
// the measured window ever is: there, errors are the figure.

const { sleep } = require('./time');

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 4000;
const NETWORK_CODES = /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT/;

/**
 * Why an error is transient (worth another try), or null when it is an answer.
 * @param {any} err
 * @returns {string|null}
 */
function transientReason(err) {
  if (!err) return null;
  if (typeof err.status === 'number') return err.status === 429 || err.status >= 500 ? `HTTP ${err.status}` : null;
  if (typeof err.code === 'number') return null; // a JSON-RPC error: the node answered
  const cause = err.cause || {};
  const code = String(cause.code || err.code || '');
  if (NETWORK_CODES.test(code)) return code;
  if (err.name === 'TimeoutError' || /no answer after \d+ ms/.test(err.message || '')) return 'time-out';
  if (/fetch failed|socket hang up|WebSocket closed/.test(err.message || '')) return 'connection lost';
  return null;
}

/** A tally of retried calls: how many, why, and in which step. */
function newRetryTally() {
  return { calls: 0, by_reason: {}, by_phase: {} };
}

/**
 * An rpcCall-shaped function that retries transient failures.
 * @param {(url: string, method: string, params?: any[], o?: object) => Promise<any>} call rpcCall
 * @param {{budgetS: number, log: (line: string) => void, tally: object, phase: () => string}} o
 */
function retrying(call, { budgetS, log, tally, phase }) {
  let spentMs = 0; // time spent waiting between tries, over every call: the budget is for the whole run
  return async (url, method, params = [], opts = {}) => {
    let backoff = FIRST_BACKOFF_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await call(url, method, params, opts);
      } catch (err) {
        const reason = transientReason(err);
        if (!reason || (opts.signal && opts.signal.aborted)) throw err;
        if (spentMs + backoff > budgetS * 1000) {
          err.message += ` (retried for ${Math.round(spentMs / 1000)} s of RETRY_S=${budgetS}: the node keeps failing)`;
          throw err;
        }
        if (attempt === 1) {
          tally.calls++;
          tally.by_reason[reason] = (tally.by_reason[reason] || 0) + 1;
          tally.by_phase[phase()] = (tally.by_phase[phase()] || 0) + 1;
          if (tally.calls <= 5 || tally.calls % 100 === 0)
            log(`${method} failed (${reason}) during ${phase()}: retrying (${tally.calls} calls retried so far)`);
        }
        const wait = Math.round(backoff * (0.5 + Math.random() / 2));
        spentMs += wait;
        await sleep(wait, opts.signal);
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    }
  };
}

module.exports = { retrying, transientReason, newRetryTally };
