'use strict';
// The parts of "does the node keep up" around the arithmetic: the driver's
// per-follower queues (a slow node does not hold the network up), its cut and
// restore; the answers the generator keeps; FAULT=pause-node's plan against a
// stand-in driver; CHAIN_LOAD and FAULT in a scenario; the summary's lines.

const assert = require('node:assert/strict');
const http = require('node:http');
const { startEngineDriver } = require('../../src/network/engine-driver');
const {
  NamedBlocks,
  namedBlock,
  blockNumberIn,
  headReader,
  mergeNamedBlocks,
} = require('../../src/workload/named-blocks');
const { pauseFault } = require('../../src/network/pause-fault');
const { parseFault } = require('../../src/util/faults');
const { keepUpLines, faultLines } = require('../../src/report/keep-up');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const SECRET = 'aa'.repeat(32);

/** An engine endpoint answering after delayMs(method) ms: VALID payloads, numbered blocks from the producer. */
function engine(name, calls, { delayMs = () => 0 } = {}) {
  let n = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const { method, params } = JSON.parse(body);
      calls.push({ node: name, method, params, at: Date.now() });
      let result = { status: 'VALID', payloadStatus: { status: 'VALID' } };
      if (method === 'engine_forkchoiceUpdatedV3' && params[1])
        result = { payloadStatus: { status: 'VALID' }, payloadId: `0x${(++n).toString(16).padStart(16, '0')}` };
      if (method === 'engine_getPayloadV5')
        result = {
          executionPayload: {
            blockHash: `0x${String(n).padStart(64, '0')}`,
            blockNumber: `0x${n.toString(16)}`,
            timestamp: `0x${(100 + n).toString(16)}`,
            gasUsed: '0x5208',
            gasLimit: '0x1c9c380',
            transactions: ['0xaa'],
          },
        };
      setTimeout(() => res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result })), delayMs(method));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })),
  );
}

const until = async (cond) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
};

/** The driver over a producer and one follower (named name), a block every periodS. */
const driverOver = (producer, follower, name, periodS) =>
  startEngineDriver({
    nodes: [
      { name: 'producer', authUrl: producer.url },
      { name, authUrl: follower.url },
    ],
    secretHex: SECRET,
    head: `0x${'11'.repeat(32)}`,
    headNumber: 0,
    headTimeS: 5,
    periodS,
    feeRecipient: `0x${'00'.repeat(20)}`,
    log: () => {},
  });

describe('the engine-API driver: a network that does not wait for its slowest member', () => {
  it('keeps making blocks while a follower takes 300 ms a block, which gets every block in order, late', async () => {
    const calls = [];
    const producer = await engine('producer', calls);
    const slow = await engine('slow', calls, { delayMs: (m) => (m === 'engine_newPayloadV4' ? 300 : 0) });
    const driver = driverOver(producer, slow, 'slow', 0.05);
    const t0 = Date.now();
    await until(() => driver.stats.blocks >= 6);
    const took = Date.now() - t0;
    await driver.stop();
    for (const x of [producer, slow]) x.server.close();
    assert.ok(took < 6 * 300, `6 blocks in ${took} ms: the producer did not wait for the slow node`);
    const slowBlocks = driver.stats.imports.slow.map((i) => i.number);
    assert.deepEqual(
      slowBlocks,
      slowBlocks.map((_, i) => i + 1),
      'the slow node got every block, in order',
    );
    const chain = driver.chain();
    assert.equal(chain.blocks.length, driver.stats.blocks);
    assert.equal(chain.start.number, 0);
    assert.ok(chain.blocks.every((b, i) => b.number === i + 1 && b.gas_used === 21000 && b.head_ms >= b.built_ms));
    const lag = driver.stats.imports.slow.at(-1);
    assert.ok(lag.head_ms - lag.sent_ms >= 300, 'its import time is its own 300 ms');
    assert.equal(driver.netHead().number, driver.stats.blocks);
  });

  it('hands a cut node nothing, counts what it missed, and hands it the head when restored', async () => {
    const calls = [];
    const producer = await engine('producer', calls);
    const node = await engine('node', calls);
    const driver = driverOver(producer, node, 'node', 0.03);
    await until(() => driver.stats.blocks >= 2);
    assert.throws(() => driver.cut('producer'), /not a follower/);
    driver.cut('node');
    const cutAt = driver.stats.blocks;
    await until(() => driver.stats.blocks >= cutAt + 4);
    const before = calls.filter((c) => c.node === 'node').length;
    const handed = await driver.restore('node');
    await driver.stop();
    for (const x of [producer, node]) x.server.close();
    assert.ok(driver.stats.missed.node >= 3, `missed ${driver.stats.missed.node}`);
    assert.equal(handed.status, 'VALID');
    assert.ok(handed.number >= cutAt + 4, 'the network’s head, not the next block it missed');
    assert.ok(calls.filter((c) => c.node === 'node').length > before);
  });

  it('a block queued for a slow node before its cut is not handed after it; a failed hand-over says so', async () => {
    const calls = [];
    const producer = await engine('producer', calls);
    const node = await engine('node', calls, { delayMs: (m) => (m === 'engine_newPayloadV4' ? 200 : 0) });
    const driver = driverOver(producer, node, 'node', 0.03);
    await until(() => driver.stats.blocks >= 4); // the node, at 200 ms a block, has blocks waiting in its queue
    driver.cut('node');
    const cutAt = Date.now();
    await until(() => driver.stats.blocks >= 10);
    const late = calls.filter((c) => c.node === 'node' && c.method === 'engine_newPayloadV4' && c.at > cutAt + 250);
    assert.deepEqual(late, [], 'at most the block under way when it was cut');
    node.server.close(); // the hand-over cannot reach it
    node.server.closeAllConnections();
    const handed = await driver.restore('node');
    await driver.stop();
    producer.server.close();
    assert.match(handed.status, /^failed: /);
  });
});

describe('the answers that name the head, as the generator keeps them', () => {
  it('reads the block an answer names: eth_blockNumber, and eth_getBlockByNumber of latest only', () => {
    assert.equal(namedBlock('eth_blockNumber', [], '0x1f'), 31);
    assert.equal(namedBlock('eth_getBlockByNumber', ['latest', false], { number: '0x20' }), 32);
    assert.equal(
      namedBlock('eth_getBlockByNumber', ['0x5', false], { number: '0x5' }),
      null,
      'a block asked by number',
    );
    assert.equal(namedBlock('eth_getBalance', ['0xab', 'latest'], '0x1'), null, 'an answer that names no block');
    assert.equal(blockNumberIn(Buffer.from('{"jsonrpc":"2.0","id":7,"result":"0x2a"}')), 42);
    assert.equal(blockNumberIn(Buffer.from('{"jsonrpc":"2.0","id":7,"error":{"code":1}}')), null);
    // the lean engine reads raw answers: eth_blockNumber's, and the header of eth_getBlockByNumber('latest')'s
    const latest = headReader('eth_getBlockByNumber', ['latest', false]);
    const block = `{"jsonrpc":"2.0","id":3,"result":{"baseFeePerGas":"0x7","logsBloom":"0x${'0'.repeat(512)}","number":"0x2b","transactions":[{"blockNumber":"0x2b"}]}}`;
    assert.equal(latest(Buffer.from(block)), 43);
    assert.equal(headReader('eth_blockNumber', [])(Buffer.from('{"jsonrpc":"2.0","id":7,"result":"0x2a"}')), 42);
    assert.equal(headReader('eth_getBlockByNumber', ['0x5', false]), null, 'a block asked by number');
    assert.equal(headReader('eth_getBalance', ['0xab', 'latest']), null);
  });

  it("keeps the window's answers and counts, per client, those lower than its highest so far", () => {
    const k = new NamedBlocks({ start_at: 1000, end_at: 2000 });
    const a = {};
    const b = {};
    k.record(900, 10, a); // before the window: not kept, but a's highest is 10 now
    k.record(1100, 9, a); // backwards for a
    k.record(1200, 9, b); // b's first
    k.record(1300, 11, a);
    k.record(1400, 10, b);
    k.record(1500, 10, a); // backwards for a (it saw 11)
    k.record(2500, 1, a); // after the window
    k.record(1600, 12, null); // an open loop's request: no client, kept, never backwards
    k.record(1700, 3, null);
    const j = k.toJSON();
    assert.equal(j.of, 7);
    assert.equal(j.backwards, 2);
    assert.deepEqual(
      j.answers.map((x) => x[1]),
      [9, 9, 11, 10, 10, 12, 3],
    );
    const merged = mergeNamedBlocks([{ named_blocks: j }, {}, { named_blocks: j }]);
    assert.equal(merged.of, 14);
    assert.equal(merged.answers.length, 14);
    assert.equal(mergeNamedBlocks([{}]), null);
  });
});

describe('FAULT=pause-node', () => {
  it('parses both faults and refuses others, saying which it knows', () => {
    assert.deepEqual(parseFault('pause-node@5s:60s'), { kind: 'pause-node', at_s: 5, for_s: 60 });
    assert.deepEqual(parseFault('kill-replica@3s'), { kind: 'kill-replica', at_s: 3 });
    assert.equal(parseFault(''), null);
    assert.match(parseFault('pause-node@5s').error, /kill-replica@<seconds>s, pause-node@<at>s:<for>s/);
  });

  it('cuts the node at <at>, drops it from every peer, restores it after <for> and records its catch-up', async () => {
    const events = [];
    const driver = {
      cut: (name) => events.push(['cut', name, Date.now()]),
      restore: async (name) => {
        events.push(['restore', name, Date.now()]);
        return { status: 'SYNCING' };
      },
      netHead: () => ({ number: 40 }),
    };
    const rpcCalls = [];
    const peerServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        rpcCalls.push(JSON.parse(body).method);
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: true }));
      });
    });
    await new Promise((r) => peerServer.listen(0, '127.0.0.1', r));
    const peers = [{ name: 'network-1', rpcUrl: `http://127.0.0.1:${peerServer.address().port}` }];
    const heads = { catchUp: () => ({ caught_up: true, gap_blocks: 3, seconds: 0.5, blocks: 3, blocks_per_s: 6 }) };
    const s = { FAULT: 'pause-node@0s:1s', FAULT_LOAD: 'on' };
    const plan = pauseFault(s, { driver, heads, peers, victim: { name: 'node' }, enode: 'enode://x', log: () => {} });
    plan.windowStarted();
    plan.windowStarted(); // a second window: the pause is once a run
    const record = await plan.afterWindows();
    peerServer.close();
    assert.deepEqual(
      events.map((e) => e.slice(0, 2)),
      [
        ['cut', 'node'],
        ['restore', 'node'],
      ],
    );
    assert.ok(events[1][2] - events[0][2] >= 1000, 'restored after its 1 s');
    assert.deepEqual(rpcCalls, ['admin_removePeer', 'admin_addPeer']);
    assert.equal(record.kind, 'pause-node');
    assert.equal(record.peers_dropped, 1);
    assert.equal(record.restore_status, 'SYNCING');
    assert.equal(record.catch_up.blocks_per_s, 6);
    assert.equal(pauseFault({ FAULT: '' }, { driver, heads, peers, victim: {}, enode: '', log: () => {} }), null);
    assert.match(faultLines(record).join('\n'), /cut from the chain .* for 1 s.*\n- Catch-up: 3 blocks behind/);
  });

  it('a pause under way ends with the run (Ctrl-C) or the network: no wait for its end, no restore', async () => {
    const events = [];
    const driver = {
      cut: () => events.push('cut'),
      restore: async () => events.push('restore'),
      netHead: () => ({ number: 1 }),
    };
    const s = { FAULT: 'pause-node@0s:30s', FAULT_LOAD: 'on' };
    const o = { driver, heads: {}, peers: [], victim: { name: 'node' }, enode: '', log: () => {} };
    const plan = pauseFault(s, o);
    plan.windowStarted();
    await until(() => events.length === 1);
    const t0 = Date.now();
    plan.stop();
    await assert.rejects(plan.afterWindows(), /abort/i);
    assert.ok(Date.now() - t0 < 1000, 'not the 30 s of the pause');
    assert.deepEqual(events, ['cut']);
    const run = new AbortController();
    const plan2 = pauseFault(s, { ...o, signal: run.signal });
    plan2.windowStarted();
    await until(() => events.length === 2);
    run.abort(new Error('SIGINT'));
    await assert.rejects(plan2.afterWindows(), /SIGINT/);
  });

  it('a pause whose window was set aside to be measured again says so; one in a kept window does not', async () => {
    const driver = { cut() {}, restore: async () => ({ status: 'SYNCING' }), netHead: () => ({ number: 1 }) };
    const heads = { catchUp: () => ({ caught_up: true, gap_blocks: 1, seconds: 0.1, blocks: 1, blocks_per_s: 10 }) };
    const o = { driver, heads, peers: [], victim: { name: 'node' }, enode: '', log: () => {} };
    const s = { FAULT: 'pause-node@0s:0s', FAULT_LOAD: 'on' };
    const setAside = pauseFault(s, o);
    setAside.windowStarted();
    setAside.windowCancelled(); // the first window, measured again
    setAside.windowStarted();
    const a = await setAside.afterWindows();
    assert.equal(a.in_window_set_aside, true);
    assert.match(faultLines(a).join('\n'), /fell in a window attempt set aside/);
    const kept = pauseFault(s, o);
    kept.windowStarted();
    kept.windowStarted();
    kept.windowCancelled(); // a later window measured again: the pause's was kept
    const b = await kept.afterWindows();
    assert.equal(b.in_window_set_aside, undefined);
    assert.doesNotMatch(faultLines(b).join('\n'), /set aside/);
  });
});

describe('CHAIN_LOAD and FAULT=pause-node in a scenario', () => {
  const resolve = (env) =>
    resolveScenario(writeScenario(tmpDir(), 's.env', 'CHAIN=ethereum\nCLIENT=geth\n'), { env, kernel: {} });

  it("takes a profile's slot as the block time, derives a network, and sends no NETWORK_TPS beside it", () => {
    const r = resolve({ CHAIN_LOAD: 'mainnet', RUNTIME: 'host' });
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.DEV_BLOCK_TIME_S, 12);
    assert.match(r.sources.DEV_BLOCK_TIME_S, /CHAIN_LOAD=mainnet: its slot/);
    assert.equal(r.scenario.NETWORK_NODES, 1);
    assert.equal(r.scenario.NETWORK_TPS, 0);
    assert.equal(
      resolve({ CHAIN_LOAD: 'mainnet', DEV_BLOCK_TIME_S: '2', RUNTIME: 'host' }).scenario.DEV_BLOCK_TIME_S,
      2,
    );
  });

  it('refuses an unknown profile, a network refused, attach, a bound without a network and a pause past the window', () => {
    const errs = (env) => resolve({ RUNTIME: 'host', ...env }).errors.join('\n');
    assert.match(errs({ CHAIN_LOAD: 'mainet' }), /CHAIN_LOAD: unknown profile mainet \(did you mean mainnet\?\)/);
    assert.match(errs({ CHAIN_LOAD: 'mainnet', NETWORK_NODES: '0' }), /CHAIN_LOAD: .*set NETWORK_NODES to 1 or more/);
    assert.match(
      errs({ CHAIN_LOAD: 'mainnet', RUNTIME: 'attach', RPC_URL: 'http://127.0.0.1:1', NODE_PID: '1' }),
      /CHAIN_LOAD: .*RUNTIME=attach starts no network/,
    );
    assert.match(errs({ MAX_HEAD_LAG_S: '2' }), /MAX_HEAD_LAG_S: .*set NETWORK_NODES/);
    assert.match(errs({ FAULT: 'pause-node@25s:10s', DURATION_S: '30' }), /FAULT: .* before the window's end/);
    assert.equal(errs({ FAULT: 'pause-node@25s:10s', DURATION_S: '30', FAULT_LOAD: 'off' }), '');
    assert.match(
      errs({ CHAIN_LOAD: 'mainnet', DEV_BLOCK_TIME_S: '30' }),
      /at a block time of 30 s .* above its gas limit/,
      'mainnet’s 2.5 Mgas/s in 30 s blocks would pass its 60M limit',
    );
  });
});

describe("summary.md's keep-up lines", () => {
  it('gives the lag, the import times, stale and backwards answers, the chain load and the blocks', () => {
    const lines = keepUpLines({
      keep_up: {
        head_lag: {
          samples: 80,
          period_ms: 250,
          share_behind: 0.1,
          blocks: { p50: 0, p99: 2, max: 3, mean: 0.2 },
          seconds: { p50: 0, p99: 1.5, max: 2.5 },
          worst: { blocks: 3, seconds: 2.5, at_ms: 0 },
        },
        import_ms: {
          blocks: 10,
          not_valid: 0,
          p50_ms: 20,
          p99_ms: 90,
          max_ms: 95,
          client: { blocks: 10, p50_ms: 5, p99_ms: 30, max_ms: 31 },
        },
        stale_answers: { count: 5, of: 100, share: 0.05, most_blocks_behind: 2 },
        backwards_answers: { count: 1, of: 100, share: 0.01 },
      },
      chain_load: {
        profile: 'mainnet',
        target_gas_per_block: 5e6,
        block_time_s: 2,
        tx_per_s: 19,
        aimed_tx_per_s: 19.2,
        gas_per_block: { blocks: 10, mean: 4.9e6, median: 4.95e6, p10: 4.5e6, p90: 5.2e6 },
        within_5pct: true,
        feed_cores: 0.1,
      },
      chain: {
        blocks: 10,
        gas_used: { mean: 4.9e6, median: 4.9e6, min: 4e6, max: 5.5e6 },
        gas_limit: 6e7,
        txs_per_block: 40,
      },
    }).join('\n');
    assert.match(lines, /Head lag of the node \(80 looks, every 250 ms\): 10\.0% of looks one block or more behind/);
    assert.match(lines, /Block import time \(10 blocks.*p50 20\.0 ms.*the client's own \(10 blocks\): p50 5\.0 ms/);
    assert.match(lines, /Stale answers: 5 of 100/);
    assert.match(lines, /Backwards answers: 1 of 100/);
    assert.match(lines, /Chain load \(CHAIN_LOAD=mainnet, 5\.00M gas a block every 2 s\).*within 5% of the profile/);
    assert.deepEqual(keepUpLines({}), []);
  });
});

describe('a fault in an A/B session', () => {
  it('is refused before anything starts: it would land in the first pair alone', () => {
    const { resolveBoth } = require('../../src/ab/run');
    const file = writeScenario(tmpDir(), 'a.env', 'CHAIN=ethereum\nCLIENT=geth\nRUNTIME=host\n');
    const { errors } = resolveBoth(file, file, { FAULT: 'pause-node@5s:5s' });
    assert.equal(errors.length, 2);
    assert.match(errors[0], /^A: FAULT=pause-node@5s:5s: not in an A\/B session/);
  });
});
