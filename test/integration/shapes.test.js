'use strict';
// Load shapes on a real geth: a spike inside the measured window, through each
// generator. The window's segments must show the shape: the spike's segment
// served about SPIKE_FACTOR times the rate of the segment after it.
//
// A segment counts the requests completed in it, so requests of the spike
// that a loaded machine answers late fall into the segment after it (CI saw
// spikes of 252 and 275 requests/s against 132 and 123 after them, with 4 s
// segments at 100 and 300 requests/s: a third to two thirds of a second of
// queueing). The spike is compared with the segment before it, and the
// segments are 8 s long, so that a generator that started a little late
// (the run's own late-start check allows it) shortens a small share of it.
// For the same reason the last segment's requests that a loaded machine had
// not answered when the window closed (run.json generator.in_flight_at_end)
// count as served in it (CI saw 46.6 requests/s completed in it at 60/s).

const assert = require('node:assert/strict');
const { startRun, readRun } = require('./harness');
const { startGeth } = require('./node');
const { createHistory } = require('../../src/chains/ethereum/history');
const { schemaErrors, tmpDir, writeScenario } = require('../helpers');

describe('load shapes on geth', () => {
  let node;
  before(async () => {
    node = await startGeth();
    await createHistory(node.rpcUrl, { accounts: 4, transfers: 8, calls: 8, seed: 1 });
  });
  after(() => node && node.stop());

  // three segments of SPIKE_S: long enough that a segment's rate is read within the bounds below, on a loaded machine
  const SPIKE_S = 5;
  for (const generator of ['lean', 'ethers']) {
    it(`GENERATOR=${generator}: SHAPE=spike offers three times RATE in the middle of the window, as run.json window.shape shows`, async () => {
      const file = writeScenario(
        tmpDir(),
        `spike-${generator}`,
        [
          'RUNTIME=attach',
          `RPC_URL=${node.rpcUrl}`,
          `NODE_PID=${node.pid}`,
          'CREATE_HISTORY=no',
          `GENERATOR=${generator}`,
          'WORKLOAD=eth-reads-light',
          'RATE=60',
          'SHAPE=spike',
          'SPIKE_FACTOR=3',
          `SPIKE_S=${SPIKE_S}`,
          'WARMUP_S=1',
          'IDLE_S=0',
          `DURATION_S=${3 * SPIKE_S}`,
        ].join('\n'),
      );
      const res = await startRun(file).done;
      assert.equal(res.code, 0, res.stderr);
      const run = readRun(res.reportDir);
      assert.deepEqual(schemaErrors(run), []);
      const seg = run.window.shape.segments;
      assert.deepEqual(
        seg.map((x) => [x.from_s, x.to_s, x.rps]),
        [
          [0, SPIKE_S, 60],
          [SPIKE_S, 2 * SPIKE_S, 180],
          [2 * SPIKE_S, 3 * SPIKE_S, 60],
        ],
      );
      assert.equal(
        run.window.end_ms - run.window.start_ms,
        3 * SPIKE_S * 1000,
        'the window is the same as for a steady load',
      );
      assert.equal(
        seg.reduce((n, x) => n + x.requests_ok, 0),
        run.figures.requests_ok,
        'the segments partition the window',
      );
      // the spike's late answers count after it (above): it is compared with the segment before it
      const ratio = seg[1].achieved_rps / seg[0].achieved_rps;
      assert.ok(
        ratio > 2.4 && ratio < 3.6,
        `spike ${seg[1].achieved_rps}/s against ${seg[0].achieved_rps}/s before it`,
      );
      assert.ok(Math.abs(seg[0].achieved_rps - 60) < 9, `${seg[0].achieved_rps}/s offered 60/s`);
      // the last segment's requests still unanswered when the window closed are not counted in it: they count here
      const { in_flight_at_end: atEnd } = run.generator;
      assert.ok(
        seg[2].requests_ok + atEnd >= (60 - 9) * SPIKE_S,
        `${seg[2].achieved_rps}/s after the spike (${atEnd} unanswered at the window's end), offered 60/s`,
      );
      // what the generator sent in each segment: the offered shape itself, late answers or not
      const sent = seg[1].sent_rps / seg[0].sent_rps;
      assert.ok(
        sent > 2.4 && sent < 3.6,
        `sent ${seg[1].sent_rps}/s in the spike against ${seg[0].sent_rps}/s before it`,
      );
      assert.ok(Math.abs(seg[2].sent_rps - 60) < 9, `sent ${seg[2].sent_rps}/s after the spike, offered 60/s`);
    });
  }
});
