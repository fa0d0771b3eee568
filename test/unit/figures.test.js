'use strict';
const assert = require('node:assert/strict');
const { computeFigures, cpuDelta, cpuPerRequestSeries } = require('../../src/figures');
const { mergeSamples, newRecorder, partialSnapshot, percentile, classifyError } = require('../../src/workload/samples');

/** Samples of one worker: `lat` latencies of ok requests and `failed` failures, all in the second at t. */
function snapshot({ start, end, t, method = 'eth_call', lat = [], failed = {} }) {
  return {
    worker: 'w',
    start_at: start,
    end_at: end,
    before_window: 5,
    in_flight_at_end: 2,
    first_request_at: start - 1000,
    seconds: { [Math.floor(t / 1000)]: { [method]: { lat, failed } } },
    errors: {},
  };
}

describe('figures from known counters', () => {
  const window = { start_ms: 1_000_000, end_ms: 1_010_000 }; // 10 s

  it('CPU time per request is the CPU between the edges over the requests answered', () => {
    const cpu = cpuDelta({ user_s: 100, system_s: 20, total_s: 120 }, { user_s: 103, system_s: 21, total_s: 124 });
    assert.deepEqual(cpu, { user_s: 3, system_s: 1, total_s: 4 });
    const samples = mergeSamples([
      snapshot({ start: window.start_ms, end: window.end_ms, t: 1_005_000, lat: new Array(2000).fill(1) }),
    ]);
    const f = computeFigures({ window, cpu, idle: { cpu_s: 0.5, seconds: 5 }, samples });
    assert.equal(f.requests_ok, 2000);
    assert.equal(f.cpu_ms_per_request, 2); // 4 s * 1000 / 2000
    // idle 0.1 s per s over 10 s = 1 s: net (4 - 1) * 1000 / 2000
    assert.equal(f.cpu_ms_per_request_net, 1.5);
    assert.equal(f.rps, 200);
    assert.equal(f.idle_cpu_s_per_s, 0.1);
    assert.equal(f.methods.eth_call.rps, 200);
  });

  it('failed requests do not count as answered, and set the error rate', () => {
    const samples = mergeSamples([
      snapshot({ start: window.start_ms, end: window.end_ms, t: 1_001_000, lat: [1, 2, 3], failed: { rpc: 1 } }),
    ]);
    const f = computeFigures({ window, cpu: { user_s: 1, system_s: 0, total_s: 1.5 }, idle: null, samples });
    assert.equal(f.requests_ok, 3);
    assert.equal(f.requests_failed, 1);
    assert.equal(f.failures.rpc, 1);
    assert.equal(f.error_rate, 0.25);
    assert.equal(f.cpu_ms_per_request, 500);
    assert.equal(f.cpu_ms_per_request_net, null, 'no idle baseline, no net figure');
  });

  it('no successful request gives no CPU per request rather than a number', () => {
    const samples = mergeSamples([
      snapshot({ start: window.start_ms, end: window.end_ms, t: 1_001_000, failed: { timeout: 4 } }),
    ]);
    const f = computeFigures({
      window,
      cpu: { user_s: 1, system_s: 0, total_s: 1 },
      idle: { cpu_s: 1, seconds: 10 },
      samples,
    });
    assert.equal(f.cpu_ms_per_request, null);
    assert.equal(f.cpu_ms_per_request_net, null);
    assert.equal(f.error_rate, 1);
  });

  it('a source without user/system split gives null for both, and the total', () => {
    assert.deepEqual(
      cpuDelta({ user_s: null, system_s: null, total_s: 10 }, { user_s: null, system_s: null, total_s: 12.5 }),
      { user_s: null, system_s: null, total_s: 2.5 },
    );
  });

  it('CPU per request per second joins whole-second CPU ticks with the requests of that second', () => {
    const ticks = [
      { t_ms: 2000, total_s: 1 },
      { t_ms: 3000, total_s: 1.5 },
      { t_ms: 4000, total_s: 1.7 },
      { t_ms: 6000, total_s: 2 },
    ];
    const series = [
      { t_ms: 2000, ok: 100 },
      { t_ms: 3000, ok: 0 },
      { t_ms: 4000, ok: 50 },
    ];
    // 2..3 s: 0.5 s / 100; 3..4 s: no requests; 4..6 s: not one second
    assert.deepEqual(cpuPerRequestSeries(ticks, series), [{ t_ms: 2000, cpu_ms_per_request: 5 }]);
  });
});

describe('generator samples', () => {
  it('a request counts in the window when it completes inside [start, end)', () => {
    const rec = newRecorder({ start_at: 1000, end_at: 2000 }, 'w1');
    for (let i = 0; i < 4; i++) rec.started();
    assert.equal(rec.completed('eth_call', 5, null, 999), 'before');
    assert.equal(rec.completed('eth_call', 5, null, 1000), 'window');
    assert.equal(rec.completed('eth_call', 5, { kind: 'rpc', message: 'x' }, 1999), 'window');
    assert.equal(rec.completed('eth_call', 5, null, 2000), 'after');
    const snap = rec.snapshot();
    assert.equal(snap.before_window, 1);
    assert.equal(snap.in_flight_at_end, 1, 'the last one was sent at 1995: in flight at the end');
    const merged = mergeSamples([snap]);
    assert.equal(merged.ok, 1);
    assert.equal(merged.failed, 1);
    assert.deepEqual(merged.errors, { x: 1 });
  });

  it("in flight at the end: those sent before it and not done, whenever the end's timer fires", () => {
    const rec = newRecorder({ start_at: 1000, end_at: 2000 }, 'w1');
    for (let i = 0; i < 4; i++) rec.started();
    rec.completed('eth_call', 20, null, 1990); // inside
    rec.completed('eth_call', 30, null, 2010); // sent at 1980, done after the end, before the late timer
    rec.completed('eth_call', 5, null, 2020); // sent at 2015, after the end: not in flight at it
    rec.windowClosed(); // 40 ms late: one still in flight
    rec.completed('eth_call', 100, null, 2100);
    assert.equal(rec.snapshot().in_flight_at_end, 2);
  });

  it('in flight at the start: those unanswered when the window opened, kept through drains and merged', () => {
    const realNow = Date.now;
    let t = 900;
    Date.now = () => t;
    try {
      const spec = { start_at: 1000, end_at: 2000 };
      const rec = newRecorder(spec, 'w1');
      for (let i = 0; i < 3; i++) rec.started();
      rec.completed('eth_call', 50, null, 950);
      assert.equal(rec.snapshot().in_flight_at_start, 0, 'the window has not opened');
      t = 1005;
      rec.started(); // the window's first event: 2 were unanswered
      rec.completed('eth_call', 110, null, 1010);
      t = 1500;
      assert.equal(partialSnapshot([rec.drain(1500)], spec, 1500).in_flight_at_start, 2);
      const snap = rec.snapshot();
      assert.equal(snap.in_flight_at_start, 2);
      assert.equal(mergeSamples([snap, snap]).in_flight_at_start, 4);
      const idle = newRecorder(spec, 'w2'); // nothing started or answered since the window opened
      t = 900;
      idle.started();
      t = 1500;
      assert.equal(idle.snapshot().in_flight_at_start, 1);
    } finally {
      Date.now = realNow;
    }
  });

  it('merges workers: totals, per method, per second with the measured span of edge seconds', () => {
    const a = snapshot({ start: 1500, end: 3500, t: 1600, method: 'eth_call', lat: [1, 2] });
    const b = snapshot({ start: 1500, end: 3500, t: 3200, method: 'eth_getLogs', lat: [10], failed: { http: 2 } });
    const m = mergeSamples([a, b]);
    assert.equal(m.ok, 3);
    assert.equal(m.failed, 2);
    assert.equal(m.methods.eth_getLogs.requests_failed, 2);
    assert.equal(m.methods.eth_call.latency_ms.max, 2);
    assert.deepEqual(
      m.series.map((p) => [p.t_ms, p.span_ms, p.ok, p.failed]),
      [
        [1000, 500, 2, 0],
        [3000, 500, 1, 2],
      ],
    );
    assert.equal(m.before_window, 10);
    assert.equal(m.in_flight_at_end, 4);
    assert.equal(m.workers, 2);
  });

  it("a worker's record counts successes in 10 ms slots: each slot once across drains, every slot in the snapshot", () => {
    const rec = newRecorder({ start_at: 10_000, end_at: 13_000 }, 'w');
    const at = [10_005, 10_006, 10_012, 11_500, 12_990];
    for (const t of at) {
      rec.started();
      rec.completed('eth_call', 1, null, t);
    }
    const first = rec.drain(11_200); // whole seconds before 11 s
    assert.deepEqual(first.ok_slots, { 1000: 2, 1001: 1 });
    assert.deepEqual(Object.keys(first.seconds), ['10']);
    const second = rec.drain(13_000);
    assert.deepEqual(second.ok_slots, { 1150: 1, 1299: 1 }, 'slots drained before are not drained again');
    const snap = JSON.parse(JSON.stringify(rec.snapshot())); // as the worker writes it
    assert.deepEqual(snap.ok_slots, { 1000: 2, 1001: 1, 1150: 1, 1299: 1 });
    assert.equal(mergeSamples([snap]).okBetween(10_000, 13_000), 5);
    assert.equal(mergeSamples([snap]).okBetween(10_010, 12_000), 2);
    assert.equal(snap.sent_slots, undefined, 'no SHAPE: sends are not kept');
    assert.equal(mergeSamples([snap]).sentBetween(10_000, 13_000), null);
  });

  it("with a SHAPE, a worker's record counts the requests it sent in the window, in 10 ms slots", () => {
    const shape = { kind: 'spike', segments: [] };
    const realNow = Date.now;
    const sends = [9_990, 10_005, 10_006, 11_500, 12_990, 13_000];
    const recs = ['a', 'b'].map((w) => newRecorder({ start_at: 10_000, end_at: 13_000, shape }, w));
    try {
      for (const t of sends) {
        Date.now = () => t;
        recs[0].started();
      }
      Date.now = () => 11_505;
      recs[1].started();
    } finally {
      Date.now = realNow;
    }
    const snaps = recs.map((r) => JSON.parse(JSON.stringify(r.snapshot())));
    assert.deepEqual(snaps[0].sent_slots, { 1000: 2, 1150: 1, 1299: 1 }, 'only those sent inside the window');
    const m = mergeSamples(snaps);
    assert.equal(m.sentBetween(10_000, 13_000), 5, "both workers' sends");
    assert.equal(m.sentBetween(11_000, 12_000), 2);
    assert.equal(m.okBetween(10_000, 13_000), 0, 'none completed');
  });

  it('percentiles are nearest-rank', () => {
    const s = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(s, 50), 50);
    assert.equal(percentile(s, 99), 99);
    assert.equal(percentile(s, 100), 100);
    assert.equal(percentile([7], 95), 7);
    assert.equal(percentile([], 50), null);
  });

  it('classifies a JSON-RPC error inside HTTP 200, an HTTP error, a timeout and a refused connection', () => {
    assert.equal(classifyError({ error: { code: -32000, message: 'execution reverted' } }).kind, 'rpc');
    assert.equal(classifyError({ code: 'SERVER_ERROR', response: { statusCode: 503 } }).kind, 'http');
    assert.equal(classifyError({ code: 'TIMEOUT' }).kind, 'timeout');
    assert.equal(classifyError(new Error('connect ECONNREFUSED')).kind, 'other');
  });
});

describe("the window's end edge read late", () => {
  it("requests completed after the window's end, up to the instant the CPU was read, are counted with that CPU; not in the window's figures", () => {
    const start = 2_000_000;
    const end = start + 10_000;
    const rec = newRecorder({ start_at: start, end_at: end, stop_at: end + 1000 }, 'w');
    // 100 requests per second from the window's start until the load stops, 1 s after its end
    for (let t = start; t < end + 1000; t += 10) {
      rec.started();
      if (t === end) rec.windowClosed();
      rec.completed('eth_call', 1, null, t);
    }
    const samples = mergeSamples([rec.snapshot()]);
    assert.equal(samples.ok, 1000, "the window's own figures: completions inside it only");
    // The end edge was read 300 ms late: the CPU covers 10.3 s of load, and so do the requests it is divided by.
    const cpuWindow = { start_ms: start, end_ms: end + 300, requests_ok: samples.okBetween(start, end + 300) };
    assert.equal(cpuWindow.requests_ok, 1030);
    const f = computeFigures({
      window: { start_ms: start, end_ms: end },
      cpu: { user_s: 0.8, system_s: 0.23, total_s: 1.03 },
      idle: null,
      samples,
      cpuWindow,
    });
    assert.ok(Math.abs(f.cpu_ms_per_request - 1) < 1e-9, 'no inflation by lateness / window');
    assert.equal(f.rps, 100);
  });

  it("the requests in flight at the window's end are those it did not see complete, not those left when the load stopped", () => {
    const rec = newRecorder({ start_at: 0, end_at: 1000, stop_at: 2000 }, 'w');
    rec.started();
    rec.started();
    rec.completed('eth_call', 1, null, 500);
    rec.windowClosed();
    rec.completed('eth_call', 1, null, 1500);
    assert.equal(rec.snapshot().in_flight_at_end, 1);
  });
});

describe('requests between two instants', () => {
  it("okBetween of the window's own edges counts exactly its requests, also when the edges fall inside a 10 ms slot", () => {
    const start = 3_000_003;
    const end = start + 1000;
    const rec = newRecorder({ start_at: start, end_at: end, stop_at: end + 500 }, 'w');
    for (let t = start - 20; t < end + 500; t += 1) {
      rec.started();
      rec.completed('eth_call', 1, null, t);
    }
    const samples = mergeSamples([rec.snapshot()]);
    assert.equal(samples.ok, 1000);
    assert.equal(samples.okBetween(start, end), samples.ok);
    assert.equal(
      samples.okBetween(start, start + 500) + samples.okBetween(start + 500, end),
      samples.ok,
      'segments partition the window',
    );
  });
});
