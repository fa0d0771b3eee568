'use strict';
// The recording proxy (./run.sh record) against fake nodes: what it forwards,
// what it answers, the lines it writes, and the secrets it never writes.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const WebSocket = require('ws');
const { startProxy, upstreams } = require('../../src/record/proxy');
const { parseListen } = require('../../src/record/cli');
const { startFakeNode, startFakeWsNode, tmpDir, ROOT } = require('../helpers');

const post = async (url, body) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};
const readLines = (file) =>
  fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

function answerLikeGeth(body) {
  const one = (b) => {
    if (b.method === 'eth_blockNumber') return { jsonrpc: '2.0', id: b.id, result: '0x64' };
    if (b.method === 'eth_getTransactionByHash') return { jsonrpc: '2.0', id: b.id, result: null };
    if (b.method === 'eth_fail')
      return { jsonrpc: '2.0', id: b.id, error: { code: -32601, message: 'the method eth_fail does not exist' } };
    return { jsonrpc: '2.0', id: b.id, result: '0x1' };
  };
  return [200, Array.isArray(body) ? body.map(one).reverse() : one(body)]; // a batch answered out of order
}

describe('record: the JSON-RPC proxy', function () {
  this.timeout(20000);
  let node;
  let wsNode;
  before(async () => {
    node = await startFakeNode();
    node.answer = answerLikeGeth;
    wsNode = await startFakeWsNode();
    wsNode.answer = (b) => answerLikeGeth(b)[1];
  });
  after(async () => {
    node.close();
    await wsNode.close();
  });

  it("HTTP: forwards, answers with the node's answer, writes one line per call (batches matched by id)", async () => {
    const out = path.join(tmpDir(), 'cap.jsonl');
    const proxy = await startProxy({ listen: { host: '127.0.0.1', port: 0 }, to: node.url, out });
    const url = `http://127.0.0.1:${proxy.address.port}/`;
    const a = await post(url, { jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] });
    assert.deepEqual(a.body, { jsonrpc: '2.0', id: 7, result: '0x64' });
    const b = await post(url, [
      { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x11', '0x60'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_fail', params: [] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getTransactionByHash', params: ['0xab'] },
    ]);
    assert.equal(b.body.length, 3);
    const summary = await proxy.close();
    const lines = readLines(out);
    assert.deepEqual(
      lines.map((l) => l.method),
      ['eth_blockNumber', 'eth_getBalance', 'eth_fail', 'eth_getTransactionByHash'],
    );
    assert.equal(lines[0].batch, null);
    assert.equal(lines[0].bytes, Buffer.byteLength(JSON.stringify(a.body)));
    assert.deepEqual(
      lines.slice(1).map((l) => [l.batch.size, l.batch.index]),
      [
        [3, 0],
        [3, 1],
        [3, 2],
      ],
    );
    assert.equal(new Set(lines.slice(1).map((l) => l.batch.seq)).size, 1);
    assert.deepEqual(
      lines.map((l) => (l.error ? l.error.code : null)),
      [null, null, -32601, null],
    );
    assert.deepEqual(lines[1].params, ['0x11', '0x60']);
    assert.equal(lines[1].head, 100, 'the head learnt from eth_blockNumber');
    assert.ok(lines.every((l) => l.latency_ms >= 0 && l.t > 1.7e12 && l.transport === 'http'));
    assert.deepEqual(summary.methods.eth_fail, { requests: 1, errors: 1 });
    assert.equal(summary.batches, 1);
  });

  it('WebSocket: each client its own connection to the node; answers matched by id; notifications passed on and counted', async () => {
    const out = path.join(tmpDir(), 'cap.jsonl');
    const proxy = await startProxy({
      listen: { host: '127.0.0.1', port: 0 },
      to: 'http://127.0.0.1:9/',
      toWs: wsNode.url,
      out,
    });
    const ws = new WebSocket(`ws://127.0.0.1:${proxy.address.port}`);
    const got = [];
    ws.on('message', (d) => got.push(JSON.parse(d)));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'eth_blockNumber', params: [] }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'b', method: 'eth_getTransactionByHash', params: ['0x01'] }));
    while (got.length < 2) await new Promise((r) => setTimeout(r, 20));
    wsNode.sockets[wsNode.sockets.length - 1].send(
      JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: '0x9', result: {} } }),
    );
    while (got.length < 3) await new Promise((r) => setTimeout(r, 20));
    ws.close();
    const summary = await proxy.close();
    const lines = readLines(out);
    assert.deepEqual(
      lines.map((l) => [l.method, l.transport, l.conn]),
      [
        ['eth_blockNumber', 'ws', 1],
        ['eth_getTransactionByHash', 'ws', 1],
      ],
    );
    assert.equal(summary.notifications, 1);
    assert.equal(got[2].method, 'eth_subscription');
  });

  it('a node that does not answer: the client gets a JSON-RPC error, the line an upstream error', async () => {
    const out = path.join(tmpDir(), 'cap.jsonl');
    const proxy = await startProxy({ listen: { host: '127.0.0.1', port: 0 }, to: 'http://127.0.0.1:9/', out });
    const r = await post(`http://127.0.0.1:${proxy.address.port}/`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_chainId',
      params: [],
    });
    await proxy.close();
    assert.equal(r.status, 502);
    assert.equal(readLines(out)[0].error.kind, 'upstream');
  });

  it('upstreams: one URL gives both endpoints; --listen defaults to 127.0.0.1', () => {
    assert.deepEqual(upstreams('http://h:8545/x'), { http: 'http://h:8545/x', ws: 'ws://h:8545/x' });
    assert.deepEqual(upstreams('wss://h/x?k=1'), { http: 'https://h/x?k=1', ws: 'wss://h/x?k=1' });
    assert.deepEqual(parseListen('8645'), { host: '127.0.0.1', port: 8645 });
    assert.deepEqual(parseListen('0.0.0.0:1'), { host: '0.0.0.0', port: 1 });
    assert.equal(parseListen('x:99999'), null);
  });

  it('./run.sh record: secrets in --to reach neither the capture nor the output; SIGINT prints counts per method', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'cap.jsonl');
    const secretUrl =
      node.url.replace('http://', 'http://alice:Pa55wordXYZ@') + 'v3/PathToken0123456789?apikey=QueryKey98765';
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'src', 'cli.js'), 'record', '--listen', '127.0.0.1:0', '--to', secretUrl, '--out', out],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    while (!/http:\/\/127\.0\.0\.1:(\d+)/.test(stderr)) await new Promise((r) => setTimeout(r, 50));
    const port = /http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)[1];
    node.answer = (b) => [
      200,
      { jsonrpc: '2.0', id: b.id, error: { code: -1, message: 'bad key QueryKey98765 for alice' } },
    ];
    await post(`http://127.0.0.1:${port}/`, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: ['Pa55wordXYZ'] });
    node.answer = answerLikeGeth;
    await post(`http://127.0.0.1:${port}/`, { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] });
    child.kill('SIGINT');
    const code = await new Promise((r) => child.on('exit', r));
    assert.equal(code, 0, stderr);
    const all = `${stdout}${stderr}${fs.readFileSync(out, 'utf8')}`;
    for (const secret of ['alice', 'Pa55wordXYZ', 'PathToken0123456789', 'QueryKey98765', 'apikey'])
      assert.ok(!all.includes(secret), `${secret} leaked`);
    assert.match(stderr, /captured 2 requests \(1 errors/);
    assert.match(stderr, /eth_chainId: 2 \(1 errors\)/);
    assert.equal(stdout.trim().split('\n').pop(), out);
  });

  it('bad arguments: exit status 2 and nothing started', async () => {
    const run = (args) =>
      new Promise((resolve) => {
        const c = spawn(process.execPath, [path.join(ROOT, 'src', 'cli.js'), ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let err = '';
        c.stderr.on('data', (d) => {
          err += d;
        });
        c.on('exit', (code) => resolve({ code, err }));
      });
    const noTo = await run(['record', '--out', '/tmp/x.jsonl']);
    assert.equal(noTo.code, 2);
    assert.match(noTo.err, /--to URL/);
    const badUrl = await run(['record', '--to', 'ftp://secret@x', '--out', '/tmp/x.jsonl']);
    assert.equal(badUrl.code, 2);
    assert.ok(!badUrl.err.includes('secret'));
    assert.equal((await run(['record', '--to', 'http://x', '--out', '/tmp/x.jsonl', '--listen', 'nope'])).code, 2);
    assert.equal((await run(['mix', '/no/such/file'])).code, 2);
  });
});
