'use strict';
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { windowProbeUs, probeShare } = require('../../scripts/lib/speed-probe');

/** Probe units every 100 ms from t0 for `s` seconds, each costing cost(t) us. */
const units = (t0, s, cost) => Array.from({ length: s * 10 }, (_, i) => [t0 + i * 100, cost(t0 + i * 100)]);

describe("bench:ab's speed probe", () => {
  it("a window's figure is the mean of the units inside it (a burst counts, as in the node's figure), none with fewer than 5", () => {
    const u = [...units(0, 1, () => 1000), [1050, 5000], ...units(2000, 1, () => 1200)];
    assert.equal(windowProbeUs(u, { start_ms: 0, end_ms: 999 }), 1000);
    assert.equal(windowProbeUs(u, { start_ms: 0, end_ms: 1050 }), (10 * 1000 + 5000) / 11);
    assert.equal(windowProbeUs(u, { start_ms: 2000, end_ms: 2999 }), 1200);
    assert.equal(windowProbeUs(u, { start_ms: 1000, end_ms: 1999 }), null, 'one unit only');
  });

  it("pairs whose node B/A follows the probe's: correlation, spread without it, and the A/B session's probe shift", () => {
    const speed = [1.08, 0.95, 1.12, 0.9, 1.03, 0.97];
    const noise = [1.01, 0.99, 0.995, 1.005, 1.0, 1.0];
    // window i of side A at 20 s * (2i), of B at 20 s * (2i + 1): the probe costs 1000 us * the machine's slowness
    const cost = (t) => {
      const slot = Math.floor(t / 20000);
      return slot % 2 ? 1000 * speed[(slot - 1) / 2] : 1000;
    };
    const u = units(0, 20 * 2 * speed.length, cost);
    const win = (slot, node) => ({
      window: { start_ms: slot * 20000, end_ms: slot * 20000 + 10000 },
      figures: { cpu_ms_per_request: node },
      generator: { cpu_us_per_request: 40 },
    });
    const pairs = speed.map((s, i) => ({ a: win(2 * i, 0.2), b: win(2 * i + 1, 0.2 * s * noise[i]) }));
    const aa = [{ doc: { pairs } }];
    const out = probeShare(u, aa, { doc: { pairs } });
    assert.equal(out.aa_probe_pairs, 6);
    assert.ok(Number(out.aa_probe_correlation) > 0.95, JSON.stringify(out));
    assert.ok(Number(out.aa_pair_sd_without_probe_pct) < 1.2 && Number(out.aa_probe_sd_pct) > 5, JSON.stringify(out));
    assert.equal(out.aa_probe_gen_correlation, 'n/a', 'the generator did not move: no correlation to give');
    // the probe's mean B/A over the A/B pairs: the machine's mean slowness toward B here
    const shift = (Math.exp(speed.reduce((a, s) => a + Math.log(s), 0) / speed.length) - 1) * 100;
    assert.equal(out.ab_probe_shift_pct, shift.toFixed(2));
    assert.ok(Number(out.ab_probe_shift_ci_low) < shift && Number(out.ab_probe_shift_ci_high) > shift);
  });

  it('the probe prints a unit every 100 ms: its CPU time, the compute part and the loopback part, which add up', async () => {
    const script = path.join(__dirname, '../../scripts/lib/speed-probe.js');
    const out = await new Promise((resolve) => {
      execFile(process.execPath, [script], { timeout: 1500, killSignal: 'SIGTERM' }, (_, stdout) => resolve(stdout));
    });
    const lines = out
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number));
    assert.ok(lines.length >= 5, `${lines.length} units in 1.5 s`);
    for (const [ms, cpu, compute, tcp] of lines) {
      assert.ok(Math.abs(ms - Date.now()) < 5000, 'unix_ms');
      assert.equal(cpu, compute + tcp);
      assert.ok(compute > 0 && tcp > 0, `compute ${compute} us, loopback ${tcp} us`);
    }
    const gaps = lines
      .slice(1)
      .map((l, i) => l[0] - lines[i][0])
      .sort((a, b) => a - b);
    assert.ok(gaps[Math.floor(gaps.length / 2)] >= 90, `units about 100 ms apart: ${gaps}`);
  });
});
