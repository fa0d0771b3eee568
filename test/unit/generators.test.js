'use strict';
// GENERATORS=N: how the load and the cores are divided between generator
// processes, that their latencies merge into exact percentiles, each one's
// record, and the keys' checks.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { generatorCores, generatorShare, shareOf, parseCpuList } = require('../../src/workload/split');
const { Recorder, mergeSamples } = require('../../src/workload/samples');
const { percentile } = require('../../src/stats');
const { shapeOf } = require('../../src/workload/shapes');
const { perGenerator } = require('../../src/measure/window-records');
const { resolveScenario } = require('../../src/scenario/resolve');
const { seededRandom } = require('../../src/util/random');
const { tmpDir, writeScenario } = require('../helpers');

describe('several load generators (GENERATORS)', () => {
  it('pins each generator to its own cores when there are enough, and shares them in turn when not', () => {
    assert.deepEqual(parseCpuList('0-2,5'), [0, 1, 2, 5]);
    assert.deepEqual(generatorCores('1-4', 2), { cpus: ['1,2', '3,4'], shared: false });
    assert.deepEqual(generatorCores('1-3', 3), { cpus: ['1', '2', '3'], shared: false });
    assert.deepEqual(generatorCores('1', 3), { cpus: ['1', '1', '1'], shared: true });
    assert.deepEqual(generatorCores('2-3', 3), { cpus: ['2', '3', '2'], shared: true });
  });

  it('divides the users or the rate so that the shares add up to what the scenario asks', () => {
    for (const [total, n] of [
      [32, 3],
      [7, 7],
      [1001, 4],
    ]) {
      const shares = Array.from({ length: n }, (_, i) => shareOf(total, n, i));
      assert.equal(
        shares.reduce((a, b) => a + b, 0),
        total,
      );
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1, `${shares}`);
    }
    const spec = { seed: 42, shape: null, start_at: 1, end_at: 2 };
    const closed = [0, 1, 2].map((i) => generatorShare({ CONCURRENCY: 32, RATE: null }, spec, 3, i));
    assert.deepEqual(
      closed.map((x) => x.scenario.CONCURRENCY),
      [11, 11, 10],
    );
    assert.equal(new Set(closed.map((x) => x.spec.seed)).size, 3, 'each generator draws its own sequence');
    assert.deepEqual(
      closed.map((x) => [x.spec.generator_index, x.spec.start_at, x.spec.end_at]),
      [
        [0, 1, 2],
        [1, 1, 2],
        [2, 1, 2],
      ],
    );
    assert.equal(generatorShare({ CONCURRENCY: 32 }, spec, 1, 0).spec, spec, 'one generator runs the spec as it is');
  });

  it("divides an open loop's shape with its rate: the generators' shapes add up to the scenario's", () => {
    const s = { RATE: 301, DURATION_S: 20, SHAPE: 'spike', SPIKE_FACTOR: 3, SPIKE_S: 4 };
    const shape = shapeOf(s);
    const parts = [0, 1].map((i) => generatorShare(s, { seed: 1, shape }, 2, i));
    assert.deepEqual(
      parts.map((p) => p.scenario.RATE),
      [151, 150],
    );
    for (const k of [0, 1, 2]) {
      const summed = parts.reduce((a, p) => a + p.spec.shape.segments[k].rps, 0);
      assert.ok(Math.abs(summed - shape.segments[k].rps) < 1e-9, `segment ${k}: ${summed}`);
    }
    assert.ok(Math.abs(parts[0].spec.shape.peak_rps + parts[1].spec.shape.peak_rps - shape.peak_rps) < 1e-9);
  });

  /** Two generators' workers, each recording its own latencies, as they would in a window [1000 s, 1010 s). */
  function recordedWindow() {
    const spec = { start_at: 1_000_000, end_at: 1_010_000, stop_at: 1_010_000 };
    const random = seededRandom(7);
    const raw = [];
    const snapshots = [];
    for (const generator of [0, 1]) {
      for (const worker of [0, 1]) {
        const rec = new Recorder(spec, `${generator}-${worker}`);
        // the generators differ: the second one's latencies are slower and heavier-tailed
        const n = generator ? 700 : 1300;
        for (let k = 0; k < n; k++) {
          rec.started();
          const latency = generator ? 5 + 40 * random() ** 4 : 1 + 3 * random();
          const method = k % 3 ? 'eth_call' : 'eth_getBalance';
          const failure = k % 97 === 0 ? { kind: 'rpc', message: 'JSON-RPC -32000: x' } : null;
          rec.completed(method, latency, failure, spec.start_at + Math.floor((k * 9999) / n));
          if (!failure) raw.push({ method, latency: Math.round(latency * 1000) / 1000 });
        }
        snapshots.push({ ...rec.snapshot(), generator });
      }
    }
    return { raw, snapshots, spec };
  }

  it("merges every generator's latencies: the merged p50, p99 and max equal those of all raw latencies", () => {
    const { raw, snapshots } = recordedWindow();
    const merged = mergeSamples(snapshots);
    const sorted = raw.map((x) => x.latency).sort((a, b) => a - b);
    assert.equal(merged.ok, raw.length);
    assert.equal(merged.latency_ms.p50, percentile(sorted, 50));
    assert.equal(merged.latency_ms.p99, percentile(sorted, 99));
    assert.equal(merged.latency_ms.max, sorted[sorted.length - 1]);
    const calls = raw
      .filter((x) => x.method === 'eth_call')
      .map((x) => x.latency)
      .sort((a, b) => a - b);
    assert.equal(merged.methods.eth_call.latency_ms.p99, percentile(calls, 99));
    // averaging the two generators' p99s would not give it: the test would catch a merge that did
    const byGen = [0, 1].map((g) => mergeSamples(snapshots.filter((x) => x.generator === g)).latency_ms.p99);
    assert.notEqual(merged.latency_ms.p99, (byGen[0] + byGen[1]) / 2);
  });

  it("gives each generator's requests from its own workers and its CPU from its own cgroup readings", () => {
    const { snapshots, spec } = recordedWindow();
    const merged = mergeSamples(snapshots);
    const m = {
      w: { start: spec.start_at, end: spec.end_at },
      generatorRuns: [
        { index: 0, cpus: '1', offered: { users: 16 } },
        { index: 1, cpus: '2-3', offered: { users: 16 } },
      ],
      gensStart: [{ total_s: 10 }, { total_s: 20 }],
      gensEnd: [{ total_s: 15 }, { total_s: 24 }],
    };
    const out = perGenerator(m, snapshots);
    assert.deepEqual(
      out.map((g) => g.requests),
      [2600, 1400],
    );
    assert.equal(out[0].requests + out[1].requests, merged.ok + merged.failed);
    assert.deepEqual(
      out.map((g) => [g.workers, g.requests_per_s, g.cpu_s, g.cpu_utilization]),
      [
        [2, 260, 5, 0.5],
        [2, 140, 4, 0.2],
      ],
    );
    assert.equal(out[1].cpu_us_per_request, Number(((4 * 1e6) / 1400).toFixed(1)));
  });

  it('refuses a share of nothing and a replay split between processes, before anything starts', () => {
    const dir = tmpDir();
    const check = (lines) =>
      resolveScenario(writeScenario(dir, 's', lines.join('\n')), { env: {}, dockerEngine: null }).errors.join('\n');
    assert.match(check(['GENERATORS=4', 'CONCURRENCY=3']), /CONCURRENCY=3 leaves a generator without a user/);
    assert.match(check(['GENERATORS=4', 'RATE=3']), /RATE=3 leaves a generator without a request a second/);
    const capture = path.join(dir, 'cap.jsonl');
    const call = { t: 1_700_000_000_000, transport: 'http', method: 'eth_blockNumber', params: [], batch: null };
    fs.writeFileSync(capture, `${JSON.stringify(call)}\n`);
    assert.match(check(['GENERATORS=2', `WORKLOAD=replay:${capture}`]), /a replay keeps the capture's one timeline/);
    assert.equal(check(['GENERATORS=2', 'CONCURRENCY=8']), '');
    assert.match(check(['GENERATORS=0']), /GENERATORS/);
  });
});
