'use strict';
// The local network's parts without a node: the engine API's token, the
// driver's calls against a stand-in engine endpoint, the window's record from
// known counters, geth's member flags and enode, and the scenario's checks.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const { startEngineDriver } = require('../../src/network/engine-driver');
const { jwtToken } = require('../../src/network/engine-api');
const { sumCounters, windowRecord, readEdgeCounters } = require('../../src/network/watch');
const { networkLines } = require('../../src/report/network');
const geth = require('../../src/clients/geth');
const { shareMatching } = require('../../src/measure/folded');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const SECRET = 'aa'.repeat(32);
const ZERO = `0x${'00'.repeat(32)}`;

/** An engine endpoint: records each call's method, params and token; answer(method) gives the result or throws. */
function fakeEngine(name, answer, calls) {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const { method, params } = JSON.parse(body);
      calls.push({ node: name, method, params, auth: req.headers.authorization });
      try {
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: answer(method, params) }));
      } catch (err) {
        if (err.drop) return req.socket.destroy(); // no answer: the connection lost, as a node too busy to answer
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: err.message } }));
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })),
  );
}

describe('the engine API driver (the consensus-client stand-in)', () => {
  it("signs an HS256 token over iat with the secret, as the engine API's authentication asks", () => {
    const token = jwtToken(SECRET, 1700000000);
    const [head, body, sig] = token.split('.');
    assert.deepEqual(JSON.parse(Buffer.from(head, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
    assert.deepEqual(JSON.parse(Buffer.from(body, 'base64url').toString()), { iat: 1700000000 });
    const expected = crypto.createHmac('sha256', Buffer.from(SECRET, 'hex')).update(`${head}.${body}`).digest();
    assert.equal(sig, expected.toString('base64url'));
  });

  it('asks the producer for a payload, then hands it to every node with its head; a failing follower is counted', async () => {
    const calls = [];
    let n = 0;
    const block = () => ({
      executionPayload: {
        blockHash: `0x${String(n).padStart(64, '0')}`,
        blockNumber: '0x1',
        timestamp: '0x10',
        transactions: ['0xaa'],
      },
      executionRequests: [],
    });
    const producer = await fakeEngine(
      'producer',
      (m) => {
        if (m === 'engine_forkchoiceUpdatedV3') return { payloadStatus: { status: 'VALID' }, payloadId: `0x0${++n}` };
        if (m === 'engine_getPayloadV5') return block();
        return { status: 'VALID' };
      },
      calls,
    );
    const follower = await fakeEngine(
      'follower',
      () => ({ status: 'VALID', payloadStatus: { status: 'VALID' } }),
      calls,
    );
    const broken = await fakeEngine(
      'broken',
      () => {
        throw new Error('unknown ancestor');
      },
      calls,
    );
    const driver = startEngineDriver({
      nodes: [
        { name: 'producer', authUrl: producer.url },
        { name: 'follower', authUrl: follower.url },
        { name: 'broken', authUrl: broken.url },
      ],
      secretHex: SECRET,
      head: `0x${'11'.repeat(32)}`,
      headTimeS: 5,
      periodS: 0.05,
      feeRecipient: `0x${'00'.repeat(20)}`,
      log: () => {},
    });
    while (driver.stats.blocks < 2) await new Promise((r) => setTimeout(r, 20));
    await driver.stop();
    for (const s of [producer, follower, broken]) s.server.close();

    const first = calls[0];
    assert.equal(first.node, 'producer');
    assert.equal(first.method, 'engine_forkchoiceUpdatedV3');
    assert.equal(first.params[0].headBlockHash, `0x${'11'.repeat(32)}`);
    assert.ok(Number(first.params[1].timestamp) > 5, 'the payload is later than the head');
    assert.deepEqual(first.params[1].withdrawals, []);
    assert.match(first.auth, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const follows = calls.filter((c) => c.node === 'follower').map((c) => c.method);
    assert.deepEqual(follows.slice(0, 2), ['engine_newPayloadV4', 'engine_forkchoiceUpdatedV3']);
    const head = calls.find((c) => c.node === 'follower' && c.method === 'engine_forkchoiceUpdatedV3');
    assert.equal(head.params[1], null, 'a follower is told the head, not asked to build');
    assert.ok(driver.stats.blocks >= 2);
    assert.equal(driver.stats.transactions, driver.stats.blocks);
    assert.equal(driver.stats.failures.broken, driver.stats.blocks);
    assert.match(driver.stats.last_error, /broken: .*unknown ancestor/);
  });
});

describe('BLOCK_DELIVERY=head: the followers are told the head alone', () => {
  it('hands the producer its own payload and tells every other node only the new head, a joining node too', async () => {
    const calls = [];
    let n = 0;
    const producer = await fakeEngine(
      'producer',
      (m) => {
        if (m === 'engine_forkchoiceUpdatedV3') return { payloadStatus: { status: 'VALID' }, payloadId: `0x0${++n}` };
        if (m === 'engine_getPayloadV5')
          return {
            executionPayload: {
              blockHash: `0x${String(n).padStart(64, '0')}`,
              blockNumber: '0x1',
              timestamp: '0x10',
              transactions: [],
            },
          };
        return { status: 'VALID' };
      },
      calls,
    );
    const answer = () => ({ status: 'VALID', payloadStatus: { status: 'SYNCING' } });
    const follower = await fakeEngine('follower', answer, calls);
    const joiner = await fakeEngine('joiner', answer, calls);
    const driver = startEngineDriver({
      nodes: [
        { name: 'producer', authUrl: producer.url },
        { name: 'follower', authUrl: follower.url },
      ],
      secretHex: SECRET,
      head: `0x${'11'.repeat(32)}`,
      headTimeS: 5,
      headsOnly: true,
      periodS: 0.05,
      feeRecipient: `0x${'00'.repeat(20)}`,
      log: () => {},
    });
    while (driver.stats.blocks < 1) await new Promise((r) => setTimeout(r, 20));
    await driver.join({ name: 'joiner', authUrl: joiner.url });
    const own = `0x${'22'.repeat(32)}`;
    assert.equal(await driver.confirmHead({ name: 'joiner', authUrl: joiner.url }, own), 'SYNCING');
    const told = calls.find((c) => c.node === 'joiner' && c.params[0].headBlockHash === own);
    assert.deepEqual(told.params, [{ headBlockHash: own, safeBlockHash: ZERO, finalizedBlockHash: ZERO }, null]);
    driver.setFull('joiner'); // a node that has synced: still the head alone
    while (driver.stats.blocks < 3) await new Promise((r) => setTimeout(r, 20));
    await driver.stop();
    for (const s of [producer, follower, joiner]) s.server.close();

    const methods = (node) => [...new Set(calls.filter((c) => c.node === node).map((c) => c.method))];
    assert.deepEqual(methods('follower'), ['engine_forkchoiceUpdatedV3']);
    assert.deepEqual(methods('joiner'), ['engine_forkchoiceUpdatedV3']);
    assert.ok(methods('producer').includes('engine_newPayloadV4'), 'the producer imports its own block');
    const heads = calls.filter((c) => c.node === 'follower').map((c) => c.params[0].headBlockHash);
    assert.ok(heads.length >= 3 && heads.every((h) => /^0x0+\d$/.test(h)), heads.join());
    assert.deepEqual(driver.stats.failures, {});
  });
});

describe('a node joining by sync while geth says its beacon syncer is busy', () => {
  it('is told the head again until it takes it, at its join and when its own head is confirmed; another error fails the join at once', async () => {
    const calls = [];
    let busy = 2;
    const joiner = await fakeEngine(
      'joiner',
      () => {
        if (busy-- > 0) throw new Error('beacon syncer reorging');
        return { payloadStatus: { status: 'SYNCING' } };
      },
      calls,
    );
    const broken = await fakeEngine(
      'broken',
      () => {
        throw new Error('unknown payload');
      },
      calls,
    );
    const driver = startEngineDriver({
      nodes: [{ name: 'producer', authUrl: 'http://127.0.0.1:9' }],
      secretHex: SECRET,
      head: `0x${'11'.repeat(32)}`,
      headTimeS: 5,
      periodS: 3600, // no block is built meanwhile: the join's own calls alone
      feeRecipient: `0x${'00'.repeat(20)}`,
      log: () => {},
    });
    try {
      await driver.join({ name: 'joiner', authUrl: joiner.url, headOnly: true });
      assert.equal(calls.filter((c) => c.node === 'joiner').length, 3, 'told twice more after two busy answers');
      busy = 1; // its own head confirmed after its sync: the same
      assert.equal(
        await driver.confirmHead({ name: 'joiner', authUrl: joiner.url }, `0x${'22'.repeat(32)}`),
        'SYNCING',
      );
      assert.equal(calls.filter((c) => c.node === 'joiner').length, 5, 'told once more after one busy answer');
      await assert.rejects(driver.join({ name: 'broken', authUrl: broken.url, headOnly: true }), /unknown payload/);
      assert.equal(calls.filter((c) => c.node === 'broken').length, 1);
      // a node busy for good, and Ctrl-C: the waits between tries end with the abort, not after all ten
      busy = Infinity;
      const ctl = new AbortController();
      setTimeout(() => ctl.abort(), 100);
      const t0 = Date.now();
      await assert.rejects(driver.join({ name: 'joiner', authUrl: joiner.url, headOnly: true }, ctl.signal));
      assert.ok(Date.now() - t0 < 2000, `ended ${Date.now() - t0} ms after the join, the abort at 100 ms`);
    } finally {
      await driver.stop();
      for (const x of [joiner, broken]) x.server.close();
    }
  });
});

describe("the network's window record", () => {
  const counters = { p2pIn: 'p2p_ingress', p2pOut: 'p2p_egress', gossipIn: ['a_in', 'b_in'], gossipKnown: ['a_known'] };

  it('sums the named counters of a metrics page and names the missing ones', () => {
    const missing = new Set();
    const text = 'p2p_ingress 100\na_in 3\nb_in{x="y"} 4\n';
    assert.equal(sumCounters(text, ['a_in', 'b_in'], missing), 7);
    assert.equal(sumCounters(text, ['a_known'], missing), 0);
    assert.deepEqual([...missing], ['a_known']);
  });

  it('gives the edges’ differences and the peer counts’ min, median and max', () => {
    const a = { at_ms: 1000, p2p_in: 100, p2p_out: 50, gossip_in: 3, gossip_known: 1 };
    const b = { at_ms: 11000, p2p_in: 1100, p2p_out: 250, gossip_in: 23, gossip_known: 6 };
    const r = windowRecord({ a, b, peerCounts: [3, 2, 3, 3], counters, missing: new Set() });
    assert.deepEqual(
      [r.p2p_in_bytes, r.p2p_out_bytes, r.gossip_transactions_in, r.gossip_transactions_known],
      [1000, 200, 20, 5],
    );
    assert.deepEqual([r.peers.min, r.peers.median, r.peers.max, r.peers.samples], [2, 3, 3, 4]);
    assert.match(r.counters_source, /p2p_ingress, p2p_egress, a_in, b_in, a_known/);
  });

  it('leaves the byte figures out when an edge could not be read, rather than guess', () => {
    const r = windowRecord({ a: null, b: null, peerCounts: [], counters, missing: new Set() });
    assert.equal(r.p2p_in_bytes, undefined);
    assert.equal(r.peers.min, null);
  });

  it('reads an edge again when its first read fails; twice failed, the record and the summary say why', async () => {
    const page = { at_ms: 1, p2p_in: 1, p2p_out: 1, gossip_in: 1, gossip_known: 0 };
    let calls = 0;
    const flaky = async () => {
      if (++calls === 1) throw new Error('The operation was aborted due to timeout');
      return page;
    };
    assert.deepEqual(await readEdgeCounters(flaky), { counters: page });
    assert.equal(calls, 2);
    const down = await readEdgeCounters(async () => {
      throw new Error(`fetch failed ${++calls}`);
    });
    assert.deepEqual(down, { counters: null, unread: 'fetch failed 3, then fetch failed 4' });

    const a = { at_ms: 1000, p2p_in: 100, p2p_out: 50, gossip_in: 3, gossip_known: 1 };
    const r = windowRecord({ a, b: null, peerCounts: [2], counters, missing: new Set(), unread: { end: down.unread } });
    assert.equal(r.gossip_transactions_in, undefined);
    assert.deepEqual(r.counters_unread, { end: 'fetch failed 3, then fetch failed 4' });
    const run = {
      network: { nodes: 2, protocol: 'eth/68', cpus: '1', blocks: 'driver', tps: 1 },
      node: { network: r },
    };
    const text = networkLines(run).join('\n');
    assert.match(text, /could not be read at the window's end \(fetch failed 3, then fetch failed 4\)/);
    assert.doesNotMatch(text, /Peer to peer in the window/);
    assert.equal(windowRecord({ a, b: a, peerCounts: [], counters, missing: new Set() }).counters_unread, undefined);
  });
});

describe('NODE_PROFILE=cpu on a network: the share of samples in networking code', () => {
  it("counts a stack once when any of its frames is in geth's networking packages", () => {
    const stacks = [
      { frames: ['runtime.main', 'github.com/ethereum/go-ethereum/p2p.(*Peer).readLoop'], count: 3 },
      {
        frames: [
          'github.com/ethereum/go-ethereum/eth/fetcher.(*TxFetcher).loop',
          'github.com/ethereum/go-ethereum/p2p.x',
        ],
        count: 2,
      },
      { frames: ['github.com/ethereum/go-ethereum/rpc.(*handler).handleMsg'], count: 15 },
    ];
    const r = shareMatching(stacks, geth.network.profileFrames);
    assert.deepEqual([r.samples, r.of, r.share], [5, 20, 0.25]);
  });
});

describe('geth as a network member', () => {
  const s = { DEV_BLOCK_TIME_S: 1, DB_CACHE_MB: 1024, PEERS: 4, DB_ENGINE: 'pebble', NODE_PROFILE: 'none' };
  const ports = { rpc: 1, ws: 2, metrics: 3, p2p: 4, auth: 5 };

  it('drops --dev for the network id, its node key and the engine secret; PEERS is still --maxpeers', () => {
    const args = geth.command(s, {
      dataDir: '/d',
      ports,
      network: { nodeKeyHex: 'ab'.repeat(32), jwtFile: '/j' },
    }).args;
    assert.ok(!args.includes('--dev'));
    const flag = (f) => args[args.indexOf(f) + 1];
    assert.equal(flag('--networkid'), '1337');
    assert.equal(flag('--nodekeyhex'), 'ab'.repeat(32));
    assert.equal(flag('--authrpc.jwtsecret'), '/j');
    assert.equal(flag('--maxpeers'), '4');
    assert.ok(args.includes('--nodiscover'));
    assert.ok(geth.command(s, { dataDir: '/d', ports }).args.includes('--dev'), 'a lone node stays a dev chain');
    assert.equal(flag('--syncmode'), 'full');
    const snap = geth.command(s, {
      dataDir: '/d',
      ports,
      network: { nodeKeyHex: 'ab', jwtFile: '/j', syncMode: 'snap' },
    });
    assert.equal(snap.args[snap.args.indexOf('--syncmode') + 1], 'snap', 'a node given the genesis block alone');
  });

  it('names a node by the public key of its node key (secp256k1: key 1 is the generator point)', () => {
    const enode = geth.network.enode(`${'00'.repeat(31)}01`, 30303);
    assert.equal(
      enode,
      'enode://79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8@127.0.0.1:30303',
    );
    assert.match(geth.network.enode(`${'00'.repeat(31)}01`, 30303, 'network-2'), /@network-2:30303$/, 'a service name');
  });

  it('admits PEERS less a third of it (at least one) as inbound peers, as docs/network.md says', () => {
    assert.deepEqual(
      [0, 1, 2, 4, 6, 50].map((n) => geth.network.inboundPeers(n)),
      [0, 0, 1, 3, 4, 34],
    );
  });

  it('in a container of a network, opens its engine API on the container’s interfaces, with any host name', () => {
    const args = geth.command(s, {
      dataDir: '/data',
      ports,
      external: true,
      network: { nodeKeyHex: 'ab'.repeat(32), jwtFile: '/j' },
    }).args;
    const flag = (f) => args[args.indexOf(f) + 1];
    assert.equal(flag('--authrpc.addr'), '0.0.0.0');
    assert.equal(flag('--authrpc.vhosts'), '*');
    const lone = geth.command(s, { dataDir: '/data', ports, external: true }).args;
    assert.equal(lone[lone.indexOf('--authrpc.addr') + 1], '127.0.0.1', 'a lone container keeps it to itself');
  });
});

describe('SYNC=network with a STATE profile: the state the node serves after its snap sync', () => {
  const { compareState } = require('../../src/network/sync');
  const servers = [];
  after(() => servers.forEach((x) => x.server.close()));
  /**
   * A node answering the state reads; differ: a storage slot it answers otherwise; drops: how many eth_getCode reads it
   * drops first (the connection lost, as a node too busy to answer).
   */
  const node = async (calls, { differ = false, unfunded = false, drops = 0 } = {}) => {
    let dropped = 0;
    const x = await fakeEngine(
      'n',
      (method, params) => {
        if (method === 'eth_getCode' && dropped++ < drops) throw Object.assign(new Error('busy'), { drop: true });
        if (method === 'eth_getBalance') return unfunded ? '0x0' : '0xde0b6b3a7640000';
        if (method === 'eth_getCode') return '0x6080';
        return differ && params[1].endsWith('2') ? '0x05' : `0x0${Number(params[1]) + 1}`;
      },
      calls,
    );
    servers.push(x);
    return x.url;
  };

  it('reads 4 accounts, the storage contract’s code and 4 slots from both at the same block', async () => {
    const calls = [];
    const record = await compareState(await node(calls), await node(calls), 158);
    assert.deepEqual(record, { block: 158, reads: 9, equal: true });
    assert.equal(calls.length, 18);
    assert.ok(
      calls.every((c) => c.params.at(-1) === '0x9e'),
      'at block 158, on both',
    );
  });

  it('waits after the sync until the node uses less than 0.2 cores, or says it ran out of time', async () => {
    const { settle } = require('../../src/network/sync');
    /** A CPU reader whose node burns `rates` cores in turn (the clock is the reads' own instants). */
    const busy = (rates) => {
      let total = 0;
      let at = Date.now();
      let k = 0;
      return {
        read: async () => {
          const now = Date.now();
          total += ((now - at) / 1000) * rates[Math.min(k++, rates.length - 1)];
          at = now;
          return { total_s: total };
        },
      };
    };
    const logs = [];
    const done = await settle(busy([0, 1, 1, 0.01]), { timeoutS: 60, everyS: 0.05, log: (m) => logs.push(m) });
    assert.equal(done.settled, true);
    assert.ok(done.cores_last < 0.2 && done.below_cores === 0.2, JSON.stringify(done));
    assert.equal(logs.length, 2, 'two readings of a busy node, each said');
    // about 1 core: the reader's clock and settle's are read apart, a millisecond may tick between them
    assert.match(logs[0], /still busy: (0\.9\d|1\.0\d) cores/);
    const late = await settle(busy([0, 1]), { timeoutS: 0.1, everyS: 0.05, log: () => {} });
    assert.equal(late.settled, false);
    assert.ok(late.seconds >= 0.1 && late.cores_last > 0.9, JSON.stringify(late));
  });

  it('goes on waiting when a busy node does not answer a look at the sync or its metrics, fails only at SYNC_TIMEOUT_S, and at once on an error it answers', async () => {
    const { syncFromNetwork } = require('../../src/network/sync');
    let looks = 0;
    // the node answers its head at once, then drops eth_syncing twice (a transient failure), then is synced; with
    // `answerError`, it answers eth_syncing with a JSON-RPC error
    let answerError = false;
    // the node's head as eth_getBlockByNumber gives it: it moves once between the first two reads (a block from a
    // peer), so the first confirmation does not count
    const heads = ['aa', 'bb', 'bb', 'bb'];
    const told = [];
    const node = await fakeEngine(
      'node',
      (m) => {
        if (m === 'eth_blockNumber') return looks === 0 ? '0x0' : '0x10';
        if (m === 'eth_getBlockByNumber') return { number: '0x10', hash: `0x${heads.shift() || 'aa'}` };
        looks++;
        if (answerError) throw new Error('the method eth_syncing does not exist');
        if (looks <= 2) throw Object.assign(new Error('dropped'), { drop: true });
        return false;
      },
      [],
    );
    const network = await fakeEngine('network', () => '0x10', []);
    const o = {
      nodeRpcUrl: node.url,
      networkRpcUrl: network.url,
      member: { name: 'node under test', authUrl: 'http://127.0.0.1:1' },
      driver: {
        join: async () => {},
        confirmHead: async (m, hash) => {
          told.push(`${m.name} ${hash}`);
          return 'VALID';
        },
        setFull: (name) => told.push(`full ${name}`),
      },
      cpu: null,
      log: () => {},
    };
    // the metrics page times out once at each edge, then answers
    let reads = 0;
    const readCounters = async () => {
      if (++reads % 2 === 1) throw new Error('The operation was aborted due to timeout');
      return { p2p_in: reads * 100, p2p_out: reads * 10 };
    };
    const r = await syncFromNetwork({ ...o, readCounters, timeoutS: 30 });
    assert.equal(r.head, 16);
    assert.equal(looks, 3, 'two failed looks, then the synced one');
    assert.equal(r.failed_looks, 2);
    assert.deepEqual([r.p2p_in_bytes, r.p2p_out_bytes], [200, 20], 'the counters at both edges, read again');
    assert.deepEqual(
      told,
      ['node under test 0xaa', 'node under test 0xbb', 'full node under test'],
      'told its own head (again when it moved meanwhile) before it is handed payloads',
    );
    o.readCounters = async () => null;
    looks = -1e9; // from now on every eth_syncing fails (looks stays <= 2)
    await assert.rejects(
      syncFromNetwork({ ...o, timeoutS: 0.2 }),
      /did not sync from its peers in SYNC_TIMEOUT_S=0.2 s: block \d+ of 16; its last answer: .+ \((UND_ERR_SOCKET|ECONNRESET|connection lost)\)/,
    );
    // an error the node answers is not waited out
    answerError = true;
    const t0 = Date.now();
    await assert.rejects(syncFromNetwork({ ...o, timeoutS: 30 }), /eth_syncing does not exist/);
    assert.ok(Date.now() - t0 < 5000, 'failed at once, not at SYNC_TIMEOUT_S');
    node.server.close();
    network.server.close();
  });

  it('names a sync whose head stopped moving once it was importing blocks, and not one that is slow from its start', async () => {
    const { syncFromNetwork } = require('../../src/network/sync');
    let nodeHead = 0;
    let networkHead = 100;
    const node = await fakeEngine(
      'node',
      (m) => (m === 'eth_blockNumber' ? `0x${nodeHead.toString(16)}` : { currentBlock: '0x5', highestBlock: '0x64' }),
      [],
    );
    const network = await fakeEngine('network', () => `0x${(networkHead++).toString(16)}`, []);
    const o = {
      nodeRpcUrl: node.url,
      networkRpcUrl: network.url,
      member: { name: 'node under test', authUrl: 'http://127.0.0.1:1' },
      driver: { join: async () => (nodeHead = 5), confirmHead: async () => 'VALID', setFull: () => {} },
      readCounters: async () => null,
      cpu: null,
      log: () => {},
    };
    // the head moves to 5 as it is told the network's, then stays there while the network's goes on
    await assert.rejects(
      syncFromNetwork({ ...o, timeoutS: 1.5 }),
      /SYNC_TIMEOUT_S=1.5 s: block 5 of \d+; its head had stayed at block 5 for the last \d+ s while the network's went from \d+ to \d+: the sync stalled/,
    );
    // a network whose head stood still too (its blocks not built) is not the node's stall
    const moving = networkHead;
    network.server.removeAllListeners('request');
    network.server.on('request', (req, res) => {
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: `0x${moving.toString(16)}` })));
    });
    await assert.rejects(syncFromNetwork({ ...o, timeoutS: 1.5 }), (err) => {
      assert.match(err.message, /SYNC_TIMEOUT_S=1.5 s: block 5 of \d+$/);
      return true;
    });
    // a head that never left where the node started is a sync still at its state (or not begun), not said to stall
    o.driver.join = async () => {};
    nodeHead = 0;
    await assert.rejects(syncFromNetwork({ ...o, timeoutS: 1.5 }), (err) => {
      assert.match(err.message, /SYNC_TIMEOUT_S=1.5 s: block 0 of \d+$/);
      return true;
    });
    node.server.close();
    network.server.close();
  });

  it('asks a read again when the node drops it (busy after its sync), not when it answers an error', async () => {
    const calls = [];
    const busyCalls = [];
    const same = await node(calls);
    assert.deepEqual(await compareState(await node(busyCalls, { drops: 2 }), same, 9), {
      block: 9,
      reads: 9,
      equal: true,
    });
    assert.equal(busyCalls.filter((c) => c.method === 'eth_getCode').length, 3, 'two dropped, the third answered');
    const refusing = await fakeEngine(
      'refusing',
      () => {
        throw new Error('missing trie node');
      },
      calls,
    );
    servers.push(refusing);
    await assert.rejects(compareState(refusing.url, same, 9), /missing trie node/);
  });

  it('names what differs, and refuses unfunded accounts even where both agree', async () => {
    const calls = [];
    await assert.rejects(
      compareState(await node(calls, { differ: true }), await node(calls), 7),
      /does not serve the network's state at block 7: eth_getStorageAt\(0x0+c0ffee01 0x0+2\)/,
    );
    await assert.rejects(
      compareState(await node(calls, { unfunded: true }), await node(calls, { unfunded: true }), 7),
      /accounts unfunded/,
    );
  });
});

describe('NETWORK_NODES in a scenario', () => {
  let dir;
  beforeEach(() => {
    dir = tmpDir();
  });
  const resolve = (text) =>
    resolveScenario(writeScenario(dir, 'n.env', text), { env: {}, cpuCount: 2, dockerEngine: null });

  it('sends 2 transactions per second by default on a network, none without one', () => {
    assert.equal(resolve('RUNTIME=host\nNETWORK_NODES=3\nPEERS=3\n').scenario.NETWORK_TPS, 2);
    assert.equal(resolve('RUNTIME=host\n').scenario.NETWORK_TPS, 0);
  });

  it('warns when PEERS is above what the network can give, or 0', () => {
    assert.match(resolve('RUNTIME=host\nNETWORK_NODES=3\nPEERS=50\n').warnings.join(), /at most 3 peers/);
    assert.match(resolve('RUNTIME=host\nNETWORK_NODES=3\nPEERS=0\n').warnings.join(), /refuses every peer/);
    assert.deepEqual(resolve('RUNTIME=host\nNETWORK_NODES=3\nPEERS=3\n').warnings, []);
  });

  it('takes the host and compose runtimes; takes a STATE profile on the host, compose and swarm runtimes; refuses a client without networking, attach, a kept volume and NETWORK_TPS alone, saying why', () => {
    const errs = (text) => resolve(text).errors.join('\n');
    assert.match(
      errs('CLIENT=anvil\nRUNTIME=host\nNETWORK_NODES=2\n'),
      /anvil is a development node without peer-to-peer/,
    );
    assert.deepEqual(resolve('RUNTIME=compose\nNETWORK_NODES=2\n').errors, []);
    assert.match(errs('RUNTIME=compose\nNETWORK_NODES=2\nNODE_VOLUME=kept\n'), /not from a kept volume/);
    assert.match(errs('RUNTIME=attach\nRPC_URL=http://127.0.0.1:1\nNETWORK_NODES=2\n'), /did not start/);
    assert.match(errs('RUNTIME=attach\nRPC_URL=http://127.0.0.1:1\nNETWORK_NODES=2\n'), /did not start/);
    assert.deepEqual(errs('RUNTIME=swarm\nNETWORK_NODES=2\nSTATE=small\n'), '');
    assert.deepEqual(errs('RUNTIME=compose\nNETWORK_NODES=2\nSTATE=small\nSYNC=network\n'), '');
    assert.deepEqual(errs('RUNTIME=host\nNETWORK_NODES=2\nSTATE=small\nSYNC=network\n'), '');
    assert.deepEqual(
      errs('RUNTIME=host\nNETWORK_NODES=2\nSTATE=small\nREPLICAS=2\n'),
      '',
      'a fleet, each replica a copy',
    );
    // without NETWORK_NODES chainperf starts one node (test/unit/companions.test.js); NETWORK_NODES=0 given is refused
    assert.match(errs('RUNTIME=host\nNETWORK_NODES=0\nNETWORK_TPS=5\n'), /NETWORK_NODES=0 \(.*\.env:2\) starts none/);
    assert.match(errs('RUNTIME=host\nNETWORK_NODES=0\nSYNC=network\n'), /SYNC=network: the node syncs from a network/);
    assert.match(
      errs('RUNTIME=host\nNETWORK_NODES=0\nBLOCK_DELIVERY=head\n'),
      /BLOCK_DELIVERY: a lone node builds its own blocks; NETWORK_NODES=0 .* starts none/,
    );
    assert.deepEqual(errs('RUNTIME=host\nNETWORK_NODES=1\nBLOCK_DELIVERY=head\n'), '');
  });
});

describe('REPLICAS: the fleet record and a fault, from known counters and access log lines', () => {
  const { fleetRecord, faultRecord, perSecond } = require('../../src/runtime/fleet-records');
  const replicas = ['replica-1', 'replica-2'].map((name) => ({ name, group: { memoryBytes: () => 100 } }));
  const window = { start: 1000000, end: 1010000 };
  // %Ts.%ms %s %Tr %Ta %ST: accepted at, server, Tr, Ta, status
  const log = [
    '1000.100 replica-1 3 4 200',
    '1001.000 replica-2 5 6 200',
    '1005.000 replica-2 -1 2 503',
    '1006.000 <NOSRV> -1 0 503',
    '1007.000 replica-1 2 3 200',
    '1011.000 replica-1 2 3 200',
  ].join('\n');

  it("gives each replica's requests from the balancer's counters, its share, CPU per request and the spread", () => {
    const a = {
      counts: {
        'replica-1': { responses: 10, errors: 0, up: true },
        'replica-2': { responses: 5, errors: 0, up: true },
      },
      cpu: [1, 1],
    };
    const b = {
      counts: {
        'replica-1': { responses: 310, errors: 0, up: true },
        'replica-2': { responses: 105, errors: 1, up: false },
      },
      cpu: [1.6, 1.3],
    };
    const r = fleetRecord({ replicas, a, b, lbCpu: 0.08, logText: log, window, lost: [] });
    assert.deepEqual(
      r.replicas.map((x) => x.requests),
      [300, 100],
    );
    assert.deepEqual(
      r.replicas.map((x) => x.share),
      [0.75, 0.25],
    );
    assert.deepEqual(
      r.replicas.map((x) => x.cpu_ms_per_request),
      [2, 3],
    );
    assert.equal(r.spread.share_max_over_min, 3);
    assert.equal(r.spread.cpu_per_request_max_over_min, 1.5);
    assert.equal(r.balancer.cpu_ms_per_request, 0.2);
    assert.deepEqual([r.replicas[1].errors, r.replicas[1].up_at_end], [1, false]);
  });

  it("a replica on another swarm node: CPU per request over its own samples' span, with the requests logged in it", () => {
    const counts = (n) => ({ 'replica-1': { responses: n, errors: 0, up: true } });
    const placed = [{ name: 'replica-1', group: null }];
    const args = {
      replicas: placed,
      a: { counts: counts(0), cpu: [10] },
      b: { counts: counts(4), cpu: [10.006] },
      lbCpu: 0,
      logText: log,
      window,
      lost: [],
      replicaSource: "its cAdvisor's samples",
      spans: [{ span: [1000050, 1009000], memory: 123 }], // the requests accepted at 1000.1 and 1007.0 end inside it
    };
    const r = fleetRecord(args);
    assert.equal(r.replicas[0].requests, 4, "the balancer's counters over the window, for the share");
    assert.equal(r.replicas[0].cpu_ms_per_request, 3, '6 ms over the 2 requests of its span');
    assert.deepEqual(r.replicas[0].span_ms, [1000050, 1009000]);
    assert.equal(r.replicas[0].memory_bytes, 123, "its cAdvisor's working set");
    assert.match(r.source, /CPU and memory: its cAdvisor's samples/);
    const lbSpan = { span: [1000050, 1009000], cpu_s: 0.004, requests: 4 };
    const lbPlaced = fleetRecord({ ...args, lbCpu: null, lbSpan });
    assert.deepEqual(lbPlaced.balancer, { cpu_s: 0.004, cpu_ms_per_request: 1, span_ms: [1000050, 1009000] });
  });

  it("plans HAProxy's service with its soft stop as the stop signal (as a container's first process it lets SIGTERM pass)", async () => {
    const fs = require('node:fs');
    const { planComposeFleet } = require('../../src/runtime/compose-fleet');
    const dir = tmpDir();
    const text = 'CHAIN=ethereum\nCLIENT=geth\nRUNTIME=compose\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\n';
    const r = resolveScenario(writeScenario(dir, 'f.env', text), { env: {}, cpuCount: 2, dockerEngine: '20.10.24' });
    assert.deepEqual(r.errors, []);
    const network = { dir, member: { nodeKeyHex: '11'.repeat(32) } };
    const o = { client: geth, workDir: dir, imageRef: 'n', haproxyRef: 'h', nodeCpus: '0', balancerCpus: '1', network };
    const plan = await planComposeFleet(r.scenario, o);
    const doc = JSON.parse(fs.readFileSync(plan.file, 'utf8'));
    assert.equal(doc.services.haproxy.stop_signal, 'SIGUSR1');
    assert.equal(doc.services['replica-2'].stop_signal, undefined);
  });

  it('HAProxy on another swarm node: its CPU over its own samples, over every request it logged between them', async () => {
    const { balancerSpan } = require('../../src/runtime/fleet-hooks');
    const edges = { a: { at_ms: 1000050, total_s: 5 }, b: { at_ms: 1006000, total_s: 5.003 } };
    const lb = { cpuSpan: async (start, end) => (start === window.start && end === window.end ? edges : null) };
    const x = await balancerSpan(lb, window, log);
    assert.deepEqual(x.span, [1000050, 1006000]);
    assert.equal(x.cpu_s, 0.003);
    assert.equal(
      x.requests,
      3,
      "ended inside: replica-1's at 1000.104, replica-2's 200 and 503 (not the <NOSRV> at 1006.000)",
    );
  });

  it("counts each replica's 2xx responses in each second of the window", () => {
    const secs = perSecond(log, window, ['replica-1', 'replica-2']);
    assert.equal(secs.length, 10);
    assert.deepEqual(secs[0].ok, { 'replica-1': 1, 'replica-2': 0 });
    assert.deepEqual(secs[1].ok, { 'replica-1': 0, 'replica-2': 1 });
    assert.deepEqual(secs[5].ok, { 'replica-1': 0, 'replica-2': 0 }, 'a 503 is not served');
    assert.deepEqual(secs[7].ok, { 'replica-1': 1, 'replica-2': 0 });
  });

  it('after a kill: the errors clients got, the last one, and who served what', () => {
    const f = faultRecord({ kind: 'kill-replica', replica: 'replica-2', at_ms: 1004000 }, log, window);
    assert.equal(f.errors_after, 2);
    assert.equal(f.last_error_after_s, 2);
    assert.equal(f.served_by_killed_after, 0);
    assert.equal(f.served_by_others_after, 1, 'the line after the window is not counted');
    assert.equal(f.served_before, 2, "the fleet's 2xx in the 6 s before the kill (from the window's start)");
  });

  it('a kill through a swarm: placed at the last response the replica served between its order and its report', () => {
    const kill = { kind: 'kill-replica', replica: 'replica-2', ordered_ms: 1000500, reported_ms: 1005500 };
    const f = faultRecord({ ...kill, at_ms: 1005500 }, log, window);
    assert.equal(f.at_ms, 1001006, "replica-2's 200 that ended at 1001.006 s: the kill landed after it");
    assert.equal(f.reported_ms, 1005500);
    assert.equal(f.errors_after, 2, 'its 503 before the report counts after the kill');
    assert.equal(faultRecord({ ...kill, ordered_ms: 1001500, at_ms: 1005500 }, log, window).at_ms, 1001500, 'none');
  });

  it("adds the clients' failed requests from the second of the kill on (HAProxy does not log what it drops)", () => {
    const { withClientsFault } = require('../../src/measure/window-records');
    const series = [
      { t_ms: 1003000, ok: 5, failed: 1 },
      { t_ms: 1004000, ok: 5, failed: 3 },
      { t_ms: 1005000, ok: 5, failed: 0 },
      { t_ms: 1006000, ok: 5, failed: 2 },
      { t_ms: 1007000, ok: 5, failed: 0 },
    ];
    const f = withClientsFault({ replicas: [], fault: { replica: 'replica-2', at_ms: 1004400 } }, series).fault;
    assert.equal(f.client_errors_after, 5, 'the failure before the kill is not counted');
    assert.equal(f.client_last_error_second_after, 2);
    const none = withClientsFault({ replicas: [] }, series);
    assert.equal(none.fault, undefined, 'no fault, nothing added');
  });

  it('refuses a fleet without a network or a fault it does not know; takes limits, which apply per replica', () => {
    const dir = tmpDir();
    const errs = (text) =>
      resolveScenario(writeScenario(dir, 'f.env', text), { env: {}, cpuCount: 2, dockerEngine: null }).errors.join(
        '\n',
      );
    assert.match(
      errs('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=0\n'),
      /share one chain through a network; NETWORK_NODES=0 \(.*\.env:3\) starts none; set NETWORK_NODES to 1 or more, or leave it unset/,
    );
    assert.match(errs('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\nTRANSPORT=ws\n'), /balancer speaks HTTP/);
    assert.doesNotMatch(errs('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\nMEMORY_MB=2048\n'), /MEMORY_MB/);
    assert.doesNotMatch(errs('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\nDISK_READ_MBPS=100\n'), /DISK_READ_MBPS/);
    assert.match(
      errs('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\nFAULT=kill-node@3s\n'),
      /not a fault chainperf knows/,
    );
    assert.match(errs('RUNTIME=host\nREPLICAS=1\nFAULT=kill-replica@3s\n'), /needs another replica to serve on/);
    assert.equal(errs('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\nFAULT=kill-replica@3s\nPEERS=2\n'), '');
    // SYNC=network with a fleet: each replica syncs in turn, in every runtime that starts a fleet
    for (const runtime of ['host', 'compose', 'swarm'])
      assert.equal(errs(`RUNTIME=${runtime}\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\nSYNC=network\n`), '', runtime);
  });

  it("holds a fault back in a window whose load began late (it is measured again), by the generator's own record", async () => {
    const { scheduleFault, fleetHooks } = require('../../src/runtime/fleet-hooks');
    const killed = [];
    const replicas = ['replica-1', 'replica-2'].map((name) => ({
      name,
      pid: 1,
      kill: () => killed.push(name),
      onGone: () => {},
    }));
    const s = { FAULT: 'kill-replica@1s' };
    const state = { done: false, fault: null };
    const fired = () => new Promise((r) => setTimeout(r, 20));
    const windowAt = (late) => ({
      start: Date.now() - 5000,
      end: Date.now() + 5000,
      loadBeganLate: typeof late === 'function' ? late : () => late,
    });
    const quick = { recheckMs: 1 };
    let looks = 0;
    scheduleFault(
      s,
      replicas,
      windowAt(() => ++looks > 0),
      state,
      quick,
    );
    await fired();
    assert.equal(looks, 5, 'looked at again 4 times before it is held back');
    assert.deepEqual(killed, [], 'a late window keeps its replicas');
    assert.equal(state.done, false, 'the next window gets the fault');
    assert.equal(state.heldInWindow, true, "the window's hook record says so (faultHeldBack)");
    // a record that lagged: late at the first look, punctual at the second
    let first = true;
    const lagging = () => {
      const late = first;
      first = false;
      return late;
    };
    scheduleFault(s, replicas, windowAt(lagging), state, quick);
    await fired();
    assert.deepEqual(killed, ['replica-2'], 'killed once the record caught up');
    assert.equal(state.fault.replica, 'replica-2');
    scheduleFault(s, replicas, windowAt(false), state);
    await fired();
    assert.deepEqual(killed, ['replica-2'], 'once per run');
    // a fault never carried out is a warning of the run, never silence
    const hooks = fleetHooks(s, { replicas, lost: [], lb: {}, lbGroup: {}, balancerCpus: null, healthCheck: '' });
    assert.match(hooks.problems()[0], /^FAULT=kill-replica@1s was not carried out, no replica was killed: no window/);
  });

  it('a window whose fault was held back on a lagging record is measured again where its caller can', () => {
    const { throwIfFaultHeldBack } = require('../../src/measure/late');
    const held = { fleet: Object.defineProperty({}, 'faultHeldBack', { value: true }) };
    assert.throws(
      () => throwIfFaultHeldBack(held, true),
      (err) => err.lateStart === true && /FAULT was held back/.test(err.message),
    );
    assert.doesNotThrow(() => throwIfFaultHeldBack(held, false), 'the last attempt keeps its window and warns');
    assert.doesNotThrow(() => throwIfFaultHeldBack({ fleet: {} }, true), 'a fault carried out, or none asked');
    assert.doesNotThrow(() => throwIfFaultHeldBack({}, true), 'no fleet');
  });

  it('a kill through the swarm: its gone says when it landed; a kill that fails or lands after the window is a warning', async () => {
    const { scheduleFault, faultNotDone } = require('../../src/runtime/fleet-hooks');
    const s = { FAULT: 'kill-replica@0s' };
    const window = { start: Date.now(), end: Date.now() + 5000 };
    let gone;
    const placed = (kill) => [
      { name: 'replica-1' },
      { name: 'replica-2', container: 'c2', kill, onGone: (fn) => (gone = fn) },
    ];
    const state = { done: false, fault: null };
    scheduleFault(
      s,
      placed(async () => {}),
      window,
      state,
    );
    await new Promise((r) => setTimeout(r, 20));
    const ordered = state.fault.at_ms;
    gone({ ordered_ms: ordered, at_ms: ordered + 3100, how: 'scaled to 0' });
    assert.equal(state.fault.at_ms, ordered + 3100, 'the boundary: when the kill landed');
    assert.equal(state.fault.ordered_ms, ordered);
    assert.ok(state.fault.gone_ms >= ordered);
    assert.deepEqual(faultNotDone(s, state), []);
    assert.match(faultNotDone(s, { ...state, unseen: true })[0], /replica-2 was not seen gone by its window's end/);
    const failed = { done: false, fault: null };
    scheduleFault(
      s,
      placed(async () => Promise.reject(new Error('HTTP 500'))),
      window,
      failed,
    );
    await new Promise((r) => setTimeout(r, 20));
    assert.match(faultNotDone(s, failed)[0], /^FAULT=kill-replica@0s: the kill of replica-2 failed: HTTP 500/);
  });

  it("tells mid-window whether the load began late from the workers' partial records, as the window decides", () => {
    const fs = require('node:fs');
    const path = require('node:path');
    const { firstRequestSoFar } = require('../../src/measure/partial');
    const samplesDir = path.join(tmpDir(), 'samples-measure');
    assert.equal(firstRequestSoFar(samplesDir), undefined, 'no record yet');
    fs.mkdirSync(`${samplesDir}.partial`);
    const write = (worker, firsts) =>
      fs.writeFileSync(
        path.join(`${samplesDir}.partial`, `partial-${worker}.jsonl`),
        firsts.map((f) => `${JSON.stringify({ upto_ms: 0, first_request_at: f })}\n`).join(''),
      );
    write('a', [null]);
    assert.equal(firstRequestSoFar(samplesDir), null, 'records, no request');
    write('a', [null, 1500]);
    write('b', [900]);
    assert.equal(firstRequestSoFar(samplesDir), 900, "the earliest of the workers' latest lines");
  });

  it('takes a fleet and its FAULT in the compose and swarm runtimes too', () => {
    const dir = tmpDir();
    const errs = (text) =>
      resolveScenario(writeScenario(dir, 'c.env', text), {
        env: {},
        cpuCount: 2,
        dockerEngine: '20.10.24',
      }).errors.join('\n');
    assert.equal(errs('RUNTIME=compose\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\n'), '');
    assert.equal(errs('RUNTIME=compose\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\nFAULT=kill-replica@3s\n'), '');
    assert.equal(errs('RUNTIME=swarm\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\n'), '');
    assert.equal(errs('RUNTIME=swarm\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\nFAULT=kill-replica@3s\n'), '');
    assert.match(
      errs('RUNTIME=attach\nRPC_URL=http://x:1\nREPLICAS=2\n'),
      /REPLICAS: chainperf starts no fleet .*REPLICA_METRICS/,
    );
  });

  it("renders the compose fleet's Prometheus targets (the node service is replica-1) and HAProxy's by-name servers", () => {
    const yaml = require('js-yaml');
    const { prometheusConfig } = require('../../src/runtime/compose-render');
    const { renderConfig } = require('../../src/runtime/haproxy');
    const doc = yaml.load(prometheusConfig({ CLIENT: 'geth', BALANCER: 'haproxy', REPLICAS: 3 }, 'r1'));
    const node = doc.scrape_configs.find((j) => j.job_name === 'node').static_configs;
    assert.deepEqual(
      node.map((c) => [c.targets[0], c.labels.replica, c.labels.run_id]),
      [
        ['node:6060', 'replica-1', 'r1'],
        ['replica-2:6060', 'replica-2', 'r1'],
        ['replica-3:6060', 'replica-3', 'r1'],
      ],
    );
    const lone = yaml.load(prometheusConfig({ CLIENT: 'geth', BALANCER: 'none', REPLICAS: 1 }, 'r1'));
    assert.deepEqual(lone.scrape_configs.find((j) => j.job_name === 'node').static_configs[0].targets, ['node:6060']);
    const cfg = renderConfig({
      port: 8000,
      statsPort: 8001,
      servers: [{ name: 'replica-1', host: 'node', port: 8545 }],
      algorithm: 'roundrobin',
      healthBody: '{}',
      bind: '0.0.0.0',
      dns: true,
    });
    assert.match(cfg, /default-server .* init-addr last,libc,none /, 'a name that does not resolve yet is no error');
    assert.match(cfg, /default-server .* resolvers docker /, 'and is resolved again while HAProxy runs (a swarm)');
    assert.match(cfg, /^resolvers docker\n {2}nameserver docker 127\.0\.0\.11:53$/m);
    assert.match(cfg, /default-server .* on-marked-down shutdown-sessions/);
    // a killed container's address answers nothing: a connection (a check's too) gets 1 s, and live traffic's failures
    // mark the replica down without waiting for its checks (the compose fault stalled the window for 16 s without
    // them); a check that connected gets 3 s, since a live replica under load answers slowly
    assert.match(cfg, /^ {2}timeout connect 1s$/m);
    assert.match(cfg, /^ {2}timeout check 3s$/m);
    assert.match(cfg, /default-server .* observe layer4 error-limit 3 on-error mark-down/);
    assert.match(cfg, /^ {2}option redispatch 1$/m);
  });

  it('scrapes every replica of a fleet, each series labelled with the run and its replica', () => {
    const { scrapeConfig } = require('../../src/runtime/prometheus');
    const yaml = require('js-yaml');
    const targets = [
      { address: '127.0.0.1:7001', replica: 'replica-1' },
      { address: '127.0.0.1:7002', replica: 'replica-2' },
    ];
    const doc = yaml.load(scrapeConfig({ runId: 'r1', targets, metricsPath: '/debug/metrics/prometheus' }));
    const job = doc.scrape_configs[0];
    assert.equal(job.metrics_path, '/debug/metrics/prometheus');
    assert.deepEqual(job.static_configs, [
      { targets: ['127.0.0.1:7001'], labels: { run_id: 'r1', replica: 'replica-1' } },
      { targets: ['127.0.0.1:7002'], labels: { run_id: 'r1', replica: 'replica-2' } },
    ]);
    const one = yaml.load(scrapeConfig({ runId: 'r1', targets: ['127.0.0.1:7000'], metricsPath: '/m' }));
    assert.deepEqual(one.scrape_configs[0].static_configs, [{ targets: ['127.0.0.1:7000'], labels: { run_id: 'r1' } }]);
  });

  it('puts HAProxy in front of a fleet by default, and in front of one replica when BALANCER=haproxy', () => {
    const dir = tmpDir();
    const resolve = (text) =>
      resolveScenario(writeScenario(dir, 'b.env', text), { env: {}, cpuCount: 2, dockerEngine: null });
    assert.equal(resolve('RUNTIME=host\n').scenario.BALANCER, 'none');
    assert.equal(resolve('RUNTIME=host\nREPLICAS=2\nNETWORK_NODES=1\n').scenario.BALANCER, 'haproxy');
    const one = resolve('RUNTIME=host\nBALANCER=haproxy\nNETWORK_NODES=1\n');
    assert.deepEqual(one.errors, []);
    assert.equal(one.scenario.BALANCER, 'haproxy');
    assert.match(resolve('RUNTIME=host\nBALANCER=haproxy\nNETWORK_NODES=0\n').errors.join('\n'), /set NETWORK_NODES/);
    assert.match(
      resolve('RUNTIME=host\nBALANCER=none\nREPLICAS=2\nNETWORK_NODES=1\n').errors.join('\n'),
      /through a balancer/,
    );
    assert.match(resolve('RUNTIME=host\nLB_ALGORITHM=first\n').errors.join('\n'), /no balancer \(BALANCER=none\)/);
  });
});
