'use strict';
const assert = require('node:assert/strict');
const { addPrometheusCheck } = require('../../src/measure/prometheus-check');

// A window long past: the cross-check's wait for the scrape after its end is over at once.
const w = { start: 1_000_000, end: 1_010_000 };
const signal = new AbortController().signal;

/**
 * A Prometheus that answers the fleet's queries from `counters` ({replica: [value at start, value at end]}, null where
 * it has no sample) and `inside` ({replica: samples inside the window}); queries records every query it was asked.
 */
function fakePrometheus(counters, inside) {
  const queries = [];
  const at = (ms) => (ms === w.start ? 0 : 1);
  const vector = (query, ms) => {
    queries.push(query);
    const rows = query.includes('count_over_time')
      ? Object.entries(inside)
      : Object.entries(counters)
          .map(([r, v]) => [r, v[at(ms)]])
          .filter(([, v]) => v !== null);
    return rows.length ? Object.fromEntries(rows) : null;
  };
  return {
    queries,
    async vectorAt(query, ms) {
      return vector(query, ms);
    },
    async valueAt(query, ms) {
      const v = vector(query, ms);
      return v ? Object.values(v).reduce((a, b) => a + b, 0) : null;
    },
  };
}

const fleet = (lost = []) => ({ replicas: [{ name: 'replica-1' }, { name: 'replica-2' }], lost });

async function check(stack) {
  const node = {};
  const warnings = [];
  await addPrometheusCheck(node, { stack, runId: 'r1', w, signal, name: 'the window', warnings });
  return { node, warnings };
}

describe('the Prometheus cross-check (prometheus-check.js)', () => {
  it("sums a fleet's replicas, each one's rise apart, when every replica was scraped inside the window", async () => {
    const prometheus = fakePrometheus(
      { 'replica-1': [100, 400], 'replica-2': [50, 250] },
      { 'replica-1': 10, 'replica-2': 10 },
    );
    const { node, warnings } = await check({ prometheus, fleet: fleet() });
    assert.equal(node.rpc_requests, 500);
    assert.deepEqual(node.rpc_requests_by_replica, { 'replica-1': 300, 'replica-2': 200 });
    assert.equal(node.rpc_requests_unscraped, undefined);
    assert.deepEqual(warnings, []);
    assert.ok(prometheus.queries.every((q) => q.includes('run_id="r1"')));
  });

  it('names a replica with no scrape inside the window, in the record and the warnings, rather than count it as zero', async () => {
    // replica-2's last sample before the window is still within the lookback at both edges: its rise would read 0
    const prometheus = fakePrometheus({ 'replica-1': [100, 400], 'replica-2': [50, 50] }, { 'replica-1': 10 });
    const { node, warnings } = await check({ prometheus, fleet: fleet() });
    assert.equal(node.rpc_requests, 300);
    assert.deepEqual(node.rpc_requests_by_replica, { 'replica-1': 300, 'replica-2': null });
    assert.deepEqual(node.rpc_requests_unscraped, ['replica-2']);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /no scrape of replica-2 inside the window: its request counter \(300\) leaves out/);
  });

  it('does not name a replica that was gone before the window opened (an earlier FAULT)', async () => {
    const prometheus = fakePrometheus({ 'replica-1': [100, 400], 'replica-2': [50, 50] }, { 'replica-1': 10 });
    const { node, warnings } = await check({
      prometheus,
      fleet: fleet([{ replica: 'replica-2', at_ms: w.start - 5000 }]),
    });
    assert.equal(node.rpc_requests, 300);
    assert.deepEqual(node.rpc_requests_by_replica, { 'replica-1': 300 });
    assert.equal(node.rpc_requests_unscraped, undefined);
    assert.deepEqual(warnings, []);
  });

  it("one node: the counter's rise and the instants of the scrapes it is between", async () => {
    const prometheus = {
      async valueAt(query, ms) {
        if (query.startsWith('max(timestamp(')) return ms / 1000 - 0.4;
        return ms === w.start ? 1000 : 1990;
      },
    };
    const { node, warnings } = await check({ prometheus });
    assert.equal(node.rpc_requests, 990);
    assert.deepEqual(node.rpc_requests_span_ms, [w.start - 400, w.end - 400]);
    assert.deepEqual(warnings, []);
  });

  it('a Prometheus that does not answer: the cross-check is null and the run warns', async () => {
    const prometheus = {
      async valueAt() {
        throw new Error('Prometheus at http://x did not answer within 5000 ms');
      },
    };
    const { node, warnings } = await check({ prometheus });
    assert.equal(node.rpc_requests, null);
    assert.match(warnings[0], /cross-check is missing for the window \(Prometheus at http:\/\/x did not answer/);
  });
});
