'use strict';
// npm run bench's window against a target: a generator that was not sending when the window opened is named as such
// (benchArtillery measures it again), and a window in which the target counted nothing gives no figure.
const assert = require('node:assert/strict');
const { measureEdges, waitTargetIdle } = require('../../scripts/lib/bench-generators');

/** A target whose counter rises by 100 a second from sendingFrom on; its generator's CPU a tenth of the clock. */
function fakeTarget(sendingFrom) {
  const t0 = Date.now();
  return {
    group: { cpu: () => ({ total_s: (Date.now() - t0) / 10000 }) },
    requests: async () => Math.max(0, Math.floor((Date.now() - sendingFrom) / 10)),
  };
}

describe('npm run bench: a window against a target', () => {
  it('a generator sending from before the window: figures, not late', async () => {
    const start = Date.now() + 50;
    const f = await measureEdges(fakeTarget(start - 1000), start, start + 1000);
    assert.equal(f.late, false);
    assert.ok(f.rps > 80 && f.rps < 120, String(f.rps));
    assert.ok(f.us_per_request > 500 && f.us_per_request < 2000, String(f.us_per_request));
  });

  it('one that began sending after the window opened is late; one that never sent gives no figure', async () => {
    const start = Date.now() + 50;
    assert.equal((await measureEdges(fakeTarget(start + 800), start, start + 1200)).late, true);
    const never = fakeTarget(Date.now() + 3600e3);
    const later = Date.now() + 50;
    await assert.rejects(measureEdges(never, later, later + 700), (err) => err.late && /no request/.test(err.message));
  });
});

describe('npm run bench: between generators', () => {
  it('waits until the node has served what the last generator left queued; fails when it never stops', async () => {
    const t0 = Date.now();
    const draining = { requests: async () => Math.floor(Math.min(Date.now() - t0, 700) / 10) };
    await waitTargetIdle(draining);
    assert.ok(Date.now() - t0 >= 700, `returned ${Date.now() - t0} ms after, while the counter still rose`);
    const busy = { requests: async () => Date.now() };
    await assert.rejects(waitTargetIdle(busy, 0.5), /still served requests 0.5 s after the last generator stopped/);
  });
});

describe('npm run bench:runners: the runners compared pair by pair', () => {
  it('prints the ratio runner / artillery with its interval over the pairs, and the key=value figures', () => {
    const { summary } = require('../../scripts/bench-runners');
    const pair = (runner, artillery) => ({
      chainperf: { us_per_request: runner, rps: 1000 },
      artillery: { us_per_request: artillery, rps: 1000 },
    });
    const lines = [];
    const log = console.log;
    console.log = (line) => lines.push(line);
    let kv;
    try {
      kv = summary('ws', [pair(30, 30), pair(33, 30), pair(27, 30)]);
    } finally {
      console.log = log;
    }
    // log ratios 0, ln 1.1, ln 0.9: their mean's exp is 0.997, its interval wide over 3 pairs
    assert.equal(kv.ws_runner_over_artillery, '1.00');
    const [lo, hi] = kv.ws_runner_over_artillery_ci95.split('-').map(Number);
    assert.ok(lo < 0.8 && hi > 1.2, kv.ws_runner_over_artillery_ci95);
    assert.equal(kv.ws_runner_us_per_request, '30.0');
    assert.equal(kv.ws_artillery_us_per_request, '30.0');
    assert.match(
      lines[0],
      /^ws +lean runner 30\.0 us\/request, artillery 30\.0 \(medians\); runner \/ artillery 1\.00 \(95% interval [\d.]+-[\d.]+ over 3 pairs; per pair 1\.00, 1\.10, 0\.90\)$/,
    );
  });
});
