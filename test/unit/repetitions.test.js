'use strict';
const assert = require('node:assert/strict');
const { summarizeRepetitions, medianIndex, flagOutliers } = require('../../src/repetitions');

const rep = (cpu, { rps = 1000, idle = 0.012, gen = 0.5, genUs, failed = 0, gc, steal } = {}) => ({
  figures: {
    cpu_ms_per_request: cpu,
    cpu_ms_per_request_net: cpu - 0.01,
    rps,
    requests_ok: rps * 10,
    latency_ms: { p50: 1, p99: 5 },
    error_rate: 0,
    requests_failed: failed,
  },
  node: {
    ...(gc === undefined ? {} : { gc_cycles: gc }),
    ...(steal === undefined ? {} : { steal: { cpus: '0', steal_s: steal * 10, share: steal } }),
  },
  idle: { cpu_s: idle * 10, seconds: 10 },
  generator: { cpu_utilization: gen, ...(genUs === undefined ? {} : { cpu_us_per_request: genUs }) },
});

describe('repetitions', () => {
  it("the report's repetition is the median one by CPU time per request", () => {
    assert.equal(medianIndex([rep(0.3), rep(0.1), rep(0.2)]), 2);
    assert.equal(medianIndex([rep(0.4), rep(0.1), rep(0.2), rep(0.3)]), 2, 'lower middle of four');
  });

  it('summarizes every headline figure', () => {
    const s = summarizeRepetitions([rep(0.2), rep(0.22), rep(0.24)]);
    assert.ok(Math.abs(s.cpu_ms_per_request.median - 0.22) < 1e-12);
    assert.ok(s.cpu_ms_per_request.cv > 0.09 && s.cpu_ms_per_request.cv < 0.1);
    assert.deepEqual(Object.keys(s), [
      'cpu_ms_per_request',
      'cpu_ms_per_request_net',
      'rps',
      'p50_ms',
      'p99_ms',
      'error_rate',
    ]);
  });

  it('flags a repetition outside the rest, with what differed in it', () => {
    const reps = [rep(0.2), rep(0.201), rep(0.199), rep(0.2), rep(0.3, { idle: 0.05, rps: 700 })];
    const flags = flagOutliers(reps);
    assert.equal(flags.length, 1);
    assert.equal(flags[0].repetition, 5);
    assert.match(flags[0].reasons.join(' | '), /idle CPU before it was \d+% off/);
    assert.match(flags[0].reasons.join(' | '), /throughput was -30% off the median/);
  });

  it('says when the node ran more garbage collections per request in the flagged repetition', () => {
    const reps = [
      rep(0.2, { gc: 20 }),
      rep(0.201, { gc: 21 }),
      rep(0.199, { gc: 19 }),
      rep(0.2, { gc: 20 }),
      rep(0.26, { gc: 40 }),
    ];
    const flags = flagOutliers(reps);
    assert.equal(flags.length, 1);
    assert.match(flags[0].reasons.join(' | '), /ran 40 garbage collections in it, 100% off the median per request/);
    assert.doesNotMatch(flags[0].reasons.join(' | '), /nothing else/);
    const without = flagOutliers(reps.map((r, i) => (i === 2 ? { ...r, node: {} } : r)));
    assert.doesNotMatch(without[0].reasons.join(' | '), /garbage/, 'no GC reason when a repetition has no count');
  });

  it("says when the hypervisor took more of the node's cores in the flagged repetition (steal time)", () => {
    const reps = [
      rep(0.2, { steal: 0.001 }),
      rep(0.201, { steal: 0.002 }),
      rep(0.199, { steal: 0.001 }),
      rep(0.2, { steal: 0.003 }),
      rep(0.26, { steal: 0.08 }),
    ];
    const flags = flagOutliers(reps);
    assert.equal(flags.length, 1);
    assert.match(
      flags[0].reasons.join(' | '),
      /the hypervisor took 8\.0% of the node's cores in it \(steal time\), against a median of 0\.2%/,
    );
    const calm = flagOutliers(reps.map((r, i) => (i === 4 ? rep(0.26, { steal: 0.01 }) : r)));
    assert.doesNotMatch(
      calm[0].reasons.join(' | '),
      /hypervisor/,
      'a steal within 2 points of the median is no reason',
    );
  });

  it("summarizes the generator's own CPU per request when every repetition has it: the machine's noise", () => {
    const s = summarizeRepetitions([rep(0.2, { genUs: 50 }), rep(0.22, { genUs: 60 }), rep(0.24, { genUs: 70 })]);
    assert.equal(s.generator_us_per_request.median, 60);
    assert.ok(Math.abs(s.generator_us_per_request.cv - 10 / 60) < 1e-12);
    assert.ok(
      !(
        'generator_us_per_request' in
        summarizeRepetitions([rep(0.2, { genUs: 50 }), rep(0.22), rep(0.24, { genUs: 70 })])
      ),
      'not from some of them',
    );
  });

  it("says when the generator's own CPU per request moved with the node's: the machine ran slower", () => {
    const reps = [
      rep(0.2, { genUs: 50 }),
      rep(0.201, { genUs: 51 }),
      rep(0.199, { genUs: 49 }),
      rep(0.2, { genUs: 50 }),
      rep(0.26, { genUs: 64 }),
    ];
    const flags = flagOutliers(reps);
    assert.equal(flags.length, 1);
    assert.match(
      flags[0].reasons.join(' | '),
      /the generator's own CPU per request was 28% off its median: .* the machine itself ran slower or faster then/,
    );
    const steady = flagOutliers(reps.map((r, i) => (i === 4 ? rep(0.26, { genUs: 52 }) : r)));
    assert.doesNotMatch(steady[0].reasons.join(' | '), /generator's own/, 'within 10% of its median is no reason');
  });

  it('does not flag small spreads, nor anything with fewer than three repetitions', () => {
    assert.deepEqual(flagOutliers([rep(0.2), rep(0.204), rep(0.198), rep(0.206)]), []);
    assert.deepEqual(flagOutliers([rep(0.2), rep(0.9)]), []);
  });
});

describe('repetitions: one median, and a three-window outlier', () => {
  it('with three repetitions, one 22% off the other two is flagged', () => {
    const flags = flagOutliers([rep(0.4), rep(0.42), rep(0.5)]);
    assert.deepEqual(
      flags.map((f) => f.repetition),
      [3],
    );
    assert.ok(flags[0].deviation > 0.2);
  });

  it('three repetitions within the usual spread are not flagged', () => {
    assert.deepEqual(flagOutliers([rep(0.4), rep(0.41), rep(0.42)]), []);
  });

  it("with an even count, the table's median is the headline repetition's value, not a midpoint", () => {
    const reps = [rep(0.4), rep(0.1), rep(0.2), rep(0.3)];
    const s = summarizeRepetitions(reps);
    assert.equal(s.cpu_ms_per_request.median, reps[medianIndex(reps)].figures.cpu_ms_per_request);
  });
});
