'use strict';
// ethers over chainperf's keep-alive sockets (src/workload/ethers-http.js):
// the request ethers prepared reaches the server as ethers would send it
// (gzip asked for), the answer comes back to ethers gunzipped, and failures
// are the errors the generator classifies.

const assert = require('node:assert/strict');
const http = require('node:http');
const zlib = require('node:zlib');
const { ethers } = require('ethers');
const { ethersGetUrl } = require('../../src/workload/ethers-http');
const { classifyError } = require('../../src/workload/samples');

/** A JSON-RPC server whose answers depend on the method; it records what each request carried. */
async function server() {
  const seen = [];
  const sockets = new Set();
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const call = JSON.parse(body);
      seen.push({ headers: req.headers, call, socket: req.socket.remotePort });
      if (call.method === 'slow') return; // never answered
      if (call.method === 'busy') {
        res.writeHead(503);
        return res.end('busy');
      }
      const out = JSON.stringify({
        jsonrpc: '2.0',
        id: call.id,
        result: call.method === 'big' ? 'x'.repeat(5000) : '0x2a',
      });
      if (/gzip/.test(req.headers['accept-encoding'] || '')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return res.end(zlib.gzipSync(out));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(out);
    });
  });
  srv.on('connection', (s) => sockets.add(s));
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${srv.address().port}/rpc?x=1`,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      srv.close();
    },
  };
}

function provider(url, timeoutMs = 2000) {
  const req = new ethers.FetchRequest(url);
  req.timeout = timeoutMs;
  req.getUrlFunc = ethersGetUrl(url, { timeoutMs });
  const network = ethers.Network.from(1337);
  return new ethers.JsonRpcProvider(req, network, { staticNetwork: network, batchMaxCount: 1, cacheTimeout: -1 });
}

describe("ethers over chainperf's keep-alive sockets", function () {
  this.timeout(10000);
  let s;
  beforeEach(async () => {
    s = await server();
  });
  afterEach(() => s.close());

  it('sends what ethers prepared (gzip asked for) and hands ethers the answer gunzipped, on kept-alive sockets', async () => {
    const p = provider(s.url);
    assert.equal(await p.send('eth_blockNumber', []), '0x2a');
    assert.equal((await p.send('big', [])).length, 5000);
    assert.equal(await p.send('eth_chainId', []), '0x2a');
    assert.equal(s.seen.length, 3);
    const h = s.seen[0].headers;
    assert.equal(h['accept-encoding'], 'gzip');
    assert.equal(h['content-type'], 'application/json');
    assert.match(h.host, /^127\.0\.0\.1:\d+$/);
    assert.deepEqual(s.seen[0].call.method, 'eth_blockNumber');
    assert.equal(new Set(s.seen.map((x) => x.socket)).size, 1, 'one connection for calls one after the other');
    p.destroy();
  });

  it('a call unanswered within the timeout fails as a timeout; an HTTP 503 as HTTP 503', async () => {
    const p = provider(s.url, 300);
    const timedOut = await p.send('slow', []).catch((e) => e);
    assert.equal(classifyError(timedOut).kind, 'timeout', String(timedOut));
    const busy = await p.send('busy', []).catch((e) => e);
    assert.deepEqual(classifyError(busy), { kind: 'http', message: 'HTTP 503' });
    assert.equal(await p.send('eth_blockNumber', []), '0x2a', 'and the next call goes on another connection');
    p.destroy();
  });

  it('a server that closes the connection fails the call in flight, with the reason', async () => {
    const p = provider(s.url);
    assert.equal(await p.send('eth_blockNumber', []), '0x2a');
    const pending = p.send('slow', []).catch((e) => e);
    await new Promise((r) => setTimeout(r, 100));
    s.close();
    const err = await pending;
    assert.equal(classifyError(err).kind, 'other');
    assert.match(classifyError(err).message, /closed|ECONNRESET/);
    p.destroy();
  });
});
