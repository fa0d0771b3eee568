'use strict';
// figures.writes: one object for the Ethereum writers and the Substrate transfer workload; the write workloads' key checks.

const assert = require('node:assert/strict');
const { mergeWrites, writesFigures } = require('../../src/workload/write-figures');
const { resolveScenario } = require('../../src/scenario/resolve');
const { tmpDir, writeScenario } = require('../helpers');

const window = { start_ms: 0, end_ms: 10000 };

describe('write figures', () => {
  it('Ethereum: the workers\' tallies summed, tps over the window, inclusion percentiles', () => {
    const part = (sub, inc, lat, blocks) => ({ writes: { submitted: sub, included: inc, failed: 0, inclusion_ms: lat, included_blocks: blocks, errors: {} } });
    const writes = mergeWrites([part(5, 4, [100, 300, 200, 400], { 7: 2, 8: 2 }), { }, part(6, 6, [500, 600, 700, 800, 900, 1000], { 8: 3, 9: 3 })]);
    const f = writesFigures({ writes, window });
    assert.equal(f.submitted, 11);
    assert.equal(f.included, 10);
    assert.equal(f.tps, 1);
    assert.equal(f.submitted_tps, 1.1);
    assert.deepEqual(f.included_by_block, { 7: 2, 8: 5, 9: 3 });
    assert.equal(f.inclusion_ms.p50, 500);
    assert.equal(f.inclusion_ms.p99, 1000);
  });

  it('Substrate: the same fields from substrate.transactions; none without writes', () => {
    const substrate = { transactions: { submitted: 20, included: 18, failed: 1, errors: { x: 1 }, tps: 1.8, inclusion_latency_ms: { p50: 1, p95: 2, p99: 3, max: 4 } } };
    const f = writesFigures({ substrate, window });
    assert.deepEqual(f, { tps: 1.8, submitted_tps: 2, submitted: 20, included: 18, failed: 1, inclusion_ms: { p50: 1, p95: 2, p99: 3, max: 4 }, errors: { x: 1 } });
    assert.equal(writesFigures({ window }), null);
    assert.equal(mergeWrites([{}]), null);
  });

  it('keys: write workloads are a closed loop through ethers on an EVM chain', () => {
    const dir = tmpDir();
    const check = (lines) => resolveScenario(writeScenario(dir, 's', lines.join('\n')), { env: {}, dockerEngine: null }).errors.join('\n');
    assert.match(check(['WORKLOAD=eth-transfers', 'RATE=10']), /set CONCURRENCY, not RATE/);
    assert.match(check(['WORKLOAD=eth-token-transfers', 'GENERATOR=lean']), /signs through ethers/);
    assert.equal(check(['WORKLOAD=eth-transfers', 'RUNTIME=host']), '');
  });
});
