'use strict';
// Retries of the calls before the window: what is transient, the backoff
// within its budget, the tally for run.json.

const assert = require('node:assert/strict');
const { retrying, transientReason, newRetryTally } = require('../../src/util/retry');
const { RpcError } = require('../../src/util/rpc');

describe('retries before the window', () => {
  it("HTTP 429 and 5xx, resets, refusals and time-outs are transient; a node's JSON-RPC error and HTTP 4xx are answers", () => {
    assert.equal(transientReason({ status: 503, message: 'x: HTTP 503' }), 'HTTP 503');
    assert.equal(transientReason({ status: 429 }), 'HTTP 429');
    assert.equal(transientReason({ status: 404 }), null);
    assert.equal(
      transientReason(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } })),
      'ECONNRESET',
    );
    assert.equal(
      transientReason(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })),
      'ECONNREFUSED',
    );
    assert.equal(
      transientReason(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' })),
      'time-out',
    );
    assert.equal(transientReason(new RpcError('eth_call', { code: -32000, message: 'execution reverted' })), null);
  });

  it('retries a transient failure until it passes, counting the call once by reason and step', async () => {
    let n = 0;
    const flaky = async () => {
      n++;
      if (n < 3) throw Object.assign(new Error('eth_blockNumber: HTTP 503'), { status: 503 });
      return '0x10';
    };
    const tally = newRetryTally();
    const lines = [];
    const rpc = retrying(flaky, { budgetS: 10, log: (l) => lines.push(l), tally, phase: () => 'sync' });
    assert.equal(await rpc('http://x', 'eth_blockNumber'), '0x10');
    assert.equal(n, 3);
    assert.deepEqual(tally, { calls: 1, by_reason: { 'HTTP 503': 1 }, by_phase: { sync: 1 } });
    assert.match(lines[0], /eth_blockNumber failed \(HTTP 503\) during sync: retrying/);
  });

  it('never retries an answer, and gives up once the budget is spent, saying so', async () => {
    const tally = newRetryTally();
    const answer = retrying(async () => Promise.reject(new RpcError('eth_call', { code: 3, message: 'reverted' })), {
      budgetS: 10,
      log: () => {},
      tally,
      phase: () => 'harvest',
    });
    await assert.rejects(answer('http://x', 'eth_call'), /reverted/);
    assert.equal(tally.calls, 0);
    let tries = 0;
    const down = retrying(
      async () => {
        tries++;
        throw Object.assign(new Error('HTTP 502'), { status: 502 });
      },
      { budgetS: 1, log: () => {}, tally, phase: () => 'history' },
    );
    const t0 = Date.now();
    await assert.rejects(down('http://x', 'eth_chainId'), /retried for \d+ s of RETRY_S=1: the node keeps failing/);
    assert.ok(Date.now() - t0 < 2500, 'within the budget');
    assert.ok(tries >= 3, `${tries} tries`);
  });
});
