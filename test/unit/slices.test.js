'use strict';
// Windows made of slices (an interleaved A/B pair, src/measure/slices.js): the schedule, and the figures summed over
// a side's slices.

const assert = require('node:assert/strict');
const {
  planSlices,
  sendingTimes,
  answeredIn,
  sliceStall,
  sliceHalves,
  spansOf,
  readInnerEdges,
  JITTER,
  READ_AHEAD_MS,
} = require('../../src/measure/slices');
const { nodeCpuOver, nodeRecord } = require('../../src/measure/window-records');
const { computeFigures } = require('../../src/figures');

/** Merged samples that answer okBetween from a list of completion instants. */
const samplesAt = (times, extra = {}) => ({
  okBetween: (a, b) => times.filter((t) => t >= a && t < b).length,
  ok: times.length,
  failed: 0,
  first_request_at: times.length ? times[0] : null,
  in_flight_at_end: 0,
  ...extra,
});
const edge = (at, total, more = {}) => ({ at_ms: at, cpu: { user_s: total, system_s: 0, total_s: total }, ...more });
/** The spans of edge readings made at the slices' planned instants (start, end, start, end, ...). */
const spansAt = (edges) =>
  spansOf(
    edges,
    edges.filter((_, i) => i % 2 === 0).map((a, i) => ({ from: a.at_ms, to: edges[2 * i + 1].at_ms })),
  );

describe('windows made of slices', () => {
  it('tiles one span in turns, A then B, each side loaded as long as the other, aligned to 10 ms', () => {
    const plan = planSlices({ fromMs: 1003, perSideMs: 10000, sliceMs: 1000, seed: 7 });
    assert.equal(plan.first.length, 10);
    assert.equal(plan.second.length, 10);
    const all = plan.first.flatMap((a, i) => [a, plan.second[i]]);
    assert.equal(all[0].from, plan.start);
    assert.equal(plan.start, 1000, 'aligned to a 10 ms slot');
    for (let i = 1; i < all.length; i++) assert.equal(all[i].from, all[i - 1].to, 'no hole, no overlap');
    assert.equal(all[all.length - 1].to, plan.end);
    const total = (xs) => xs.reduce((t, x) => t + x.to - x.from, 0);
    assert.equal(total(plan.first), total(plan.second), 'both sides loaded for the same time');
    for (const x of all) {
      assert.equal(x.from % 10, 0);
      assert.equal(x.to % 10, 0);
      const len = x.to - x.from;
      assert.ok(len >= 1000 * (1 - JITTER) - 10 && len <= 1000 * (1 + JITTER) + 10, `${len} ms`);
    }
    const lengths = plan.first.map((x) => x.to - x.from);
    assert.ok(new Set(lengths).size > 3, 'the lengths vary (a period of the node never keeps step with them)');
    assert.deepEqual(planSlices({ fromMs: 1003, perSideMs: 10000, sliceMs: 1000, seed: 7 }), plan, 'seeded');
    assert.notDeepEqual(planSlices({ fromMs: 1003, perSideMs: 10000, sliceMs: 1000, seed: 8 }), plan);
  });

  it("stops a slice's sending a gap before its end", () => {
    assert.deepEqual(
      sendingTimes(
        [
          { from: 0, to: 1000 },
          { from: 2000, to: 2500 },
        ],
        50,
      ),
      [
        [0, 950],
        [2000, 2450],
      ],
    );
  });

  it("sums a side's CPU and requests over its own slices only, and its time is theirs", async () => {
    // two slices of A: 0-1000 (0.9 s of CPU) and 2000-3000 (0.8 s); between them, A idle (0.05 s, not counted)
    const edges = [edge(0, 10), edge(1000, 10.9), edge(2000, 10.95), edge(3000, 11.75)];
    const times = [...Array(100).keys()].map((i) => i * 10).concat([...Array(60).keys()].map((i) => 2000 + i * 10));
    times.push(1500); // a late answer, outside A's slices
    const samples = samplesAt(times);
    const m = { w: { start: 0, end: 3000 }, spans: spansAt(edges), startEdge: edges[0], endEdge: edges[3] };
    const { cpu, cpuWindow } = await nodeCpuOver(m, { cpu: {} }, samples);
    assert.equal(cpu.total_s, 1.7);
    assert.equal(cpuWindow.requests_ok, 160);
    assert.equal(cpuWindow.active_ms, 2000);
    assert.equal(cpuWindow.slices, 2);
    assert.equal(cpuWindow.answered_outside_slices, 1);
    const f = computeFigures({
      window: { start_ms: 0, end_ms: 3000, active_ms: 2000 },
      cpu,
      idle: { cpu_s: 0.1, seconds: 2 },
      samples: { ...samples, ok: 160, methods: {}, latency_ms: {} },
      cpuWindow,
    });
    assert.equal(f.cpu_ms_per_request, 1.7 / 0.16);
    assert.equal(f.rps, 80, 'requests over the time in its slices');
    assert.equal(f.cpu_ms_per_request_net, Number(((1.7 - 0.05 * 2) / 0.16).toFixed(6)), 'idle over that time too');
  });

  it('sums the cross-check and the disk counters over the same slices', async () => {
    const io = (at, read, write) => ({ read_bytes: read, write_bytes: write, at_ms: at });
    const cg = (at, r) => ({
      read_bytes: r,
      write_bytes: 0,
      read_ops: r / 10,
      write_ops: 0,
      major_faults: 0,
      at_ms: at,
    });
    const check = (t) => ({ user_s: t, system_s: 0, total_s: t });
    const edges = [
      edge(0, 1, { check: check(1), io: io(0, 0, 0), cg: cg(0, 0) }),
      edge(1000, 2, { check: check(2), io: io(1000, 100, 10), cg: cg(1000, 100) }),
      edge(2000, 5, { check: check(5), io: io(2000, 900, 90), cg: cg(2000, 900) }),
      edge(3000, 6, { check: check(6), io: io(3000, 1000, 100), cg: cg(3000, 1000) }),
    ];
    const samples = samplesAt([10, 20, 2010]);
    const m = {
      w: { start: 0, end: 3000 },
      spans: spansAt(edges),
      startEdge: edges[0],
      endEdge: edges[3],
      sampler: { memory: [] },
      explained: {},
    };
    const stack = { cpu: {}, cpuCheck: { kind: 'pid', describe: 'x' }, ioCounters: { describe: 'y' } };
    const node = nodeRecord(m, stack, await nodeCpuOver(m, stack, samples), { ...samples, ok: 3 });
    assert.equal(node.cpu_total_s, 2);
    assert.equal(node.cpu_check.total_s, 2, 'the check over the slices, not over the whole span (5)');
    assert.equal(node.disk_read_bytes, 200);
    assert.equal(node.disk_write_bytes, 20);
    assert.equal(node.io.read_bytes, 200);
    assert.equal(node.io.requests_ok, 3);
    assert.equal(node.io.seconds, 2);
  });

  it("finds a stall in a side's own slices, not in the other side's between them", () => {
    const edges = [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000].map((t) => edge(t, 0));
    const spans = spansAt(edges); // slices 0-1, 2-3, 4-5, 6-7 s
    // answers in the first slice only; the next three slices (3 s of its own time) without one
    const samples = samplesAt([100, 200], { in_flight_at_end: 4 });
    assert.equal(sliceStall(samples, spans, 5), null, '3 s of its own time is below STALL_S=5');
    const stall = sliceStall(samples, spans, 3);
    assert.equal(stall.seconds, 3);
    assert.equal(stall.at_end, true);
    assert.equal(stall.requests_waiting, 4);
    const busy = samplesAt([100, 2100, 4100, 6100]);
    assert.equal(sliceStall(busy, spans, 1), null, 'a request in each of its slices: no stall');
  });

  it('splits a window of slices in halves (its first slices against its last) and counts what they answered', () => {
    const edges = [edge(0, 0), edge(1000, 1), edge(2000, 1), edge(3000, 3)];
    const samples = samplesAt([...Array(10).keys()].map((i) => i * 100).concat([2100, 2200, 2300, 2400, 2500]));
    assert.deepEqual(sliceHalves(spansAt(edges), samples), { first: 100, second: 400 });
    assert.deepEqual(answeredIn(spansAt(edges), samples, { start: 0, end: 3000 }), { inside: 15, outside: 0 });
  });

  it("counts a slice's requests over the slice as planned, its CPU between the readings around it", async () => {
    // read 3 ms late at the start (a busy event loop) and 2 ms late at the end: the requests of the slice's first
    // milliseconds are its own all the same
    const edges = [edge(997, 1), edge(2002, 2)];
    const spans = spansOf(edges, [{ from: 1000, to: 2000 }]);
    const samples = samplesAt([1001, 1500, 1999, 2001]);
    const m = { w: { start: 1000, end: 2000 }, spans, startEdge: edges[0], endEdge: edges[1] };
    const { cpu, cpuWindow } = await nodeCpuOver(m, { cpu: {} }, samples);
    assert.equal(cpu.total_s, 1);
    assert.equal(cpuWindow.requests_ok, 3);
    assert.equal(cpuWindow.active_ms, 1000, 'the slice as planned');
    assert.equal(cpuWindow.answered_outside_slices, 1, 'the answer after its end');
  });

  it("reads each slice's start a little ahead of it, where its node is idle, and its end at its end", async () => {
    const reads = [];
    const stack = { node: {}, cpu: { read: async () => ({ user_s: 0, system_s: 0, total_s: reads.length }) } };
    const t = Date.now() + 100;
    const slices = [
      { from: t, to: t + 50 },
      { from: t + 150, to: t + 200 },
    ];
    for (const r of await readInnerEdges(stack, slices, new AbortController().signal)) reads.push(r.at_ms);
    assert.equal(reads.length, 2, "the first slice's end and the second's start");
    assert.ok(reads[0] >= t + 50 && reads[0] < t + 150 - READ_AHEAD_MS, `its end read at ${reads[0] - t} ms`);
    assert.ok(reads[1] >= t + 150 - READ_AHEAD_MS, `${reads[1] - t} ms`);
    assert.ok(reads[1] < t + 150, `the next start read before it begins: ${reads[1] - t} ms`);
  });
});
