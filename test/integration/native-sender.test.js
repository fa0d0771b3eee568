'use strict';
// LEAN_SENDER=native on a real geth: the lean engine's requests sent by the
// native sender over geth's WebSocket, in windows of a generator kept across
// REPEAT's repetitions, to an ok report whose counts agree with the node's.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, readRun, assertScrapedClose } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');

describe('LEAN_SENDER=native, host runtime: the native sender over WebSocket, REPEAT=2', () => {
  let res;
  let run;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      GENERATOR: 'lean',
      LEAN_SENDER: 'native',
      TRANSPORT: 'ws',
      REPEAT: '2',
      DURATION_S: '4',
      WARMUP_S: '1',
      IDLE_S: '1',
      HISTORY_TRANSFERS: '16',
      HISTORY_CONTRACT_CALLS: '8',
      MAX_ERROR_RATE: '0',
    });
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('measures the default mix in both windows of one kept generator, every method answered, none failed', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.scenario.LEAN_SENDER, 'native');
    assert.deepEqual(run.repetitions_generator, { mode: 'kept', reason: null });
    assert.equal(run.repetitions.length, 2);
    for (const rep of run.repetitions) {
      assert.equal(rep.figures.requests_failed, 0, JSON.stringify(rep.errors));
      assert.ok(rep.figures.requests_ok > 300, `requests_ok ${rep.figures.requests_ok}`);
      assert.equal(Object.keys(rep.figures.methods).length, 10);
      assert.ok(rep.generator.cpu_us_per_request > 0, 'the generator cgroup, the sender in it, measured');
    }
    assert.match(
      fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'),
      /Load generator \(chainperf's lean engine over WebSocket, native sender\)/,
    );
  });

  it("the node's own request counter agrees with the requests the sender's records counted", () => {
    assertScrapedClose(run);
  });
});
