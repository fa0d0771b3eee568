'use strict';
// Substrate: client command lines, scenario keys and their cross-checks,
// operations and their parameters, the funded genesis, and how the processor
// counts every JSON-RPC call (with a fake provider; the real one is in the
// integration test).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, tmpDir, writeScenario } = require('../helpers');
const { resolveScenario } = require('../../src/scenario/resolve');
const clients = require('../../src/clients');
const chains = require('../../src/chains');
const { peerSplit } = require('../../src/clients/substrate-cli');
const { OPS, METHODS, pickParams, missingForMix } = require('../../src/chains/substrate/ops');
const {
  accountKey,
  accountInfo,
  fundedSpec,
  specWithoutBootNodes,
  devUris,
  keyring,
  TOTAL_ISSUANCE,
  FUNDS,
} = require('../../src/chains/substrate/accounts');
const { wsUrl, httpUrl } = require('../../src/chains/substrate/url');
const { classifySubstrateError, instrument, unmemoizeRpcCore } = require('../../src/workload/processors/substrate-rpc');
const { newRecorder } = require('../../src/workload/samples');
const { mergeSubstrate } = require('../../src/chains/substrate/window');
const { seededRandom } = require('../../src/util/random');
const { loadMix } = require('../../src/workload/artillery');

const resolve = (file, env = {}) => resolveScenario(file, { env, cpuCount: 2 });
const where = { dataDir: '/data', ports: { rpc: 9944, metrics: 9615, p2p: 30333 }, chainSpec: '/specs/bh.json' };
/** The value following flag in args. */
const flag = (args, name) => {
  const i = args.indexOf(name);
  assert.ok(i >= 0, `${name} in ${args.join(' ')}`);
  return args[i + 1];
};

describe('Substrate client command lines', () => {
  const scenario = (over = {}) => {
    const dir = tmpDir();
    const { scenario: s, errors } = resolve(
      writeScenario(dir, 's', 'CHAIN=polkadot\nCLIENT=polkadot-omni-node\n'),
      over,
    );
    assert.deepEqual(errors, []);
    return s;
  };

  it("polkadot-omni-node: the scenario's cache, trie cache, peers, database, RPC limits and Prometheus port", () => {
    const s = scenario({
      DB_CACHE_MB: '32',
      TRIE_CACHE_MB: '256',
      PEERS: '50',
      DB_ENGINE: 'paritydb',
      CONCURRENCY: '400',
    });
    const cmd = clients['polkadot-omni-node'].command(s, where);
    const a = cmd.args;
    assert.equal(flag(a, '--chain'), '/specs/bh.json');
    assert.equal(flag(a, '--base-path'), '/data');
    assert.equal(flag(a, '--db-cache'), '32');
    assert.equal(flag(a, '--trie-cache-size'), String(256 * 1024 * 1024), 'bytes');
    assert.equal(flag(a, '--in-peers'), '25');
    assert.equal(flag(a, '--out-peers'), '25');
    assert.equal(flag(a, '--database'), 'paritydb');
    assert.equal(flag(a, '--rpc-port'), '9944');
    assert.ok(Number(flag(a, '--rpc-max-connections')) >= 800, 'above 2 x CONCURRENCY, far above the default 100');
    assert.equal(flag(a, '--prometheus-port'), '9615');
    assert.equal(flag(a, '--dev-block-time'), '2000', 'DEV_BLOCK_TIME_S in ms');
    assert.ok(!a.includes('--rpc-external') && !a.includes('--prometheus-external'), 'on the host: 127.0.0.1 only');
    assert.equal(cmd.rpcUrl, 'ws://127.0.0.1:9944');
    assert.deepEqual(cmd.metrics, { target: '127.0.0.1:9615', path: '/metrics' });
  });

  it('in a container (external) RPC and Prometheus listen beyond loopback', () => {
    const a = clients['polkadot-omni-node'].command(scenario(), { ...where, external: true }).args;
    assert.ok(a.includes('--rpc-external') && a.includes('--prometheus-external'));
    const p = clients.polkadot.command(scenario({ CLIENT: 'polkadot' }), {
      ...where,
      chainSpec: 'kusama',
      external: true,
    }).args;
    assert.equal(flag(p, '--chain'), 'kusama');
    assert.ok(p.includes('--rpc-external'));
  });

  it('splits PEERS between inbound and outbound so they add up', () => {
    for (const n of [0, 1, 4, 5, 50]) {
      const p = peerSplit(n);
      assert.equal(p.in + p.out, n);
      assert.ok(p.in >= p.out);
    }
  });

  it('chopsticks: genesis mode on the chain spec, loopback, no metrics, blocks on request, labelled a development server', () => {
    const s = scenario({ CLIENT: 'chopsticks' });
    assert.equal(s.CLIENT_VERSION, '1.5.1');
    const cmd = clients.chopsticks.command(s, where);
    assert.equal(flag(cmd.args, '--genesis'), '/specs/bh.json');
    assert.equal(flag(cmd.args, '--host'), '127.0.0.1');
    assert.equal(flag(cmd.args, '--port'), '9944');
    assert.equal(cmd.metrics, null);
    assert.equal(clients.chopsticks.newBlockMethod, 'dev_newBlock');
    assert.match(
      clients.chopsticks.warning,
      /chopsticks is a development server, not a node: its figures are not a node's/,
    );
    assert.equal(clients.chopsticks.kind, 'development server');
  });

  it('CLIENT_BIN is used as given, and a missing one is an error naming it', async () => {
    const s = scenario({ CLIENT_BIN: '/nonexistent/polkadot-omni-node' });
    await assert.rejects(
      clients['polkadot-omni-node'].ensureBinary(s, () => {}),
      /CLIENT_BIN: no such file: \/nonexistent\/polkadot-omni-node/,
    );
    await assert.rejects(
      clients.polkadot.ensureBinary(scenario({ CLIENT: 'polkadot' }), () => {}),
      /set CLIENT_BIN/,
    );
  });

  it('without cargo, building polkadot-omni-node fails saying so', async () => {
    const s = scenario();
    const saved = { PATH: process.env.PATH, HOME: process.env.HOME, CHAINPERF_CACHE: process.env.CHAINPERF_CACHE };
    process.env.PATH = '/nonexistent';
    process.env.HOME = tmpDir();
    process.env.CHAINPERF_CACHE = tmpDir();
    try {
      await assert.rejects(
        clients['polkadot-omni-node'].ensureBinary(s, () => {}),
        /cargo is not installed/,
      );
    } finally {
      Object.assign(process.env, saved);
    }
  });
});

describe('Substrate scenario keys', () => {
  let dir;
  before(() => {
    dir = tmpDir();
  });

  it('every shipped Substrate scenario resolves; chain and client defaults fill the rest', () => {
    for (const name of [
      'polkadot-dev',
      'polkadot-omni-dev',
      'polkadot-transfers',
      'substrate-cache-32',
      'substrate-cache-1024',
      'substrate-peers-4',
      'substrate-peers-50',
    ]) {
      const { scenario: s, errors } = resolve(path.join(ROOT, 'scenarios', `${name}.env`));
      assert.deepEqual(errors, [], name);
      assert.equal(s.CHAIN, 'polkadot');
      assert.equal(s.DB_ENGINE, 'rocksdb', `${name}: the Substrate clients' default engine`);
    }
    const attach = resolve(path.join(ROOT, 'scenarios', 'kusama-synced.env'), {
      RPC_URL: 'ws://127.0.0.1:9944',
      NODE_PID: '1',
    });
    assert.deepEqual(attach.errors, []);
    assert.equal(attach.scenario.CHAIN, 'kusama');
  });

  it('the seed study pairs differ in their one key', () => {
    const s = (n) => resolve(path.join(ROOT, 'scenarios', `${n}.env`)).scenario;
    assert.deepEqual([s('substrate-cache-32').DB_CACHE_MB, s('substrate-cache-1024').DB_CACHE_MB], [32, 1024]);
    assert.deepEqual([s('substrate-peers-4').PEERS, s('substrate-peers-50').PEERS], [4, 50]);
  });

  it("kusama defaults to the Kusama bridge hub spec, polkadot to Polkadot's", () => {
    assert.equal(resolve(writeScenario(dir, 'k', 'CHAIN=kusama\n')).scenario.CHAIN_SPEC, 'bridge-hub-kusama');
    const p = resolve(writeScenario(dir, 'p', 'CHAIN=polkadot\n'));
    assert.equal(p.scenario.CHAIN_SPEC, 'bridge-hub-polkadot');
    assert.equal(p.scenario.CLIENT, 'chopsticks');
    assert.equal(p.scenario.WORKLOAD, 'dot-default');
    assert.equal(p.sources.CHAIN_SPEC, 'chain default');
  });

  it('DB_ENGINE must fit the client', () => {
    const a = resolve(writeScenario(dir, 'a', 'CHAIN=polkadot\nCLIENT=polkadot-omni-node\nDB_ENGINE=pebble\n'));
    assert.match(a.errors.join('\n'), /a\.env:3: DB_ENGINE: polkadot-omni-node takes rocksdb \| paritydb, not pebble/);
    const b = resolve(writeScenario(dir, 'b', 'CHAIN=ethereum\nDB_ENGINE=paritydb\n'));
    assert.match(b.errors.join('\n'), /DB_ENGINE: geth takes pebble \| leveldb, not paritydb/);
    assert.deepEqual(resolve(writeScenario(dir, 'c', 'CHAIN=kusama\nDB_ENGINE=paritydb\n')).errors, []);
  });

  it('GENERATOR=lean is refused for Substrate chains with the reason', () => {
    const { errors } = resolve(writeScenario(dir, 'l', 'CHAIN=polkadot\nGENERATOR=lean\n'));
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(
      errors[0],
      /l\.env:2: GENERATOR=lean .* does not serve CHAIN=polkadot yet; Substrate chains are measured through @polkadot\/api over WebSocket/,
    );
  });

  it('CHAIN_SPEC: a shipped name (with a suggestion when misspelt), an existing file, and the right network', () => {
    assert.match(
      resolve(writeScenario(dir, 'n', 'CHAIN=polkadot\nCHAIN_SPEC=bridge-hub-polkadott\n')).errors.join('\n'),
      /CHAIN_SPEC: expected a path .* got "bridge-hub-polkadott" \(did you mean bridge-hub-polkadot\?\)/,
    );
    assert.match(
      resolve(writeScenario(dir, 'f', 'CHAIN=polkadot\nCHAIN_SPEC=./nope/spec.json\n')).errors.join('\n'),
      /CHAIN_SPEC: no such file: \.\/nope\/spec\.json/,
    );
    assert.match(
      resolve(writeScenario(dir, 'w', 'CHAIN=polkadot\nCHAIN_SPEC=bridge-hub-kusama\n')).errors.join('\n'),
      /bridge-hub-kusama is a kusama chain, not polkadot; set CHAIN=kusama/,
    );
    assert.match(
      resolve(writeScenario(dir, 'r', 'CHAIN=kusama\nCHAIN_SPEC=asset-hub-westend\n')).errors.join('\n'),
      /set CHAIN=substrate/,
    );
    assert.deepEqual(resolve(writeScenario(dir, 's', 'CHAIN=substrate\nCHAIN_SPEC=asset-hub-westend\n')).errors, []);
    const file = path.join(dir, 'mine.json');
    fs.writeFileSync(file, '{}');
    assert.deepEqual(resolve(writeScenario(dir, 'm', `CHAIN=polkadot\nCHAIN_SPEC=${file}\n`)).errors, []);
  });

  it('Substrate keys are refused on an EVM chain (whose ws:// endpoint means TRANSPORT=ws)', () => {
    const { errors } = resolve(
      writeScenario(dir, 'e', 'CHAIN=ethereum\nTRIE_CACHE_MB=64\nCHAIN_SPEC=bridge-hub-polkadot\n'),
    );
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.match(errors.join('\n'), /TRIE_CACHE_MB is only used with Substrate chains/);
    const ws = resolve(
      writeScenario(dir, 'ws', 'CHAIN=ethereum\nRUNTIME=attach\nRPC_URL=ws://127.0.0.1:8546\nNODE_PID=1\n'),
    );
    assert.deepEqual(ws.errors, []);
    assert.equal(ws.scenario.TRANSPORT, 'ws');
  });

  it('a client serves only its chains', () => {
    assert.match(
      resolve(writeScenario(dir, 'x', 'CHAIN=polkadot\nCLIENT=geth\n')).errors.join('\n'),
      /CLIENT: geth does not serve CHAIN=polkadot/,
    );
    assert.match(
      resolve(writeScenario(dir, 'y', 'CHAIN=ethereum\nCLIENT=chopsticks\n')).errors.join('\n'),
      /CLIENT: chopsticks does not serve CHAIN=ethereum/,
    );
  });

  it('attach to a Substrate node needs NODE_PID: it exports no process CPU counter', () => {
    const { errors } = resolve(
      writeScenario(
        dir,
        't',
        'CHAIN=kusama\nCLIENT=polkadot\nRUNTIME=attach\nRPC_URL=wss://rpc.example:443\nMETRICS_URL=http://127.0.0.1:9615/metrics\n',
      ),
    );
    assert.match(errors.join('\n'), /polkadot exports no process CPU counter chainperf knows: give NODE_PID/);
  });

  it('WORKLOAD=method:<operation> takes the Substrate operations, with a suggestion', () => {
    assert.deepEqual(resolve(writeScenario(dir, 'o', 'CHAIN=polkadot\nWORKLOAD=method:at.system.events\n')).errors, []);
    assert.match(
      resolve(writeScenario(dir, 'q', 'CHAIN=polkadot\nWORKLOAD=method:chain_getBlok\n')).errors.join('\n'),
      /did you mean method:chain_getBlock\?/,
    );
  });
});

describe('Substrate operations and their parameters', () => {
  const POOL = {
    head: 3,
    blocks: [0, 1, 2, 3].map((n) => ({ number: n, hash: `0x${String(n).repeat(64)}` })),
    state_blocks: [2, 3].map((n) => ({ number: n, hash: `0x${String(n).repeat(64)}` })),
    accounts: [
      { address: '5A', free: '1' },
      { address: '5B', free: '2' },
    ],
    signers: ['//Alice'],
    payment_extrinsics: ['0x01', '0x02'],
    ss58_format: 0,
  };

  it("the shipped mixes name only operations chainperf knows, and the default mix has the issue's calls", () => {
    for (const w of ['dot-default', 'dot-transfers']) {
      for (const op of Object.keys(loadMix(w))) assert.ok(OPS[op], `${w}: ${op}`);
    }
    const mix = loadMix('dot-default');
    for (const op of [
      'chain_getBlockHash',
      'chain_getBlock',
      'chain_getHeader',
      'query.system.account',
      'at.system.account',
      'at.system.events',
      'state_getRuntimeVersion',
      'payment_queryInfo',
      'chain_subscribeNewHeads',
    ])
      assert.ok(mix[op] > 0, op);
    assert.deepEqual(Object.keys(loadMix('dot-transfers')), ['balances.transferKeepAlive']);
    assert.deepEqual(chains.polkadot.methods, METHODS);
  });

  it('draws every parameter from the pool, the same sequence for the same seed', () => {
    const draw = (seed) => {
      const r = seededRandom(seed);
      return METHODS.map((op) => pickParams(op, POOL, r));
    };
    assert.deepEqual(draw(7), draw(7));
    const r = seededRandom(3);
    for (let i = 0; i < 200; i++) {
      const n = pickParams('chain_getBlockHash', POOL, r).number;
      assert.ok(POOL.blocks.some((b) => b.number === n));
      const h = pickParams('at.system.events', POOL, r).hash;
      assert.ok(
        POOL.state_blocks.some((b) => b.hash === h),
        'historical state only from state_blocks',
      );
      for (const op of ['chain_getHeader', 'chain_getBlock']) {
        const b = pickParams(op, POOL, r).hash;
        assert.ok(
          POOL.state_blocks.some((x) => x.hash === b),
          `${op}: a block whose runtime version a pruning node still has`,
        );
      }
      const a = pickParams('at.system.account', POOL, r);
      assert.ok(POOL.state_blocks.some((b) => b.hash === a.hash) && POOL.accounts.some((x) => x.address === a.address));
      const x = pickParams('payment_queryInfo', POOL, r).extrinsic;
      assert.ok(POOL.payment_extrinsics.includes(x));
      const t = pickParams('balances.transferKeepAlive', POOL, r);
      assert.ok(BigInt(t.amount) >= 1_000_000_000n);
    }
    assert.throws(() => pickParams('eth_call', POOL, r), /no Substrate operation eth_call/);
  });

  it('names what a mix needs that the pool lacks: transfers need funded signers', () => {
    assert.deepEqual(missingForMix(POOL, METHODS), []);
    const noSigners = { ...POOL, signers: [] };
    const miss = missingForMix(noSigners, ['balances.transferKeepAlive', 'chain_getBlock']);
    assert.equal(miss.length, 1);
    assert.match(miss[0], /balances\.transferKeepAlive needs signers \(funded dev accounts/);
  });

  it('ws:// for the workload, http:// for control calls, on the same port', () => {
    assert.equal(wsUrl('http://127.0.0.1:9944'), 'ws://127.0.0.1:9944');
    assert.equal(wsUrl('https://rpc.example/x'), 'wss://rpc.example/x');
    assert.equal(httpUrl('wss://rpc.example/x'), 'https://rpc.example/x');
    assert.equal(httpUrl('ws://127.0.0.1:1'), 'http://127.0.0.1:1');
  });
});

describe('a genesis that funds the dev accounts', () => {
  it("the storage key of Alice's System.Account is the well-known one", async () => {
    const ring = await keyring(42);
    assert.equal(
      accountKey(ring.addFromUri('//Alice').publicKey),
      '0x26aa394eea5630e07c48ae0c9558cef7b99d880ec681799c0cf30e8886371da9de1e86a9a8c739864cf3cc5ec2bea59fd43593c715fdd31c61141abd04a99fd6822c8558854ccde39a5684e7a56da27d',
    );
  });

  it('AccountInfo: nonce 0, one provider, the funds in free, 80 bytes', () => {
    const hex = accountInfo(5n);
    assert.equal(hex.length, 2 + 160);
    assert.equal(hex.slice(2, 34), `${'00'.repeat(8)}01000000${'00'.repeat(4)}`);
    assert.equal(hex.slice(34, 66), `05${'00'.repeat(15)}`);
  });

  it('adds the dev accounts and raises the total issuance by what it added, leaving the rest', async () => {
    const dir = tmpDir();
    const src = path.join(dir, 'spec.json');
    const ti = `0x${'00'.repeat(15)}0a`.replace(/^0x(.*)0a$/, '0x0a$1'); // 10, little-endian u128
    fs.writeFileSync(
      src,
      JSON.stringify({
        name: 'T',
        id: 't',
        properties: { ss58Format: 0 },
        bootNodes: ['/dns/boot.example/tcp/30333/p2p/12D3KooWA', '/dns/boot2.example/tcp/30333/p2p/12D3KooWB'],
        genesis: { raw: { top: { '0x3a636f6465': '0x00', [TOTAL_ISSUANCE]: ti }, childrenDefault: {} } },
      }),
    );
    const out = path.join(dir, 'out.json');
    const r = await fundedSpec(src, out, { accounts: 3 });
    assert.equal(r.funded, 6 + 3);
    assert.equal(r.bootNodes, 2);
    assert.deepEqual(JSON.parse(fs.readFileSync(out, 'utf8')).bootNodes, [], "no live chain's node to dial");
    const copy = path.join(dir, 'copy.json');
    assert.equal(specWithoutBootNodes(src, copy), 2);
    const { bootNodes, ...rest } = JSON.parse(fs.readFileSync(copy, 'utf8'));
    assert.deepEqual(bootNodes, []);
    const { bootNodes: had, ...before } = JSON.parse(fs.readFileSync(src, 'utf8'));
    assert.deepEqual(rest, before, 'the rest of the spec as it was');
    assert.equal(had.length, 2, 'the source is not written');
    const top = JSON.parse(fs.readFileSync(out, 'utf8')).genesis.raw.top;
    assert.equal(top['0x3a636f6465'], '0x00', 'the runtime is kept');
    const ring = await keyring(0);
    for (const uri of devUris(3))
      assert.equal(top[accountKey(ring.addFromUri(uri).publicKey)], accountInfo(FUNDS), uri);
    const issued = Buffer.from(top[TOTAL_ISSUANCE].slice(2), 'hex').reverse().toString('hex');
    assert.equal(BigInt(`0x${issued}`), 10n + 9n * FUNDS);
    await assert.rejects(fundedSpec(out.replace('out', 'nope'), out, { accounts: 1 }), /ENOENT/);
  });
});

describe('Substrate processor: every JSON-RPC call counted at the provider', () => {
  it("records each call by its method, bypasses the provider's cache, and classifies failures", async () => {
    // The window around now, when the test runs (mocha loads every file first: a window drawn then may be over).
    const spec = { start_at: Date.now() - 1000, end_at: Date.now() + 60000 };
    const seen = [];
    const fake = {
      send(method, params, isCacheable) {
        seen.push({ method, isCacheable });
        if (method === 'bad')
          return Promise.reject(Object.assign(new Error('-32602: Invalid params'), { code: -32602 }));
        if (method === 'slow') return Promise.reject(new Error('No response received from RPC endpoint in 10s'));
        if (method === 'gone') return Promise.reject(new Error('WebSocket is not connected'));
        return Promise.resolve('0x1');
      },
    };
    const recorder = newRecorder(spec, 'w');
    const calls = [];
    instrument(fake, recorder, (method, ms, failure) => {
      calls.push({ method, failure });
      recorder.completed(method, ms, failure, Date.now());
    });
    await fake.send('chain_getBlock', ['0xab'], true);
    await fake.send('chain_getBlock', ['0xab'], true);
    for (const m of ['bad', 'slow', 'gone']) await assert.rejects(fake.send(m, []));
    assert.deepEqual(
      seen.map((x) => x.isCacheable),
      [false, false, false, false, false],
      'never from the cache',
    );
    assert.deepEqual(
      calls.map((c) => c.failure && c.failure.kind),
      [null, null, 'rpc', 'timeout', 'other'],
    );
    assert.equal(calls[2].failure.message, 'JSON-RPC -32602: Invalid params');
    const snap = recorder.snapshot();
    const methods = Object.values(snap.seconds).reduce((o, bySec) => ({ ...o, ...bySec }), {});
    assert.equal(
      Object.values(snap.seconds).reduce((n, s) => n + (s.chain_getBlock ? s.chain_getBlock.lat.length : 0), 0),
      2,
      'two identical calls, two requests',
    );
    assert.ok(methods.bad.failed.rpc === 1);
    assert.equal(snap.in_flight_at_end, 0);
  });

  it('classifies errors as the samples record them', () => {
    assert.equal(
      classifySubstrateError(Object.assign(new Error('1010: Invalid Transaction'), { code: 1010 })).kind,
      'rpc',
    );
    assert.equal(classifySubstrateError(new Error('No response received from RPC endpoint in 60s')).kind, 'timeout');
    assert.equal(classifySubstrateError('boom').kind, 'other');
  });

  it("turns off rpc-core's sharing of identical calls, and fails loudly on an rpc-core without it", () => {
    class Core {
      _memomize() {
        return 'memoized';
      }
    }
    unmemoizeRpcCore(Core);
    let made = 0;
    const call = new Core()._memomize(
      (isScale) => {
        made++;
        const f = () => isScale;
        return f;
      },
      { method: 'x' },
    );
    assert.equal(made, 2);
    assert.equal(call(), true);
    assert.equal(call.raw(), false);
    assert.doesNotThrow(() => call.unmemoize('a'));
    assert.throws(() => unmemoizeRpcCore(class {}), /no _memomize/);
    // the real rpc-core still has what is replaced
    assert.equal(typeof require('@polkadot/rpc-core').RpcCore.prototype._memomize, 'function');
  });

  it('merges operations, notifications and transactions of several workers', () => {
    const part = (ok, inc) => ({
      substrate: {
        ops: { 'at.system.events': { ok, failed: 1 } },
        op_errors: { 'x: y': 1 },
        notifications: 3,
        tx: { submitted: 2, included: inc.length, failed: 0, inclusion_ms: inc, errors: {} },
      },
    });
    const m = mergeSubstrate([part(5, [100, 300]), part(7, [200]), {}], 10);
    assert.deepEqual(m.operations, { 'at.system.events': { ok: 12, failed: 2 } });
    assert.equal(m.operations_ok, 12);
    assert.equal(m.notifications, 6);
    assert.equal(m.transactions.included, 3);
    assert.equal(m.transactions.tps, 0.3);
    assert.equal(m.transactions.inclusion_latency_ms.p50, 200);
    assert.equal(m.operation_errors['x: y'], 2);
    assert.equal(mergeSubstrate([{}], 10), null);
  });
});
