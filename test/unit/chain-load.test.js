'use strict';
// Chain traffic (CHAIN_LOAD) without a node: profiles and their errors, the
// transactions of each kind, the rate arithmetic and its feedback from the
// blocks, the verdict on a window, and the feed's process against a
// stand-in chain (its sends, its figures, its end with its parent).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { ethers } = require('ethers');
const { readChainLoad, chainNeeds, KINDS, FEED_SENDERS } = require('../../src/network/chain-load/profiles');
const kinds = require('../../src/network/chain-load/kinds');
const { gasModel, txRate, pacer, feedWindow, feedVerdict } = require('../../src/network/chain-load/rate');
const { startChainLoad } = require('../../src/network/chain-load/feed');
const { senderKeys, addressOf } = require('../../src/network/chain-load/setup');
const { STORAGE_CONTRACT, accountAddress } = require('../../src/chains/ethereum/state-items');
const { seededRandom } = require('../../src/util/random');
const LOGGER = require('../../src/chains/ethereum/contracts/Logger.json');
const WRITER = require('../../src/chains/ethereum/contracts/SlotWriter.json');
const { startFakeChain } = require('../fake-chain');
const { tmpDir } = require('../helpers');

/** A profile file in a temporary folder. */
function profileFile(text) {
  const file = path.join(tmpDir(), 'load.yml');
  fs.writeFileSync(file, text);
  return file;
}

const errorsOf = (v, o) => readChainLoad(v, o).errors.join('\n');

describe('chain load profiles', () => {
  it('mainnet: 12 s slots, half of the 60M gas limit, 2.5 Mgas/s, deployments 1% of the mix', () => {
    const { profile, errors } = readChainLoad('mainnet');
    assert.deepEqual(errors, []);
    assert.equal(profile.slot_s, 12);
    assert.equal(profile.block_time_s, 12);
    assert.equal(profile.gas_limit, 60_000_000);
    assert.equal(profile.target_gas_per_block, 30_000_000);
    assert.equal(profile.target_gas_per_s, 2_500_000);
    assert.deepEqual(Object.keys(profile.mix), KINDS);
    assert.ok(Math.abs(Object.values(profile.mix).reduce((s, x) => s + x, 0) - 1) < 1e-9);
    assert.equal(profile.mix.deploy, 0.01);
  });

  it('heavy: the same mix in blocks at 95% of the gas limit', () => {
    const { profile } = readChainLoad('heavy');
    assert.equal(profile.target_gas_per_block, 57_000_000);
    assert.deepEqual(profile.mix, readChainLoad('mainnet').profile.mix);
  });

  it('quiet: no feed, and the caller can tell', () => {
    assert.deepEqual(readChainLoad('quiet'), {
      profile: { name: 'quiet', source: 'built-in', quiet: true },
      errors: [],
    });
  });

  it('a shorter block time keeps the gas per second: smaller blocks', () => {
    const { profile } = readChainLoad('mainnet', { slotS: 2 });
    assert.equal(profile.block_time_s, 2);
    assert.equal(profile.slot_s, 12);
    assert.equal(profile.target_gas_per_s, 2_500_000);
    assert.equal(profile.target_gas_per_block, 5_000_000);
  });

  it('a block time whose blocks would pass the gas limit is refused, naming the longest that fits', () => {
    const e = errorsOf('heavy', { slotS: 13 });
    assert.match(
      e,
      /^CHAIN_LOAD: at a block time of 13 s \(DEV_BLOCK_TIME_S\).*61750000 gas, above its gas limit of 60000000: expected a block time of at most 12 s/,
    );
  });

  it('an unknown name lists the built-in profiles and the nearest', () => {
    const e = errorsOf('mainet');
    assert.match(
      e,
      /^CHAIN_LOAD: unknown profile mainet \(did you mean mainnet\?\); expected one of quiet, mainnet, heavy, or a path/,
    );
  });

  it('a file: its slot, gas and mix by weight, the gas limit by default mainnet’s', () => {
    const file = profileFile('slot_s: 6\ngas_target: 12000000\nmix:\n  eth_transfer: 3\n  deploy: 1\n');
    const { profile, errors } = readChainLoad(file, { slotS: 3 });
    assert.deepEqual(errors, []);
    assert.equal(profile.name, file);
    assert.equal(profile.gas_limit, 60_000_000);
    assert.equal(profile.target_gas_per_s, 2_000_000);
    assert.equal(profile.target_gas_per_block, 6_000_000);
    assert.deepEqual(profile.mix, { eth_transfer: 0.75, deploy: 0.25 });
  });

  it('a file relative to baseDir', () => {
    const file = profileFile('slot_s: 12\ngas_target: 1000000\nmix: {eth_transfer: 1}\n');
    const { profile } = readChainLoad('./load.yml', { baseDir: path.dirname(file) });
    assert.equal(profile.source, file);
  });

  it('a gas target above the gas limit: the file and line, and what is accepted', () => {
    const file = profileFile('slot_s: 12\ngas_limit: 30000000\ngas_target: 40000000\nmix: {eth_transfer: 1}\n');
    assert.equal(
      errorsOf(file),
      `CHAIN_LOAD: ${file}:3: gas_target: 40000000 is above the block gas limit (30000000): expected at most the gas_limit`,
    );
    const byDefault = profileFile('slot_s: 12\ngas_target: 70000000\nmix: {eth_transfer: 1}\n');
    assert.match(
      errorsOf(byDefault),
      /:2: gas_target: 70000000 is above the block gas limit \(60000000, the default\)/,
    );
  });

  it('unknown keys and kinds name the nearest valid one; weights, numbers and slots are checked', () => {
    const file = profileFile(
      'slot_s: 0\ngas_targt: 1000000\ngas_limit: 1.5\nmix:\n  erc20: 1\n  deploy: 0\n  storage_write: many\n',
    );
    const e = errorsOf(file);
    assert.match(
      e,
      new RegExp(
        `${file}:2: unknown key gas_targt \\(did you mean gas_target\\?\\); known: slot_s, gas_limit, gas_target, mix`,
      ),
    );
    assert.match(e, new RegExp(`${file}:1: slot_s: 0: expected a whole number of seconds from 1 to 60`));
    assert.match(e, new RegExp(`${file}:3: gas_limit: 1.5: expected a whole number of gas, at least 5000`));
    assert.match(e, new RegExp(`${file}: gas_target: missing`));
    assert.match(
      e,
      new RegExp(
        `${file}:5: mix.erc20: unknown kind \\(did you mean erc20_transfer\\?\\); known: eth_transfer, erc20_transfer, storage_write, deploy`,
      ),
    );
    assert.match(e, new RegExp(`${file}:6: mix.deploy: 0: expected a weight above 0`));
    assert.match(e, new RegExp(`${file}:7: mix.storage_write: "many": expected a weight above 0`));
    assert.ok(e.split('\n').every((l) => l.startsWith('CHAIN_LOAD: ')));
  });

  it('a malformed file names its line; a missing one says it is neither a profile nor readable', () => {
    const file = profileFile('slot_s: 12\nmix: [eth_transfer\n');
    assert.match(errorsOf(file), new RegExp(`^CHAIN_LOAD: ${file}:\\d+: not valid YAML`));
    assert.match(errorsOf(profileFile('- 1\n')), /expected a YAML mapping of slot_s, gas_limit, gas_target, mix/);
    assert.match(
      errorsOf('./nowhere.yml'),
      /nowhere.yml is neither a built-in profile \(quiet, mainnet, heavy\) nor a readable file \(ENOENT\)/,
    );
  });

  it('what the network must allow: the gas limit, pool room for four blocks of transfers, no fee cap', () => {
    assert.deepEqual(chainNeeds(readChainLoad('heavy').profile), {
      gas_limit: 60_000_000,
      txpool_global_slots: Math.ceil((4 * 57_000_000) / 21000),
      txpool_account_slots: Math.ceil(Math.ceil((4 * 57_000_000) / 21000) / FEED_SENDERS),
      rpc_tx_fee_cap: 0,
    });
    assert.deepEqual(chainNeeds(readChainLoad('mainnet', { slotS: 1 }).profile), {
      gas_limit: 60_000_000,
      txpool_global_slots: 5120,
      txpool_account_slots: 80,
      rpc_tx_fee_cap: 0,
    });
  });
});

describe('chain load transactions', () => {
  const key = new ethers.SigningKey(ethers.id('chain-load test'));
  const fees = { nonce: 7, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n };
  const token = `0x${'11'.repeat(20)}`;
  const writer = `0x${'22'.repeat(20)}`;
  const ctxOf = (state) => ({ token, writer, draws: kinds.spaceDraws(state, seededRandom(1)), salt: 5n << 64n, n: 3 });
  const state = { accounts: 1000, slots: 500, distribution: 'uniform' };
  const signed = (kind, ctx) => ethers.Transaction.from(kinds.signTx(key, kinds.txFields(kind, ctx), fees).raw);

  it('each kind is a signed type-2 transaction on chain 1337 with its gas limit', () => {
    for (const kind of KINDS) {
      const tx = signed(kind, ctxOf(state));
      assert.equal(tx.type, 2);
      assert.equal(tx.chainId, 1337n);
      assert.equal(tx.nonce, 7);
      assert.equal(tx.gasLimit, BigInt(kinds.KIND_GAS[kind].limit));
      assert.equal(tx.from, addressOf(key));
      assert.equal(tx.maxFeePerGas, 10n ** 11n);
    }
    assert.equal(kinds.KIND_GAS.eth_transfer.limit, 21000);
  });

  it('eth_transfer and erc20_transfer go to the state’s accounts; storage_write reads the storage contract', () => {
    const ctx = ctxOf(state);
    const eth = signed('eth_transfer', ctx);
    assert.equal(eth.value, 1n);
    const all = new Set(Array.from({ length: 1000 }, (_, i) => accountAddress(i)));
    assert.ok(all.has(eth.to));
    const erc20 = signed('erc20_transfer', ctx);
    assert.equal(erc20.to, ethers.getAddress(token));
    const [to, value] = new ethers.Interface(LOGGER.abi).decodeFunctionData('transfer', erc20.data);
    assert.ok(all.has(to));
    assert.equal(value, 1n);
    const write = signed('storage_write', ctx);
    assert.equal(write.to, ethers.getAddress(writer));
    const [store, keys, salt] = new ethers.Interface(WRITER.abi).decodeFunctionData('write', write.data);
    assert.equal(store, ethers.getAddress(STORAGE_CONTRACT));
    assert.equal(keys.length, kinds.WRITE_KEYS);
    assert.ok(keys.every((k) => k >= 0n && k < 500n));
    assert.equal(salt % 256n, 0n); // even: SlotWriter's or(xor(v, salt), 1) then differs for every call
    const dev = new ethers.Interface(WRITER.abi).decodeFunctionData('write', signed('storage_write', ctxOf(null)).data);
    assert.equal(dev[0], ethers.ZeroAddress); // a dev chain has no StateStore to read
  });

  it('deploy: a creation whose code copies the token’s runtime with bytes of its own after it', () => {
    const a = signed('deploy', ctxOf(state));
    const b = signed('deploy', { ...ctxOf(state), n: 4 });
    assert.equal(a.to, null);
    const runtime = LOGGER.deployedBytecode.slice(2);
    const len = (runtime.length + 64) / 2;
    assert.equal(a.data.slice(0, 28), `0x61${len.toString(16).padStart(4, '0')}8061000d6000396000f3`);
    assert.equal(a.data.slice(28, 28 + runtime.length), runtime);
    assert.equal(a.data.length, 28 + runtime.length + 64);
    assert.notEqual(a.data, b.data);
  });

  it('draws follow the distribution: skewed puts nine draws in ten on a tenth of the accounts', () => {
    const share = (distribution) => {
      const d = kinds.spaceDraws({ accounts: 1000, slots: 1000, distribution }, seededRandom(3));
      const counts = new Map();
      for (let i = 0; i < 20000; i++) {
        const k = d.accountIndex();
        counts.set(k, (counts.get(k) || 0) + 1);
      }
      const top = [...counts.values()].sort((x, y) => y - x).slice(0, 100);
      return top.reduce((s, x) => s + x, 0) / 20000;
    };
    const skewed = share('skewed');
    assert.ok(skewed > 0.88 && skewed < 0.93, `skewed: ${skewed}`);
    assert.ok(share('uniform') < 0.2);
  });

  it('a dev chain draws over a fixed space of derived accounts', () => {
    const d = kinds.spaceDraws(null, seededRandom(3));
    assert.equal(d.space, kinds.DEV_SPACE);
    assert.equal(d.store, ethers.ZeroAddress);
  });

  it('kinds come in turn at the mix’s exact shares', () => {
    const next = kinds.kindCycle(readChainLoad('mainnet').profile.mix);
    const counts = {};
    const seq = Array.from({ length: 200 }, () => next());
    for (const k of seq) counts[k] = (counts[k] || 0) + 1;
    assert.deepEqual(counts, { eth_transfer: 60, erc20_transfer: 60, storage_write: 78, deploy: 2 });
    for (let i = 0; i + 10 <= 200; i++) {
      const window = seq.slice(i, i + 10);
      assert.ok(window.filter((k) => k === 'storage_write').length >= 3, 'every 10 sends hold 3 or 4 storage writes');
    }
  });
});

describe('chain load rate', () => {
  const mix = readChainLoad('mainnet').profile.mix;
  const priors = Object.fromEntries(KINDS.map((k) => [k, kinds.KIND_GAS[k].prior]));

  it('transactions a second: the gas per second over the mix’s expected gas per transaction', () => {
    assert.equal(txRate(2_500_000, 100_000), 25);
    const m = gasModel(mix, priors);
    const perTx = 0.3 * 21000 + 0.3 * priors.erc20_transfer + 0.39 * priors.storage_write + 0.01 * priors.deploy;
    assert.ok(Math.abs(m.perTx() - perTx) < 1e-6);
  });

  it('the first receipts of a kind replace its prior; later ones move its average a little each', () => {
    const m = gasModel(mix, priors);
    assert.equal(m.predicted('storage_write'), null);
    m.learn('storage_write', [100_000, 120_000]);
    assert.equal(m.byKind().storage_write, 110_000);
    assert.equal(m.predicted('storage_write'), 110_000);
    m.learn('storage_write', [210_000]);
    assert.ok(Math.abs(m.byKind().storage_write - (110_000 + 0.05 * 100_000)) < 1e-6);
  });

  /**
   * A feed against a chain whose storage writes cost `truth(t)`: sends at the model's rate, a block every slot of what
   * was sent in the slot before, receipts teaching the model. The blocks' gas, in order.
   */
  function simulate(truth, { slotS = 2, seconds = 240, gasPerS = 2_500_000 } = {}) {
    const m = gasModel(mix, priors);
    const fixed = { eth_transfer: 21000, erc20_transfer: 45000, deploy: 305000 };
    const next = kinds.kindCycle(mix);
    const pace = pacer();
    let sent = [];
    const blocks = [];
    for (let ms = 0; ms <= seconds * 1000; ms += 20) {
      const t = ms / 1000;
      for (let k = pace.take(ms, txRate(gasPerS, m.perTx()), 1e9); k > 0; k--) {
        const kind = next();
        sent.push({ kind, gas: kind === 'storage_write' ? truth(t) : fixed[kind], predicted: m.predicted(kind) });
      }
      if (ms > 0 && ms % (slotS * 1000) === 0) {
        blocks.push(sent.reduce((s, x) => s + x.gas, 0));
        for (const kind of KINDS) {
          const mine = sent.filter((x) => x.kind === kind);
          m.learn(
            kind,
            mine.map((x) => x.gas),
            mine.map((x) => x.predicted),
          );
        }
        sent = [];
      }
    }
    return blocks;
  }

  it('holds the gas per block when a kind’s gas drifts down as the chain fills', () => {
    const truth = (t) => 100_000 + 170_000 * Math.exp(-t / 60); // new slots first, then slots written before
    const blocks = simulate(truth).slice(10); // after the first 20 s
    const mean = blocks.reduce((s, g) => s + g, 0) / blocks.length;
    assert.ok(Math.abs(mean / 5_000_000 - 1) < 0.02, `mean ${mean}`);
  });

  it('does not overshoot the quick fall of a chain’s first minute, even with 12 s blocks at 95% of the gas limit', () => {
    const truth = (t) => 95_000 + 175_000 * Math.exp(-t / 8); // a skewed draw's hot slots fill within seconds
    const blocks = simulate(truth, { slotS: 12, seconds: 600, gasPerS: 4_750_000 }).map((g) => g / 57_000_000 - 1);
    assert.ok(
      Math.max(...blocks) < 0.05,
      `a block over 105% of its gas, past the gas limit: ${blocks.map((x) => x.toFixed(3))}`,
    );
    const later = blocks.slice(5);
    assert.ok(Math.abs(later.reduce((a, x) => a + x, 0) / later.length) < 0.02, `${later.map((x) => x.toFixed(3))}`);
  });

  it('does not swing: after a step in a kind’s gas the blocks come back to the target and stay there', () => {
    const blocks = simulate((t) => (t < 60 ? 100_000 : 160_000), { seconds: 180 });
    const after = blocks.slice(30).map((g) => g / 5_000_000 - 1); // from the block of the sends after the step
    assert.ok(after[0] > 0.3, 'the step shows in the block of the sends after it');
    // four blocks at a time: a deployment (300k gas, 1 in 100 sends) falls in every other block
    const smooth = after.slice(1, -3).map((x, i) => (after[i + 1] + after[i + 2] + after[i + 3] + after[i + 4]) / 4);
    assert.ok(Math.min(...smooth) > -0.1, `the correction undershoots by ${Math.min(...smooth)}`);
    const back = smooth.findIndex((x) => Math.abs(x) < 0.02);
    assert.ok(back >= 0 && back < 15, `back within 2% after ${back} blocks`);
    assert.ok(
      smooth.slice(back).every((x) => Math.abs(x) < 0.025),
      `then stays: ${smooth.slice(back).map((x) => x.toFixed(3))}`,
    );
  });

  it('paces sends evenly, and counts as behind what could not start within a second', () => {
    const p = pacer();
    const per = [];
    for (let ms = 0; ms <= 1000; ms += 20) per.push(p.take(ms, 10, 100));
    assert.equal(
      per.reduce((s, x) => s + x, 0),
      10,
    );
    assert.ok(
      per.every((x) => x <= 1),
      'one at a time, every 100 ms',
    );
    for (let ms = 1020; ms <= 4000; ms += 20) p.take(ms, 10, 0); // no room for 3 s
    assert.equal(p.counts().behind, 20); // 30 due; the last second's 10 are kept
    assert.equal(p.take(4020, 10, 100), 10); // they go at once with the one now due, not the 30
    assert.equal(p.counts().due, 40);
  });
});

describe('chain load verdict', () => {
  const stats = (atMs, o) => ({
    profile: 'mainnet',
    target_gas_per_block: 5_000_000,
    at_ms: atMs,
    sent_total: 0,
    due: 0,
    sends_behind: 0,
    failed_total: 0,
    cpu_s: 0,
    blocks_seen: [],
    ...o,
  });
  const blocks = (from, gas) => gas.map((g, i) => ({ number: from + i, gas_used: g }));
  const window = (gas, o = {}) =>
    feedWindow(
      stats(0, { blocks_seen: blocks(1, [1, 2]), sent_total: 100, due: 100 }),
      stats(60_000, { blocks_seen: blocks(1, [1, 2, ...gas]), sent_total: 100 + 1500, due: 1600, cpu_s: 6, ...o }),
    );

  it('a window: the blocks after the first edge, the sends and CPU between the edges', () => {
    const w = window([5e6, 5e6]);
    assert.deepEqual(
      w.blocks.map((b) => b.number),
      [3, 4],
    );
    assert.equal(w.seconds, 60);
    assert.equal(w.sent, 1500);
    assert.equal(w.due, 1500);
    assert.equal(w.cpu_s, 6);
  });

  it('within 5%: ok, no warning', () => {
    const v = feedVerdict(window([4.9e6, 5.1e6, 5.2e6, 4.9e6]));
    assert.equal(v.ok, true);
    assert.equal(v.warning, null);
    assert.equal(v.tx_per_s, 25);
    assert.equal(v.cpu_cores, 0.1);
  });

  it('blocks short of the profile: a warning with the figures', () => {
    const v = feedVerdict(window([4e6, 4e6, 4e6, 4e6], { sends_behind: 240, due: 1840 }));
    assert.equal(v.ok, false);
    assert.equal(
      v.warning,
      'the chain load fell behind (CHAIN_LOAD=mainnet) over 60 s: its 4 blocks held 4.00M gas on average (median 4.00M, 10th to 90th percentile 4.00M to 4.00M) against the profile’s 5.00M (-20.0%), and the feed sent 25.0 transactions a second against the 29.0 it aimed at (-13.8%); 240 sends were not made in time; the feed used 0.10 cores'.replace(
        '’',
        "'",
      ),
    );
  });

  it('refusals are counted with the last reason', () => {
    const v = feedVerdict(window([3e6, 3e6], { failed_total: 40, last_error: 'insufficient funds' }));
    assert.match(v.warning, /; 40 were refused \(the last: insufficient funds\); the feed used/);
  });

  it('sends short of their due, blocks full: not ok', () => {
    assert.equal(feedVerdict(window([5e6, 5e6], { due: 1800 })).ok, false);
  });

  it('blocks above the profile: a warning that says so', () => {
    assert.match(feedVerdict(window([6e6, 6e6])).warning, /^the chain load ran above its profile .* \(\+20\.0%\)/);
  });

  it('no block in the window: not ok', () => {
    assert.match(feedVerdict(window([])).warning, /no block was seen in it/);
  });
});

describe('chain load feed process', function () {
  this.timeout(20000);
  const funderKey = ethers.id('chain-load test funder');
  const funder = addressOf(new ethers.SigningKey(funderKey));
  const writeSel = new ethers.Interface(WRITER.abi).getFunction('write').selector;
  const GAS = { eth_transfer: 21000, erc20_transfer: 50000, storage_write: 120000, deploy: 300000 };
  const kindOf = (tx) =>
    !tx.to
      ? 'deploy'
      : tx.data === '0x'
        ? 'eth_transfer'
        : tx.data.startsWith(writeSel)
          ? 'storage_write'
          : 'erc20_transfer';
  const profile = {
    ...readChainLoad('mainnet', { slotS: 1 }).profile,
    target_gas_per_s: 1_500_000,
    target_gas_per_block: 1_500_000,
  };
  /** This process's children that run the feed. */
  const feedChildren = () =>
    fs
      .readdirSync(`/proc/${process.pid}/task`)
      .flatMap((t) => fs.readFileSync(`/proc/${process.pid}/task/${t}/children`, 'utf8').split(' ').filter(Boolean))
      .map(Number)
      .filter((pid) => running(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('feed-main.js'));
  const running = (pid) => {
    try {
      process.kill(pid, 0);
      return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };

  it('funds its senders, deploys its contracts, then sends the mix through every node at the learned rate', async () => {
    const fake = await startFakeChain({ gasOf: (tx) => GAS[kindOf(tx)], funder, blockMs: 250 });
    const logs = [];
    const feed = await startChainLoad({
      profile,
      urls: fake.urls,
      funderKey,
      seed: 9,
      state: null,
      cpus: '0',
      log: (m) => logs.push(m),
    }).catch(async (err) => {
      await fake.close();
      throw err;
    });
    try {
      assert.equal(feed.stats().profile, 'mainnet', 'figures as soon as the start resolves');
      assert.equal(feed.stats().target_gas_per_block, 1_500_000);
      await new Promise((r) => setTimeout(r, 3000));
      const stats = feed.stats();
      const last = await feed.stop();
      assert.equal(running(feed.pid), false, 'its process ended with stop()');
      const sent = fake.chain.sent.map((x) => ({ ...x, kind: kindOf(x.tx) }));
      const keys = senderKeys(9).map(addressOf);
      assert.deepEqual(
        sent.slice(0, FEED_SENDERS).map((x) => [x.tx.from, x.tx.to, x.node]),
        keys.map((k) => [funder, k, 0]),
      );
      assert.deepEqual(
        sent.slice(FEED_SENDERS, FEED_SENDERS + 2).map((x) => [x.tx.from, x.kind, x.node]),
        [
          [keys[0], 'deploy', 0],
          [keys[0], 'deploy', 0],
        ],
      );
      const traffic = sent.slice(FEED_SENDERS + 2);
      assert.ok(traffic.length > 20, `${traffic.length} sent`);
      assert.ok(traffic.every((x) => keys.includes(x.tx.from)));
      assert.deepEqual(new Set(traffic.map((x) => x.node)), new Set([0, 1]), 'through both nodes');
      const share = (k) => traffic.filter((x) => x.kind === k).length / traffic.length;
      assert.ok(Math.abs(share('storage_write') - 0.39) < 0.05 && Math.abs(share('eth_transfer') - 0.3) < 0.05);
      // the gas per kind learned from the receipts: the rate the fake chain's gas gives
      const perTx = 0.3 * 21000 + 0.3 * 50000 + 0.39 * 120000 + 0.01 * 300000;
      assert.ok(Math.abs(stats.aimed_tx_per_s - 1_500_000 / perTx) < 0.5, `aimed ${stats.aimed_tx_per_s}`);
      assert.equal(stats.gas_by_kind.storage_write, 120000);
      assert.equal(last.sent_total, traffic.length);
      assert.equal(last.failed_total, 0);
      assert.ok(last.included_total > 0 && last.blocks_seen.length > 5);
      assert.ok(last.blocks_seen.every((b) => b.gas_limit === 60_000_000));
      assert.ok(feed.cpuSeconds() > 0);
      assert.ok(logs.some((l) => /64 senders funded/.test(l)));
    } finally {
      await feed.stop();
      await fake.close();
    }
  });

  it('a network that does not answer: the start fails with the reason, and its process is gone', async () => {
    const logs = [];
    await assert.rejects(
      startChainLoad({
        profile,
        urls: ['http://127.0.0.1:9'],
        funderKey,
        seed: 1,
        state: null,
        cpus: '0',
        log: (m) => logs.push(m),
      }),
      /^Error: chain load: .*(fetch failed|ECONNREFUSED)/,
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(feedChildren(), []);
  });

  it('a quiet profile has no feed', async () => {
    await assert.rejects(
      startChainLoad({ profile: readChainLoad('quiet').profile, urls: ['x'] }),
      /quiet profile has no feed/,
    );
  });

  it('its process ends when its parent is killed', async () => {
    const hang = http.createServer(() => {}); // takes requests, never answers: the feed waits in its setup
    await new Promise((r) => hang.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${hang.address().port}`;
    const script = `
      const { startChainLoad } = require(${JSON.stringify(require.resolve('../../src/network/chain-load/feed'))});
      const profile = ${JSON.stringify(profile)};
      startChainLoad({ profile, urls: [${JSON.stringify(url)}], funderKey: ${JSON.stringify(funderKey)}, seed: 1, state: null, cpus: '0', log: () => {} }).catch(() => {});
      setTimeout(() => console.log(require('fs').readFileSync('/proc/self/task/' + process.pid + '/children', 'utf8')), 1000);`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const out = await new Promise((resolve) => parent.stdout.once('data', (d) => resolve(String(d))));
      const child = Number(out.trim().split(' ')[0]);
      assert.ok(child > 0 && running(child), `the feed's process: ${out}`);
      parent.kill('SIGKILL');
      const deadline = Date.now() + 5000;
      while (running(child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.equal(running(child), false, 'the feed outlived its parent');
    } finally {
      parent.kill('SIGKILL');
      hang.closeAllConnections();
      await new Promise((r) => hang.close(r));
    }
  });
});
