'use strict';
// The toolkit's own JSON-RPC calls over WebSocket (attach with a ws:// RPC_URL) and HTTP.

const assert = require('node:assert/strict');
const http = require('node:http');
const { startFakeWsNode } = require('../helpers');
const { rpcCall, RpcError } = require('../../src/util/rpc');

describe('rpcCall over WebSocket', function () {
  this.timeout(10000);
  let node;
  beforeEach(async () => {
    node = await startFakeWsNode();
  });
  afterEach(() => node.close());

  it('answers results and JSON-RPC errors over one connection, closed again when idle', async () => {
    node.answer = (b) =>
      b.method === 'eth_blockNumber'
        ? { jsonrpc: '2.0', id: b.id, result: '0x10' }
        : {
            jsonrpc: '2.0',
            id: b.id,
            error: { code: -32601, message: `the method ${b.method} does not exist/is not available` },
          };
    const [a, b] = await Promise.all([rpcCall(node.url, 'eth_blockNumber'), rpcCall(node.url, 'eth_blockNumber')]);
    assert.equal(a, '0x10');
    assert.equal(b, '0x10');
    await assert.rejects(
      rpcCall(node.url, 'eth_nope'),
      (err) =>
        err instanceof RpcError &&
        err.code === -32601 &&
        /eth_nope: the method eth_nope does not exist/.test(err.message),
    );
    assert.equal(node.sockets.length, 1, 'one connection for all three calls');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(node.sockets[0].readyState, 3, 'closed after a second without calls');
  });

  it('times out, and fails clearly when nothing listens', async () => {
    node.answer = () => null;
    await assert.rejects(
      rpcCall(node.url, 'eth_syncing', [], { timeoutMs: 200 }),
      /eth_syncing: no answer after 200 ms/,
    );
    const url = node.url;
    await node.close();
    await new Promise((r) => setTimeout(r, 100)); // the old connection sees its close
    await assert.rejects(
      rpcCall(url, 'eth_syncing', [], { timeoutMs: 2000 }),
      /eth_syncing: WebSocket closed.*ECONNREFUSED/,
    );
  });
});

describe('rpcCall over HTTP', () => {
  it('names the call and the wait when the node does not answer in time (a transient failure)', async () => {
    const { transientReason } = require('../../src/util/retry');
    const server = http.createServer(() => {}); // takes the request, never answers
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      const err = await rpcCall(`http://127.0.0.1:${server.address().port}`, 'eth_blockNumber', [], {
        timeoutMs: 200,
      }).catch((e) => e);
      assert.match(err.message, /^eth_blockNumber: no answer after 200 ms$/);
      assert.equal(transientReason(err), 'time-out');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("a caller's own abort stays the caller's", async () => {
    const server = http.createServer(() => {});
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 50);
      const err = await rpcCall(`http://127.0.0.1:${server.address().port}`, 'eth_blockNumber', [], {
        timeoutMs: 5000,
        signal: stop.signal,
      }).catch((e) => e);
      assert.equal(err.name, 'AbortError');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
