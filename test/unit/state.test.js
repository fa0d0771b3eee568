'use strict';
const assert = require('node:assert/strict');
const { ethers } = require('ethers');
const { drawer, statePool, HOT_SHARE, HOT_DRAWS } = require('../../src/state/pool');
const P = require('../../src/state/profiles');
const { seededRandom } = require('../../src/util/random');
const { paramsFor } = require('../../src/chains/ethereum/params');
const { missingForMix } = require('../../src/chains/ethereum/harvest');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const N = 10000;
const counts = (draws, n) => {
  const c = new Array(n).fill(0);
  for (const i of draws) c[i]++;
  return c;
};

describe('STATE parameter distributions', () => {
  it('uniform: every index in [0, n) about equally often, over the whole range', () => {
    const d = drawer(N, 'uniform', seededRandom(1));
    const draws = Array.from({ length: 200000 }, d);
    assert.ok(draws.every((i) => Number.isInteger(i) && i >= 0 && i < N));
    const c = counts(draws, N);
    // tenths of the range each get about a tenth of the draws
    for (let t = 0; t < 10; t++) {
      const share = c.slice((t * N) / 10, ((t + 1) * N) / 10).reduce((a, b) => a + b, 0) / draws.length;
      assert.ok(Math.abs(share - 0.1) < 0.01, `tenth ${t}: ${share}`);
    }
  });

  it('skewed: 90% of draws fall on a hot tenth spread over the range, 10% on the cold rest', () => {
    const d = drawer(N, 'skewed', seededRandom(2));
    const draws = Array.from({ length: 200000 }, d);
    const c = counts(draws, N);
    const sorted = [...c].sort((a, b) => b - a);
    const hot = sorted.slice(0, N * HOT_SHARE).reduce((a, b) => a + b, 0) / draws.length;
    assert.ok(Math.abs(hot - HOT_DRAWS) < 0.01, `hot share ${hot}`);
    assert.ok(c.filter((x) => x > 0).length > N * 0.85, 'the cold items are drawn too');
    // spread: the hot items are not one contiguous block
    const hotIdx = c
      .map((x, i) => [x, i])
      .sort((a, b) => b[0] - a[0])
      .slice(0, N * HOT_SHARE)
      .map(([, i]) => i);
    assert.ok(Math.min(...hotIdx) < N * 0.1 && Math.max(...hotIdx) > N * 0.9, 'hot items across the whole range');
  });

  it('a state pool draws accounts and slots for each request over the whole state, not from its list', () => {
    const manifest = {
      profile: 'large',
      accounts: 6000000,
      slots: 11000000,
      storage_contract: P.STORAGE_CONTRACT,
      logger: `0x${'22'.repeat(20)}`,
      signers: P.signerWallets()
        .slice(0, 4)
        .map((w) => w.address),
      history: { last_block: 300, calls: 5 },
    };
    const pool = statePool(manifest, [ethers.id('tx')], { distribution: 'uniform', seed: 1, head: 320, size: 100 });
    assert.deepEqual(pool.state_space, { accounts: 6000000, slots: 11000000, distribution: 'uniform' });
    const r = seededRandom(5);
    const slots = Array.from({ length: 20000 }, () => Number(BigInt(paramsFor('eth_getStorageAt', pool, r)[1])));
    assert.ok(slots.every((i) => Number.isInteger(i) && i >= 0 && i < 11000000));
    assert.ok(new Set(slots).size > 19900, 'almost every draw a different slot');
    assert.ok(Math.max(...slots) > 10000000 && Math.min(...slots) < 1000000, 'over the whole range');
    const listed = new Set(pool.addresses.map((a) => a.toLowerCase()));
    const accounts = Array.from({ length: 2000 }, () => paramsFor('eth_getBalance', pool, r)[0]);
    assert.ok(accounts.filter((a) => !listed.has(a)).length > 1990, "accounts beyond the pool's list");
    // each is account i of the state for some i: check a sample against the derivation
    const byAddress = new Map(Array.from({ length: 50000 }, (_, i) => [P.accountAddressLower(i), i]));
    const small = statePool({ ...manifest, accounts: 50000 }, [ethers.id('tx')], {
      distribution: 'uniform',
      seed: 1,
      head: 320,
      size: 100,
    });
    assert.ok(
      Array.from({ length: 500 }, () => paramsFor('eth_getBalance', small, r)[0]).every((a) => byAddress.has(a)),
    );
    // a pool without a state space (the dev chain's harvest) still picks from its lists
    const devPool = { ...pool, state_space: undefined };
    assert.ok(listed.has(paramsFor('eth_getBalance', devPool, r)[0].toLowerCase()));
  });

  it("skewed toward recent: the hot tenth is the highest indices (the chain's head)", () => {
    const d = drawer(N, 'skewed', seededRandom(3), 'recent');
    const draws = Array.from({ length: 100000 }, d);
    const recent = draws.filter((i) => i >= N * 0.9).length / draws.length;
    assert.ok(Math.abs(recent - HOT_DRAWS) < 0.01, `recent share ${recent}`);
  });

  it('a pool is drawn from the manifest: real addresses and slots, blocks of the whole history, repeatable by SEED', function () {
    this.timeout(30000);
    const manifest = {
      profile: 'small',
      accounts: 1000,
      slots: 500,
      storage_contract: P.STORAGE_CONTRACT,
      logger: `0x${'22'.repeat(20)}`,
      signers: P.signerWallets()
        .slice(0, 4)
        .map((w) => w.address),
      history: { last_block: 300, calls: 5 },
    };
    const txs = Array.from({ length: 50 }, (_, i) => ethers.id(`tx${i}`));
    const pool = statePool(manifest, txs, { distribution: 'uniform', seed: 1, head: 320, size: 2000 });
    const addrSet = new Set(Array.from({ length: 1000 }, (_, i) => P.accountAddress(i)));
    assert.ok(pool.addresses.every((a) => addrSet.has(a)));
    assert.ok(new Set(pool.addresses).size > 800, 'across the whole state');
    const slotSet = new Set(Array.from({ length: 500 }, (_, i) => P.slotKey(i)));
    assert.ok(pool.storage_slots.every((k) => slotSet.has(k)));
    assert.ok(
      pool.blocks.every((b) => b >= 1 && b <= 300) && Math.min(...pool.blocks) < 20 && Math.max(...pool.blocks) > 280,
    );
    assert.ok(pool.tx_hashes.every((h) => txs.includes(h)));
    assert.deepEqual(statePool(manifest, txs, { distribution: 'uniform', seed: 1, head: 320, size: 2000 }), pool);
    assert.notDeepEqual(
      statePool(manifest, txs, { distribution: 'skewed', seed: 1, head: 320, size: 2000 }).addresses,
      pool.addresses,
    );
    assert.deepEqual(
      missingForMix(pool, [
        'eth_getStorageAt',
        'eth_getBalance',
        'eth_call',
        'eth_getLogs',
        'eth_getTransactionReceipt',
      ]),
      [],
    );
    const [to, slot] = paramsFor('eth_getStorageAt', pool, seededRandom(4));
    assert.equal(to, P.STORAGE_CONTRACT);
    assert.ok(slotSet.has(slot));
  });

  it('profiles: small is small; every item derives from its index', () => {
    assert.ok(P.PROFILES.small.accounts <= 50000);
    assert.equal(P.accountAddress(7), P.accountAddress(7));
    assert.notEqual(P.accountAddress(7), P.accountAddress(8));
    assert.match(P.slotKey(3), /^0x[0-9a-f]{64}$/);
  });

  it('account i and slot i are what StateStore derives on chain: keccak256(abi.encode(i))[12:] and the slot numbered i', () => {
    const abi = ethers.AbiCoder.defaultAbiCoder();
    for (const i of [0, 1, 12345, 5999999]) {
      const onChain = ethers.getAddress(`0x${ethers.keccak256(abi.encode(['uint256'], [i])).slice(-40)}`);
      assert.equal(P.accountAddress(i), onChain);
      assert.equal(BigInt(P.slotKey(i)), BigInt(i));
    }
    for (const p of Object.values(P.PROFILES)) {
      assert.ok(
        Number.isInteger(p.fill_accounts) && Number.isInteger(p.fill_slots),
        'every profile says what it fills',
      );
    }
    assert.equal(P.STORAGE_CODE, P.STORE.deployedBytecode);
  });
});

describe('STATE keys', () => {
  const V1 = { version: 1, memory: true, memsw: true, blkio: true, writable: true };
  const resolve = (text, env = {}) =>
    resolveScenario(writeScenario(tmpDir(), 'st', text), { env, cpuCount: 2, kernel: V1, dockerEngine: null });

  it('accepts a profile with geth on the host or compose, and dev by default', () => {
    assert.deepEqual(resolve('RUNTIME=host\nSTATE=small\nSTATE_DISTRIBUTION=skewed\n').errors, []);
    assert.equal(resolve('RUNTIME=host\n').scenario.STATE, 'dev');
  });

  it('refuses a profile in attach, with NODE_VOLUME, and a distribution without a profile', () => {
    assert.match(
      resolve('RUNTIME=attach\nRPC_URL=http://127.0.0.1:1\nNODE_PID=1\nSTATE=small\n').errors.join('\n'),
      /STATE=small is restored into a node chainperf starts/,
    );
    assert.match(
      resolve('RUNTIME=compose\nSTATE=small\nNODE_VOLUME=v\n').errors.join('\n'),
      /NODE_VOLUME and STATE=small both give the node its data/,
    );
    assert.match(
      resolve('RUNTIME=host\nSTATE_DISTRIBUTION=skewed\n').errors.join('\n'),
      /STATE_DISTRIBUTION draws across a STATE profile/,
    );
    assert.match(
      resolve('RUNTIME=host\nSTATE=huge\n').errors.join('\n'),
      /STATE: expected one of dev \| small \| medium \| large/,
    );
  });
});

describe('STATE build failure', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const { ensureState, stateDir } = require('../../src/state/build');

  it("removes the half-built folder and keeps the builder's geth log beside the cache, named in the error", async function () {
    this.timeout(60000);
    const dir = tmpDir();
    // A stand-in geth: everything up to the builder succeeds, then the builder node fails to start.
    const bin = path.join(dir, 'geth');
    fs.writeFileSync(
      bin,
      `#!/bin/sh
case "$*" in
  *dumpgenesis*) echo '{"config":{},"alloc":{}}' ;;
  init*|*"db put"*|*"db compact"*) exit 0 ;;
  *"db get"*) echo "key: 0x${'ab'.repeat(32)}" ;;
  *) echo "Fatal: the builder cannot start"; exit 3 ;;
esac
`,
      { mode: 0o755 },
    );
    const saved = process.env.CHAINPERF_CACHE;
    process.env.CHAINPERF_CACHE = path.join(dir, 'cache');
    try {
      const target = stateDir('small', '0.0.0', 'pebble');
      await assert.rejects(
        ensureState({ profile: 'small', bin, version: '0.0.0', engine: 'pebble', log: () => {} }),
        (err) => {
          assert.match(
            err.message,
            /geth exited \(status 3\) while starting on the new state \(the builder's geth log: (\S+)\)/,
          );
          const kept = /geth log: (\S+)\)/.exec(err.message)[1];
          assert.equal(kept, `${target}.failed-build.log`);
          assert.match(fs.readFileSync(kept, 'utf8'), /Fatal: the builder cannot start/);
          return true;
        },
      );
      const left = fs.readdirSync(path.dirname(target));
      assert.deepEqual(
        left.filter((f) => f.includes('.building-')),
        [],
        'no half-built folder',
      );
      assert.ok(!fs.existsSync(target), 'no state');
    } finally {
      if (saved === undefined) delete process.env.CHAINPERF_CACHE;
      else process.env.CHAINPERF_CACHE = saved;
    }
  });
});

describe('statewriter', () => {
  const { writerArgs, writerUnfit, WRITER_GETH } = require('../../src/state/writer');

  it("writes the profile's items: its accounts, slots and fill slots, the fill accounts after the history's recipients", () => {
    const args = writerArgs(P.PROFILES.large, { dataDir: 'D', engine: 'pebble', genesis: 'G' });
    const flag = (f) => args[args.indexOf(f) + 1];
    assert.equal(flag('-datadir'), 'D');
    assert.equal(flag('-accounts'), '1000000');
    assert.equal(flag('-slots'), '11000000');
    assert.equal(flag('-fill-accounts-from'), '1020000');
    assert.equal(flag('-fill-accounts'), '5000000');
    assert.ok(args.includes('-compact'));
  });

  it('serves only the geth version it is built against, saying why for another', () => {
    assert.equal(WRITER_GETH, require('../../src/clients/geth').defaults.CLIENT_VERSION);
    assert.match(String(writerUnfit('1.16.8')), /not 1\.16\.8's: building through geth init and the node instead/);
  });
});

describe('Substrate STATE profiles', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const { writeStateSpec, compactionsSettled } = require('../../src/chains/substrate/state');
  const {
    stateAccountId,
    stateAccountHex,
    stateIssuance,
    STATE_FREE,
  } = require('../../src/chains/substrate/state-accounts');
  const { accountKey, accountInfo, TOTAL_ISSUANCE } = require('../../src/chains/substrate/accounts');
  const { OPS } = require('../../src/chains/substrate/ops');
  const { u8aToHex, bnToU8a } = require('@polkadot/util');
  const V1 = { version: 1, memory: true, memsw: true, blkio: true, writable: true };
  const resolve = (text) =>
    resolveScenario(writeScenario(tmpDir(), 'st', text), { env: {}, cpuCount: 2, kernel: V1, dockerEngine: null });

  it('the builder waits for RocksDB: settled once every compaction its LOG started has finished', () => {
    const dataDir = tmpDir();
    const db = path.join(dataDir, 'chains', 'x', 'db', 'full');
    fs.mkdirSync(db, { recursive: true });
    const event = (e) =>
      `2026/11/24-13:55:44.291271 30392 EVENT_LOG_v1 {"time_micros": 1, "job": 4, "event": "${e}", "cf_name": "col2"}\n`;
    fs.writeFileSync(
      path.join(db, 'LOG'),
      event('compaction_started') + event('compaction_finished') + event('compaction_started'),
    );
    assert.equal(compactionsSettled(dataDir, 1), false, 'one compaction still running');
    fs.appendFileSync(path.join(db, 'LOG'), event('compaction_finished'));
    assert.equal(compactionsSettled(dataDir, 1), true);
    assert.equal(compactionsSettled(tmpDir(), 1), true, 'no RocksDB LOG: nothing to wait for');
    assert.throws(() => compactionsSettled(dataDir, 601), /compactions had not finished after 600 s/);
  });

  it('state account i: a 32-byte id of its own, the same each time; the issuance is the sum of their balances', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => stateAccountHex(i));
    assert.equal(new Set(ids).size, 1000);
    assert.ok(ids.every((h) => /^0x[0-9a-f]{64}$/.test(h)));
    assert.equal(stateAccountHex(123456789), u8aToHex(stateAccountId(123456789)));
    assert.notEqual(stateAccountHex(256), stateAccountHex(1)); // every byte of the index counts
    let sum = 0n;
    for (let i = 0; i < 1000; i++) sum += STATE_FREE + BigInt(i);
    assert.equal(stateIssuance(1000), sum);
  });

  it('the build spec: the run spec plus one System.Account entry per state account, issuance raised by theirs, valid JSON', async () => {
    const dir = tmpDir();
    const run = path.join(dir, 'run.json');
    const issued = 5n * 10n ** 15n;
    const top = { '0x3a636f6465': '0x0061736d', [TOTAL_ISSUANCE]: u8aToHex(bnToU8a(issued, { bitLength: 128 })) };
    fs.writeFileSync(run, JSON.stringify({ name: 'T', id: 't', genesis: { raw: { top, childrenDefault: {} } } }));
    const out = path.join(dir, 'build.json');
    const n = 4500; // more than one chunk of entries
    const w = await writeStateSpec(run, out, n);
    const text = fs.readFileSync(out, 'utf8');
    assert.equal(w.bytes, Buffer.byteLength(text));
    assert.equal(w.sha256, require('node:crypto').createHash('sha256').update(text).digest('hex'));
    const spec = JSON.parse(text);
    const got = spec.genesis.raw.top;
    assert.equal(Object.keys(got).length, 2 + n);
    assert.equal(got['0x3a636f6465'], '0x0061736d');
    for (const i of [0, 1, 1999, 2000, n - 1])
      assert.equal(got[accountKey(stateAccountId(i))], accountInfo(STATE_FREE + BigInt(i)), `account ${i}`);
    assert.equal(got[TOTAL_ISSUANCE], u8aToHex(bnToU8a(issued + stateIssuance(n), { bitLength: 128 })));
    assert.ok(!text.includes('chainperf"'), 'no marker left');
    assert.deepEqual(spec.genesis.raw.childrenDefault, {});
  });

  it("account operations draw over all of the state's accounts for each request; without a state, from the harvest", () => {
    const n = 40;
    const pool = {
      state_space: { accounts: n, slots: 0, distribution: 'uniform' },
      accounts: [{ address: 'harvested' }],
      state_blocks: [{ hash: '0xb' }],
    };
    const r = seededRandom(3);
    const seen = new Set();
    for (let k = 0; k < 2000; k++) seen.add(OPS['query.system.account'].params(pool, r).address);
    assert.deepEqual([...seen].sort(), Array.from({ length: n }, (_, i) => stateAccountHex(i)).sort());
    assert.equal(OPS['at.system.account'].params(pool, r).hash, '0xb');
    assert.match(OPS['at.system.account'].params(pool, r).address, /^0x[0-9a-f]{64}$/);
    assert.equal(OPS['query.system.account'].params({ accounts: [{ address: 'harvested' }] }, r).address, 'harvested');
  });

  it('keys: polkadot-omni-node takes a profile on the host; compose, and a client that builds none, are refused', () => {
    const base = 'CHAIN=polkadot\nCLIENT=polkadot-omni-node\nSTATE=large\n';
    assert.deepEqual(resolve(`${base}RUNTIME=host\n`).errors, []);
    assert.match(
      resolve(`${base}RUNTIME=compose\n`).errors.join('\n'),
      /with polkadot-omni-node, RUNTIME=host \(RUNTIME is compose\)/,
    );
    assert.match(
      resolve('CHAIN=polkadot\nCLIENT=chopsticks\nSTATE=small\nRUNTIME=host\n').errors.join('\n'),
      /STATE=small is built for geth and polkadot-omni-node \(CLIENT is chopsticks\)/,
    );
  });
});

describe("the generator's seed for each window", () => {
  const { windowSeed } = require('../../src/measure/window');

  it('differs from SEED and between windows, is the same for both sides of an A/B pair, and repeats for the same SEED', () => {
    const names = ['measure', 'rep1', 'rep2', 'pair1-A', 'pair2-A', 'step1', 'method-eth_call'];
    const seeds = names.map((n) => windowSeed(1, n));
    assert.equal(new Set(seeds).size, names.length);
    assert.ok(
      seeds.every((x) => Number.isInteger(x) && x >= 0 && x < 2147483647 && x !== 1),
      "never the warm-up's SEED",
    );
    assert.equal(windowSeed(1, 'pair3-A'), windowSeed(1, 'pair3-B'));
    assert.equal(windowSeed(7, 'rep2'), windowSeed(7, 'rep2'));
    assert.notEqual(windowSeed(7, 'rep2'), windowSeed(8, 'rep2'));
  });

  it('so two windows of a state run draw different accounts', () => {
    const pool = {
      state_space: { accounts: 5000000, slots: 11000000, distribution: 'skewed' },
      addresses: [],
      storage_slots: [],
    };
    const drawn = (name) => {
      const r = seededRandom(windowSeed(1, name));
      return new Set(Array.from({ length: 2000 }, () => paramsFor('eth_getBalance', pool, r)[0]));
    };
    const a = drawn('rep1');
    const b = drawn('rep2');
    const shared = [...a].filter((x) => b.has(x)).length;
    assert.ok(shared < 100, `${shared} of 2000 accounts shared (a hot tenth of 5M accounts is 500,000)`);
  });
});
