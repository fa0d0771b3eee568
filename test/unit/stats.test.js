'use strict';
const assert = require('node:assert/strict');
const { summarize, welch, median, t95 } = require('../../src/stats');
const { verdict } = require('../../src/verdict');

describe('statistics', () => {
  it('summarizes repetitions: median, mean, Student-t 95% interval, CV', () => {
    const s = summarize([10, 12, 14]);
    assert.equal(s.n, 3);
    assert.equal(s.median, 12);
    assert.equal(s.mean, 12);
    // sd = 2, t(2) = 4.303, half = 4.303 * 2 / sqrt(3)
    assert.ok(Math.abs(s.ci95[1] - (12 + (4.303 * 2) / Math.sqrt(3))) < 1e-9);
    assert.ok(Math.abs(s.cv - 2 / 12) < 1e-12);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  it('one value has no interval and no CV; missing values are ignored', () => {
    assert.deepEqual(summarize([5, null]), { n: 1, median: 5, mean: 5, ci95: null, cv: null });
    assert.equal(summarize([]).n, 0);
  });

  it('t critical values: tabled, interpolated, and the normal limit', () => {
    assert.equal(t95(1), 12.706);
    assert.equal(t95(30), 2.042);
    assert.ok(t95(2.5) < 4.303 && t95(2.5) > 3.182);
    assert.equal(t95(1000), 1.96);
  });

  it('Welch: a shift far beyond the spread is significant, one inside it is not', () => {
    const a = [10, 10.2, 9.8, 10.1, 9.9];
    assert.equal(
      welch(
        a,
        a.map((x) => x + 2),
      ).significant,
      true,
    );
    assert.equal(
      welch(
        a,
        a.map((x) => x + 0.05),
      ).significant,
      false,
    );
    assert.equal(welch([1], [2, 3]), null, 'one sample says nothing about noise');
  });
});

describe('verdict', () => {
  const figures = { cpu_ms_per_request: 0.2, latency_ms: { p99: 40 }, error_rate: 0.001, rps: 3000 };
  const none = { MAX_CPU_MS_PER_REQUEST: null, MAX_P99_MS: null, MAX_ERROR_RATE: null, MIN_RPS: null };

  it('no bound, no verdict', () => {
    assert.equal(verdict(none, figures), null);
  });

  it('passes when every bound holds, and names each failing bound with its value', () => {
    assert.equal(verdict({ ...none, MAX_CPU_MS_PER_REQUEST: 0.25, MIN_RPS: 1000 }, figures).pass, true);
    const v = verdict(
      { ...none, MAX_CPU_MS_PER_REQUEST: 0.1, MAX_P99_MS: 50, MAX_ERROR_RATE: 0, MIN_RPS: 5000 },
      figures,
    );
    assert.equal(v.pass, false);
    assert.deepEqual(v.failed, [
      'MAX_CPU_MS_PER_REQUEST=0.1: cpu_ms_per_request was 0.2 ms',
      'MAX_ERROR_RATE=0: error_rate was 0.001',
      'MIN_RPS=5000: rps was 3000 requests/s',
    ]);
    assert.equal(v.checks.find((c) => c.key === 'MAX_P99_MS').pass, true);
  });

  it('a run without figures fails its bounds', () => {
    const v = verdict({ ...none, MIN_RPS: 1 }, undefined);
    assert.equal(v.pass, false);
    assert.deepEqual(v.failed, ['MIN_RPS=1: rps was not measured']);
  });
});
