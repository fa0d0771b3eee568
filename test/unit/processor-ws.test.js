'use strict';
// The ethers processor with TRANSPORT=ws (a ws:// URL): one WebSocketProvider
// per worker, against a local WebSocket server that plays a node.

const assert = require('node:assert/strict');
const { startFakeWsNode, writeGeneratorSpec } = require('../helpers');

const PROCESSOR = require.resolve('../../src/workload/processors/ethereum');
const POOL = { chain_id: 1337, head: 10, blocks: [1, 2, 3], addresses: [`0x${'11'.repeat(20)}`] };

describe('ethereum processor over WebSocket', function () {
  this.timeout(20000);
  let node;
  let processor;
  const events = {
    emitted: [],
    emit(...a) {
      this.emitted.push(a);
    },
  };
  const kinds = () => events.emitted.filter((e) => e[0] === 'counter').map((e) => e[1]);

  before(async () => {
    node = await startFakeWsNode();
    writeGeneratorSpec(node.url, POOL, { mix: { eth_blockNumber: 1 }, timeout_ms: 300 });
    delete require.cache[PROCESSOR]; // the processor reads its spec when loaded: load it for this one
    processor = require(PROCESSOR);
  });
  after(async () => {
    delete require.cache[PROCESSOR];
    await node.close();
  });
  beforeEach(() => {
    events.emitted = [];
  });

  it('sends every call as its own message over one connection, and counts results', async () => {
    node.answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: '0x10' });
    await Promise.all(Array.from({ length: 20 }, () => processor.sendRequest({}, events)));
    assert.equal(node.received.length, 20);
    assert.ok(node.received.every((r) => r.conn === 0 && r.body.method === 'eth_blockNumber'));
    assert.deepEqual(kinds(), Array(20).fill('chainperf.ok.eth_blockNumber'));
  });

  it('counts a JSON-RPC error and a missing answer (REQUEST_TIMEOUT_MS) as failures', async () => {
    node.answer = (b) => ({ jsonrpc: '2.0', id: b.id, error: { code: -32000, message: 'boom' } });
    await processor.sendRequest({}, events);
    node.answer = () => null;
    const t0 = Date.now();
    await processor.sendRequest({}, events);
    assert.ok(Date.now() - t0 < 2000);
    assert.deepEqual(kinds(), ['chainperf.failed.rpc', 'chainperf.failed.timeout']);
  });

  it('makes its provider again when the socket closes', async () => {
    node.sockets[0].terminate();
    await new Promise((r) => setTimeout(r, 100));
    node.answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: '0x11' });
    await processor.sendRequest({}, events);
    assert.deepEqual(kinds(), ['chainperf.ok.eth_blockNumber']);
    assert.equal(node.sockets.length, 2);
  });
});
