'use strict';
// What chainperf sends to a node it did not start: method classes of both
// chain families, the policy, the scenario refused before anything is sent,
// and the recording proxy's tally and ./run.sh mix marking what is not a read.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { methodClass: eth } = require('../../src/chains/ethereum/method-classes');
const { methodClass: dot } = require('../../src/chains/substrate/method-classes');
const { classifyAnyChain } = require('../../src/chains/method-classes');
const { refusedMethods, describeRefused } = require('../../src/workload/safety');
const { resolveScenario } = require('../../src/scenario/resolve');
const { formatTally } = require('../../src/record/capture');
const { deriveMix, mixYaml } = require('../../src/record/mix');
const chains = require('../../src/chains');
const { tmpDir, writeScenario } = require('../helpers');

const kernel = { cgroup: 1, memory: true, blkio: true, root: true };
const resolve = (file, env = {}) => resolveScenario(file, { env, cpuCount: 2, kernel });

/** A capture file (./run.sh record's lines) holding these calls. */
function capture(dir, name, calls) {
  const file = path.join(dir, `${name}.jsonl`);
  let t = 1e12;
  const lines = [];
  for (const [method, n] of Object.entries(calls)) {
    for (let i = 0; i < n; i++) lines.push(JSON.stringify({ t: (t += 10), transport: 'http', method, params: [] }));
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('method classes', () => {
  it('ethereum: reads, writes, administration, debug reads, unknown, and the mix entries', () => {
    for (const m of [
      'eth_blockNumber',
      'eth_getLogs',
      'eth_call',
      'net_peerCount',
      'web3_clientVersion',
      'sub.newHeads',
    ])
      assert.equal(eth(m), 'read', m);
    for (const m of ['eth_sendRawTransaction', 'eth_sendTransaction', 'tx.transfer', 'tx.token_transfer'])
      assert.equal(eth(m), 'write', m);
    for (const m of [
      'debug_setHead',
      'admin_addPeer',
      'admin_peers',
      'miner_start',
      'personal_unlockAccount',
      'engine_forkchoiceUpdatedV3',
      'eth_sign',
      'debug_setGCPercent',
    ])
      assert.equal(eth(m), 'admin', m);
    for (const m of ['debug_traceTransaction', 'trace_block', 'debug_getRawBlock', 'debug_storageRangeAt'])
      assert.equal(eth(m), 'debug', m);
    assert.equal(eth('foo_bar'), 'unknown');
  });

  it('substrate: the unsafe RPCs split into administration and debug, submissions are writes', () => {
    for (const m of [
      'chain_getBlock',
      'state_getStorage',
      'state_call',
      'system_health',
      'payment_queryInfo',
      'query.system.account',
      'at.system.events',
      'chain_subscribeNewHeads',
    ])
      assert.equal(dot(m), 'read', m);
    for (const m of ['author_submitExtrinsic', 'author_submitAndWatchExtrinsic', 'balances.transferKeepAlive'])
      assert.equal(dot(m), 'write', m);
    for (const m of ['system_addReservedPeer', 'author_insertKey', 'author_rotateKeys', 'offchain_localStorageSet'])
      assert.equal(dot(m), 'admin', m);
    for (const m of ['system_peers', 'state_traceBlock', 'system_dryRun']) assert.equal(dot(m), 'debug', m);
  });

  it('every mix entry of every shipped workload has a class, and only tx.* and balances.* are not reads', () => {
    const yaml = require('js-yaml');
    const dir = path.join(__dirname, '..', '..', 'workloads');
    for (const f of fs.readdirSync(dir)) {
      const mix = yaml.load(fs.readFileSync(path.join(dir, f), 'utf8')).mix;
      const classify = f.startsWith('dot-') ? dot : eth;
      for (const m of Object.keys(mix)) {
        const expected = /^(tx|balances)\./.test(m) ? 'write' : 'read';
        assert.equal(classify(m), expected, `${f}: ${m}`);
      }
    }
  });

  it('every method a chain can parameterize is a read, its transfers a write', () => {
    for (const chain of new Set(Object.values(chains)))
      for (const m of chain.methods)
        assert.equal(chain.methodClass(m), /^(tx|balances)\./.test(m) ? 'write' : 'read', m);
  });

  it('a method of either family is classed by the family that knows it', () => {
    assert.equal(classifyAnyChain('debug_setHead'), 'admin');
    assert.equal(classifyAnyChain('system_addReservedPeer'), 'admin');
    assert.equal(classifyAnyChain('chain_getHeader'), 'read');
    assert.equal(classifyAnyChain('nope_nope'), 'unknown');
  });
});

describe('what an attached node may be sent', () => {
  const counts = {
    eth_blockNumber: 40,
    debug_setHead: 3,
    eth_sendRawTransaction: 2,
    foo_bar: 1,
    debug_traceTransaction: 1,
  };

  it('refuses everything but reads by default, the administrative first', () => {
    const r = refusedMethods(counts, eth, { allowWrites: false, allowMethods: [] });
    assert.deepEqual(
      r.map((x) => [x.method, x.count, x.cls]),
      [
        ['debug_setHead', 3, 'admin'],
        ['eth_sendRawTransaction', 2, 'write'],
        ['debug_traceTransaction', 1, 'debug'],
        ['foo_bar', 1, 'unknown'],
      ],
    );
    const lines = describeRefused(r, true);
    assert.match(lines[0], /^debug_setHead x3 \(admin: .*never sent to a node chainperf did not start\)$/);
    assert.match(lines[1], /^eth_sendRawTransaction x2 \(write: .*allowed with ALLOW_WRITES=yes\)$/);
    assert.match(lines[3], /ALLOW_METHODS/);
  });

  it('ALLOW_WRITES lets writes through, ALLOW_METHODS names debug and unknown methods, nothing lets administration through', () => {
    const r = refusedMethods(counts, eth, {
      allowWrites: true,
      allowMethods: ['foo_bar', 'debug_traceTransaction', 'debug_setHead'],
    });
    assert.deepEqual(
      r.map((x) => x.method),
      ['debug_setHead'],
    );
  });
});

describe('a scenario against a node chainperf did not start', () => {
  const dir = tmpDir();
  const attach = 'RUNTIME=attach\nRPC_URL=http://127.0.0.1:8545\nNODE_PID=1\n';

  it('a capture holding debug_setHead and transactions is refused, naming each method, its count and the key', () => {
    const cap = capture(dir, 'mixed', { eth_blockNumber: 30, debug_setHead: 3, eth_sendRawTransaction: 2 });
    const { errors, scenario } = resolve(writeScenario(dir, 'r1', `${attach}WORKLOAD=replay:${cap}\n`));
    assert.equal(scenario, null);
    const e = errors.join('\n');
    assert.match(e, /only read methods are sent to a node chainperf did not start/);
    assert.match(e, /debug_setHead x3 \(admin/);
    assert.match(e, /eth_sendRawTransaction x2 \(write.*ALLOW_WRITES=yes/);
    assert.match(e, /nothing was sent/);
    assert.doesNotMatch(e, /eth_blockNumber/);
  });

  it('with ALLOW_WRITES=yes the transactions pass and debug_setHead is still refused', () => {
    const cap = capture(dir, 'mixed2', { eth_blockNumber: 30, debug_setHead: 3, eth_sendRawTransaction: 2 });
    const { errors } = resolve(writeScenario(dir, 'r2', `${attach}WORKLOAD=replay:${cap}\nALLOW_WRITES=yes\n`));
    const e = errors.join('\n');
    assert.match(e, /debug_setHead x3/);
    assert.doesNotMatch(e, /eth_sendRawTransaction x2/);
    const writesOnly = capture(dir, 'writes', { eth_blockNumber: 30, eth_sendRawTransaction: 2 });
    assert.deepEqual(
      resolve(writeScenario(dir, 'r3', `${attach}WORKLOAD=replay:${writesOnly}\nALLOW_WRITES=yes\n`)).errors,
      [],
    );
  });

  it('a capture of reads replays; the same capture with writes replays against a node chainperf starts', () => {
    const reads = capture(dir, 'reads', { eth_blockNumber: 30, eth_getBalance: 4 });
    assert.deepEqual(resolve(writeScenario(dir, 'r4', `${attach}WORKLOAD=replay:${reads}\n`)).errors, []);
    const mixed = capture(dir, 'mixed3', { eth_blockNumber: 30, debug_setHead: 3 });
    assert.deepEqual(resolve(writeScenario(dir, 'r5', `RUNTIME=host\nWORKLOAD=replay:${mixed}\n`)).errors, []);
  });

  it('write workloads and CREATE_HISTORY=yes need ALLOW_WRITES=yes; a Substrate transfer mix too', () => {
    const e1 = resolve(writeScenario(dir, 'w1', `${attach}WORKLOAD=eth-transfers\n`)).errors.join('\n');
    assert.match(e1, /tx\.transfer \(write/);
    assert.doesNotMatch(e1, / x\d/, 'a mix has weights, not counts');
    assert.deepEqual(
      resolve(writeScenario(dir, 'w2', `${attach}WORKLOAD=eth-transfers\nALLOW_WRITES=yes\n`)).errors,
      [],
    );
    assert.match(
      resolve(writeScenario(dir, 'w3', `${attach}CREATE_HISTORY=yes\n`)).errors.join('\n'),
      /CREATE_HISTORY=yes sends transactions.*ALLOW_WRITES=yes/,
    );
    const dotAttach = 'CHAIN=polkadot\nRUNTIME=attach\nRPC_URL=ws://127.0.0.1:9944\nNODE_PID=1\n';
    assert.match(
      resolve(writeScenario(dir, 'w4', `${dotAttach}WORKLOAD=dot-transfers\n`)).errors.join('\n'),
      /balances\.transferKeepAlive \(write/,
    );
    assert.deepEqual(resolve(writeScenario(dir, 'w5', `${dotAttach}WORKLOAD=dot-default\n`)).errors, []);
  });

  it('ALLOW_METHODS refuses an administrative method and what is not a method name', () => {
    const e = resolve(
      writeScenario(dir, 'm1', `${attach}ALLOW_METHODS=debug_traceTransaction, admin_addPeer,a b\n`),
    ).errors.join('\n');
    assert.match(e, /admin_addPeer administers or changes the node/);
    assert.match(e, /"a b" is not a method name/);
    assert.doesNotMatch(e, /debug_traceTransaction/);
  });
});

describe('record and mix mark what is not a read', () => {
  const tally = {
    requests: 36,
    errors: 0,
    batches: 0,
    notifications: 0,
    methods: {
      eth_blockNumber: { requests: 30 },
      debug_setHead: { requests: 4 },
      eth_sendRawTransaction: { requests: 2 },
    },
  };

  it('the tally marks each method that is not a read with its class', () => {
    const lines = formatTally(tally);
    assert.equal(
      lines.find((l) => l.includes('eth_blockNumber')),
      '  eth_blockNumber: 30',
    );
    assert.match(
      lines.find((l) => l.includes('debug_setHead')),
      /\[admin: administers or changes the node\]$/,
    );
    assert.match(
      lines.find((l) => l.includes('eth_sendRawTransaction')),
      /\[write: sends transactions\]$/,
    );
    assert.match(lines[lines.length - 1], /^2 of these methods are not reads/);
  });

  it('mix leaves writes and administration out; --writes yes turns transactions into tx.transfer', () => {
    const lines = [];
    let t = 0;
    for (const [m, n] of Object.entries({ eth_blockNumber: 6, debug_setHead: 2, eth_sendRawTransaction: 2 }))
      for (let i = 0; i < n; i++) lines.push({ t: (t += 5), method: m, params: [] });
    const plain = deriveMix(lines);
    assert.deepEqual(plain.mix, { eth_blockNumber: 100 });
    assert.deepEqual(plain.not_in_mix, ['debug_setHead', 'eth_sendRawTransaction']);
    assert.match(
      mixYaml(plain, { source: 'c.jsonl' }),
      /debug_setHead: admin, eth_sendRawTransaction: write, --writes yes/,
    );
    const withWrites = deriveMix(lines, { writes: true });
    assert.deepEqual(withWrites.mix, { eth_blockNumber: 75, 'tx.transfer': 25 });
    assert.deepEqual(withWrites.not_in_mix, ['debug_setHead']);
  });
});
