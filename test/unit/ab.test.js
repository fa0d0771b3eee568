'use strict';
const assert = require('node:assert/strict');
const { pairedRatio, pairsNeeded, regressed, intervalUnits, stage1Units } = require('../../src/ab/stats');
const { blockOf, restartRefusal, restartPairs, settleRestarts } = require('../../src/ab/restarts');
const { netNotPositiveWarning, regressionGate, summarizePairs } = require('../../src/ab/pairs');
const { alikePools } = require('../../src/ab/shared');
const { renderSummary } = require('../../src/ab/report');
const { normal } = require('../helpers');

/**
 * One simulated session: each pair shares a drift of the machine (which pairing cancels) and each window has
 * its own noise; pairs are added by the session's rule (Stein's first stage of n0 pairs, then as many as it asks).
 */
function simulateSession(gauss, { ratio, windowSd, driftSd = 0.05, n0 = 5, targetPct = 2, maxPairs = 20 }) {
  const pairs = [];
  const add = () => {
    const drift = driftSd * gauss();
    pairs.push({
      a: 0.4 * Math.exp(drift + windowSd * gauss()),
      b: 0.4 * ratio * Math.exp(drift + windowSd * gauss()),
    });
  };
  while (pairs.length < n0) add();
  const need = Math.min(maxPairs, pairsNeeded(pairs, n0, targetPct));
  while (pairs.length < need) add();
  return pairedRatio(pairs, { stage1: n0 });
}

describe('A/B statistics', () => {
  it('the ratio of exact pairs is B/A, with a zero-width interval', () => {
    const r = pairedRatio([
      { a: 2, b: 3 },
      { a: 4, b: 6 },
      { a: 1, b: 1.5 },
    ]);
    assert.ok(Math.abs(r.ratio - 1.5) < 1e-12);
    assert.ok(Math.abs(r.ci95[0] - 1.5) < 1e-12 && Math.abs(r.ci95[1] - 1.5) < 1e-12);
    assert.equal(r.verdict, 'higher');
  });

  it('the verdict is lower, higher, or the same when the interval holds 1; none from one pair', () => {
    assert.equal(
      pairedRatio([
        { a: 1, b: 0.9 },
        { a: 1, b: 0.92 },
        { a: 1, b: 0.91 },
      ]).verdict,
      'lower',
    );
    assert.equal(
      pairedRatio([
        { a: 1, b: 0.95 },
        { a: 1, b: 1.06 },
        { a: 1, b: 1.0 },
      ]).verdict,
      'same',
    );
    const one = pairedRatio([{ a: 1, b: 2 }]);
    assert.equal(one.verdict, null);
    assert.equal(one.ci95, null);
  });

  it('pairs with a missing or zero value are left out and counted', () => {
    const r = pairedRatio([
      { a: 1, b: 1.1 },
      { a: null, b: 1 },
      { a: 0, b: 1 },
      { a: 1, b: 1.1 },
    ]);
    assert.equal(r.n, 2);
    assert.equal(r.left_out, 2);
  });

  it('the first stage asks for more pairs when its spread is wider, never fewer than its own', () => {
    const tight = [1.001, 0.999, 1.0, 1.002, 0.998].map((b) => ({ a: 1, b }));
    const wide = [1.05, 0.95, 1.0, 1.08, 0.93].map((b) => ({ a: 1, b }));
    assert.equal(pairsNeeded(tight, 5, 2), 5);
    assert.ok(pairsNeeded(wide, 5, 2) > 20);
    assert.equal(pairsNeeded(tight.slice(0, 3), 5, 2), null, 'not before the first stage is complete');
  });

  it('coverage: over 2,000 simulated sessions the 95% interval holds the true ratio 93.5-96.5% of the time', () => {
    const gauss = normal(2024);
    for (const windowSd of [0.01, 0.03]) {
      let covered = 0;
      const n = 2000;
      for (let i = 0; i < n; i++) {
        const r = simulateSession(gauss, { ratio: 1.05, windowSd });
        if (r.ci95[0] <= 1.05 && 1.05 <= r.ci95[1]) covered++;
      }
      const rate = covered / n;
      assert.ok(rate > 0.935 && rate < 0.965, `window noise ${windowSd}: coverage ${rate}`);
    }
  });

  it('A/A: identical configurations are called different in about 5% of sessions, not more', () => {
    const gauss = normal(7);
    let different = 0;
    const n = 2000;
    for (let i = 0; i < n; i++)
      if (simulateSession(gauss, { ratio: 1, windowSd: 0.03 }).verdict !== 'same') different++;
    assert.ok(different / n < 0.065, `false positive rate ${different / n}`);
  });

  it('a real 5% difference under 1% window noise is found, in the right direction', () => {
    const gauss = normal(11);
    const r = simulateSession(gauss, { ratio: 0.95, windowSd: 0.01 });
    assert.equal(r.verdict, 'lower');
    assert.ok(r.halfwidth_pct <= 2.5);
  });

  it('the regression gate fails only when the whole interval is beyond the allowed worsening', () => {
    assert.equal(regressed({ ci95: [1.06, 1.09] }, 5), true);
    assert.equal(regressed({ ci95: [1.04, 1.09] }, 5), false, 'part of the interval within 5%');
    assert.equal(regressed({ ci95: [0.9, 0.93] }, 5, false), true, 'throughput: lower is worse');
    assert.equal(regressed({ ci95: null }, 5), false);
    const gate = regressionGate(
      { cpu_ms_per_request: { ratio: 1.08, ci95: [1.06, 1.1] }, rps: { ratio: 0.93, ci95: [0.92, 0.94] } },
      5,
    );
    assert.equal(gate.pass, false);
    assert.equal(gate.failed.length, 2);
    assert.equal(regressionGate({}, null), null, 'no gate without MAX_REGRESSION_PCT');
  });

  it('a window whose net CPU per request is not positive is named in a warning, and left out of the net interval', () => {
    const side = (gross, net) => ({ compared: { cpu_ms_per_request: gross, cpu_ms_per_request_net: net } });
    const pairs = [
      { pair: 1, a: side(0.2, 0.19), b: side(0.21, 0.2) },
      { pair: 2, a: side(0.2, 0.18), b: side(0.2, 0.19) },
      { pair: 3, a: side(0.53, 0.48), b: side(0.5, -0.006) },
    ];
    const w = netNotPositiveWarning(pairs);
    assert.match(w, /not positive in 1 window\(s\) \(pair 3 B: -0\.006 ms\)/);
    assert.match(w, /read the gross figure/);
    const f = summarizePairs(pairs, 3);
    assert.equal(f.cpu_ms_per_request.n, 3);
    assert.equal(f.cpu_ms_per_request_net.n, 2, 'the net interval over the other two pairs');
    assert.equal(netNotPositiveWarning(pairs.slice(0, 2)), null);
    assert.equal(netNotPositiveWarning([{ pair: 1, a: side(0.2, null), b: side(0.2, null) }]), null, 'no idle: no net');
  });
});

describe('A/B parameter pool', () => {
  it("two chains without what their blocks hold (Substrate) share the items both hold, in A's order", () => {
    const a = { chain_id: 1337, head: 11, blocks: [0, 1, 2, 11], tx_hashes: ['0x1', '0x2'], contract: '0xc' };
    const b = { chain_id: 1337, head: 12, blocks: [0, 1, 2, 11, 12], tx_hashes: ['0x2', '0x1'], contract: '0xc' };
    const want = { chain_id: 1337, head: 11, blocks: [0, 1, 2, 11], tx_hashes: ['0x1', '0x2'], contract: '0xc' };
    assert.deepEqual(alikePools(a, b), { a: want, b: want, left_out: 0 });
  });

  it('pairs blocks by the transactions they hold: a round sealed a block later on B is asked for on both', () => {
    // A: funding split 2+1 in blocks 3-4, the round in 5; B: 1+2 in 3-4, the round in 6 (an empty block before it)
    const a = {
      chain_id: 1337,
      head: 7,
      blocks: [2, 3, 4, 5, 6, 7],
      block_contents: ['0:e', '2:f1', '1:f2', '2:r', '0:e', '0:e'],
      tx_hashes: ['0xf1', '0xf2', '0xf3', '0xr1', '0xr2'],
      contract: '0xc',
    };
    const b = {
      chain_id: 1337,
      head: 7,
      blocks: [2, 3, 4, 5, 6, 7],
      block_contents: ['0:e', '1:g1', '2:g2', '0:e', '2:r', '0:e'],
      tx_hashes: ['0xf1', '0xf2', '0xf3', '0xr1', '0xr2'],
      contract: '0xc',
    };
    const pools = alikePools(a, b);
    assert.deepEqual(pools.a.blocks, [2, 5, 6, 7], "A's empty blocks, then its round, each with a like block on B");
    assert.deepEqual(pools.b.blocks, [2, 6, 5, 7], "B's in the same order: the i-th holds what A's i-th holds");
    assert.deepEqual(pools.a.block_contents, pools.b.block_contents);
    assert.deepEqual(pools.a.tx_hashes, ['0xr1', '0xr2'], 'the transactions of paired blocks alone: not the funding');
    assert.deepEqual(pools.b.tx_hashes, ['0xr1', '0xr2']);
    assert.equal(pools.a.head, 7);
    // A's last round sealed a block later than B's: A's top block pairs with one below B's top, whose head stays it
    const top = alikePools(
      { blocks: [1, 2, 3], block_contents: ['0:e', '0:e', '1:r'], tx_hashes: ['0xr'] },
      { blocks: [1, 2, 3], block_contents: ['0:e', '1:r', '0:e'], tx_hashes: ['0xr'] },
    );
    assert.deepEqual(top.b.blocks, [1, 3, 2]);
    assert.equal(top.b.head, 3, 'no log range starts above the head');
    assert.equal(pools.a.contract, '0xc');
    assert.equal(pools.left_out, 2, 'the two funding blocks of each side have no like block');
  });

  it('pools that cannot be made alike are not', () => {
    assert.equal(alikePools({ contract: '0xa', blocks: [1] }, { contract: '0xb', blocks: [1] }), null);
    assert.equal(alikePools({ tx_hashes: ['0x1'] }, { tx_hashes: ['0x2'] }), null, 'nothing in common');
    const a = { blocks: [1], block_contents: ['1:x'], tx_hashes: ['0x1'] };
    const b = { blocks: [1], block_contents: ['1:y'], tx_hashes: ['0x2'] };
    assert.equal(alikePools(a, b), null, 'no block holds what a block of the other chain holds');
  });
});

describe('A/B with restarts (AB_RESTART_PAIRS)', () => {
  it('restarts both nodes before every block of pairs, the first too', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((k) => blockOf(k, 2)),
      [
        { block: 0, restart: true },
        { block: 0, restart: false },
        { block: 1, restart: true },
        { block: 1, restart: false },
        { block: 2, restart: true },
      ],
    );
    assert.deepEqual(blockOf(3, 0), { block: null, restart: false }, 'AB_RESTART_PAIRS=0: never');
  });

  it('takes the interval over blocks: two processes that differ all block long are one unit, not many', () => {
    // each block's two processes differ by +4% or -4% in every pair; the windows agree within 0.2%
    const pairs = [];
    for (let block = 0; block < 4; block++)
      for (let i = 0; i < 4; i++)
        pairs.push({ a: 1, b: (block % 2 ? 1.04 : 0.96) * (1 + (i % 2 ? 0.002 : -0.002)), block });
    const units = intervalUnits(pairs);
    assert.equal(units.length, 4, 'one unit per block');
    const overPairs = pairedRatio(pairs.map(({ a, b }) => ({ a, b })));
    const overBlocks = pairedRatio(units);
    assert.ok(
      overBlocks.halfwidth_pct > 3 * overPairs.halfwidth_pct,
      `${overBlocks.halfwidth_pct} vs ${overPairs.halfwidth_pct}`,
    );
    assert.equal(overBlocks.verdict, 'same');
    assert.deepEqual(intervalUnits([{ a: 1, b: 2 }]), [{ a: 1, b: 2 }], 'without blocks, the pairs themselves');
    const missing = pairedRatio(intervalUnits([...pairs, { a: null, b: 1, block: 9 }]));
    assert.equal(missing.left_out, 1, 'a block whose pairs have no values is counted as left out');
  });

  it("Stein's first stage counts blocks that hold AB_MIN_PAIRS pairs, at least two", () => {
    assert.equal(stage1Units({ min_pairs: 5, restart_pairs: 0 }), 5);
    assert.equal(stage1Units({ min_pairs: 5, restart_pairs: 2 }), 3);
    assert.equal(stage1Units({ min_pairs: 2, restart_pairs: 4 }), 2);
  });

  it('unset: a restart before every pair where both runtimes restart nodes; no restarts, with a warning, for a fleet', () => {
    assert.equal(restartPairs({ AB_RESTART_PAIRS: null, RUNTIME: 'host' }, { RUNTIME: 'compose' }), 1);
    assert.equal(restartPairs({ AB_RESTART_PAIRS: null, RUNTIME: 'host' }, { RUNTIME: 'attach' }), 0);
    assert.equal(restartPairs({ AB_RESTART_PAIRS: 3, RUNTIME: 'host' }, { RUNTIME: 'host' }), 3);
    const node = (key, restartNode) => ({
      key,
      s: { RUNTIME: 'host', REPLICAS: restartNode ? 1 : 2 },
      stack: { restartNode },
    });
    const sides = [node('A', () => {}), node('B', null)];
    const warnings = [];
    assert.equal(settleRestarts({ restart_pairs: 1 }, sides, false, warnings), 0);
    assert.match(warnings[0], /node B \(host, REPLICAS=2\) cannot be restarted: each side ran as one process/);
    assert.throws(() => settleRestarts({ restart_pairs: 1 }, sides, true, []), /AB_RESTART_PAIRS=1: node B/);
    assert.equal(settleRestarts({ restart_pairs: 1 }, [sides[0], sides[0]], true, []), 1);
  });

  it('is refused where the node cannot be restarted', () => {
    assert.match(restartRefusal({ AB_RESTART_PAIRS: 2, RUNTIME: 'attach' }, { RUNTIME: 'host' }), /RUNTIME=attach/);
    assert.equal(restartRefusal({ AB_RESTART_PAIRS: 2, RUNTIME: 'host' }, { RUNTIME: 'compose' }), null);
    assert.equal(restartRefusal({ AB_RESTART_PAIRS: 0, RUNTIME: 'swarm' }, { RUNTIME: 'swarm' }), null);
  });
});

describe('A/B report', () => {
  const win = (cpu, rps) => ({
    compared: {
      cpu_ms_per_request: cpu,
      cpu_ms_per_request_net: cpu - 0.01,
      rps,
      p50_ms: 2,
      p99_ms: 9,
      memory_peak_bytes: 1e8,
      disk_bytes_per_request: null,
    },
    generator: { cpu_us_per_request: 50 },
    partner_cpu_s_per_s: 0.012,
  });
  const pairs = [1, 2, 3, 4, 5].map((k) => ({
    pair: k,
    order: k % 2 ? 'AB' : 'BA',
    a: win(0.4 + k * 0.001, 1000),
    b: win(0.44 + k * 0.001, 950),
  }));

  it('summarizes every compared figure and renders the verdicts and pairs', () => {
    const figures = summarizePairs(pairs, 5);
    assert.equal(figures.cpu_ms_per_request.verdict, 'higher');
    assert.equal(figures.rps.verdict, 'lower');
    assert.equal(figures.disk_bytes_per_request.n, 0);
    const side = {
      scenario_file: 'a.env',
      client: { name: 'geth', version: '1.16.7' },
      warnings: [],
      provenance: {
        scenario: {
          RUNTIME: 'host',
          WORKLOAD: 'eth-default',
          DB_CACHE_MB: 1024,
          CORES: 1,
          GENERATOR: 'lean',
          TRANSPORT: 'http',
        },
      },
    };
    const md = renderSummary({
      run_id: 'x',
      status: 'ok',
      stop_reason: 'done',
      pairs,
      figures,
      settings: { order: 'ABBA', interval: 't' },
      warnings: [],
      regression: null,
      a: side,
      b: side,
    });
    assert.match(md, /\| CPU ms\/request \(gross\) \| 0\.4030 \| 0\.4430 \| 1\.09\d\d \|/);
    assert.match(md, /B higher/);
    assert.match(md, /\| 5 \| AB \|/);
    assert.match(md, /CORES=1, GENERATOR=lean, TRANSPORT=http/);
    assert.doesNotMatch(md, /interleaved|whole windows/, 'nothing said of AB_SLICE_S where the record has none');
    const doc = { run_id: 'x', status: 'ok', figures, warnings: [], regression: null, a: side, b: side };
    const sliced = renderSummary({
      ...doc,
      pairs: pairs.map((p) => ({ ...p, interleaved: true })),
      settings: { order: 'ABBA', interval: 't', slice_s: 1, interleave: true },
    });
    assert.match(sliced, /Each pair was interleaved \(AB_SLICE_S=1\)/);
    const whole = renderSummary({
      ...doc,
      pairs,
      settings: { order: 'ABBA', interval: 't', slice_s: 1, interleave: false, interleave_reason: 'AB_SLICE_S=0' },
    });
    assert.match(whole, /Pairs of whole windows, one side after the other \(AB_SLICE_S: AB_SLICE_S=0\)/);
  });

  it("names each side's state and memory limit, and a Substrate side's own generator", () => {
    const figures = summarizePairs(pairs, 5);
    const sc = {
      CHAIN: 'polkadot',
      RUNTIME: 'host',
      WORKLOAD: 'dot-state',
      DB_CACHE_MB: 32,
      CORES: 1,
      GENERATOR: 'ethers',
      TRANSPORT: 'http',
      STATE: 'large',
      STATE_DISTRIBUTION: 'skewed',
      MEMORY_MB: 2048,
    };
    const side = {
      scenario_file: 'a.env',
      client: { name: 'polkadot-omni-node', version: '1.25.1' },
      warnings: [],
      provenance: { scenario: sc },
    };
    const md = renderSummary({
      run_id: 'x',
      status: 'ok',
      stop_reason: 'done',
      pairs,
      figures,
      settings: { order: 'ABBA', interval: 't' },
      warnings: [],
      regression: null,
      a: side,
      b: side,
    });
    assert.match(md, /STATE=large \(skewed\), MEMORY_MB=2048, generator: artillery \+ @polkadot\/api over WebSocket/);
    assert.doesNotMatch(md, /GENERATOR=ethers/);
  });
});

describe('A/B: memory is reported, never decided', () => {
  it('two processes whose memory differs in every pair get no verdict and pass the regression gate', () => {
    const { summarizePairs, regressionGate } = require('../../src/ab/pairs');
    const win = (cpu, mem) => ({ compared: { cpu_ms_per_request: cpu, memory_peak_bytes: mem } });
    const pairs = [1, 2, 3, 4, 5].map((i) => ({ a: win(1 + i / 1000, 100e6), b: win(1 + i / 1000, 150e6 + i) }));
    const f = summarizePairs(pairs, 5);
    assert.equal(f.memory_peak_bytes.verdict, null);
    assert.match(f.memory_peak_bytes.undecided, /one node process/);
    assert.ok(f.memory_peak_bytes.ci95[0] > 1.4, 'the interval is still computed and reported');
    assert.equal(f.cpu_ms_per_request.verdict, 'same');
    assert.equal(regressionGate(f, 5).pass, true);
  });
});

describe('A/B interleaved in slices (AB_SLICE_S)', () => {
  const { settleInterleave, sliceProblem, interleaveRefusal } = require('../../src/ab/interleave');
  const base = { DURATION_S: 10, RATE: null, REPLICAS: 1 };
  const side = (key, over = {}, cpu = { kind: 'cgroup', read() {} }) => ({
    key,
    s: { ...base, ...over },
    stack: { cpu },
  });
  const kept = { slice_s: 1, generator: 'kept' };

  it('interleaves where both generators are kept, both loops closed and both nodes read at any instant', () => {
    const set = { ...kept };
    settleInterleave(set, [side('A'), side('B')]);
    assert.equal(set.interleave, true);
    assert.equal(set.interleave_reason, undefined);
  });

  it('measures whole windows otherwise, and says why', () => {
    const why = (sides, set = kept) => {
      const s = { ...set };
      settleInterleave(s, sides);
      assert.equal(s.interleave, false);
      return s.interleave_reason;
    };
    assert.equal(why([side('A'), side('B')], { ...kept, slice_s: 0 }), 'AB_SLICE_S=0');
    assert.match(
      why([side('A'), side('B')], { slice_s: 1, generator: 'per-window', generator_reason: 'A: a replay' }),
      /a pass per window \(A: a replay\)/,
    );
    assert.match(why([side('A'), side('B', { RATE: 500 })]), /^B: an open loop \(RATE\)/);
    assert.match(why([side('A', { REPLICAS: 2 }), side('B')]), /^A: a fleet/);
    assert.match(why([side('A'), side('B', { DURATION_S: 20 })]), /DURATION_S differ/);
    assert.match(
      why([side('A'), side('B', {}, { kind: 'cadvisor', sampled: true })]),
      /^B: its node's CPU \(cadvisor\)/,
    );
    assert.match(why([side('A', {}, { kind: 'metrics', readEdge() {} }), side('B')]), /^A: its node's CPU \(metrics\)/);
    assert.equal(interleaveRefusal([side('A'), side('B')], kept), null);
  });

  it('refuses a slice too short to be more than its gap', () => {
    assert.match(sliceProblem({ AB_SLICE_S: 0.1 }), /at least 0.5 s/);
    assert.equal(sliceProblem({ AB_SLICE_S: 0 }), null);
    assert.equal(sliceProblem({ AB_SLICE_S: 2 }), null);
  });
});
