'use strict';
// What an operator gets when things go wrong: a clear message, a clean
// teardown, and a report marked failed with what was measured until then.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, processesWith, gethOf, readRun, LIGHT_LOAD } = require('./harness');
const { startGeth } = require('./node');
const { schemaErrors, tmpDir, writeScenario, ROOT } = require('../helpers');

const GETH_DEV = path.join(ROOT, 'scenarios', 'geth-dev.env');
const SHORT = { ...LIGHT_LOAD, WARMUP_S: '2', IDLE_S: '3', HISTORY_TRANSFERS: '16', HISTORY_CONTRACT_CALLS: '8' };

function assertFailedReport(res, reason) {
  assert.equal(res.code, 1, res.stderr);
  const run = readRun(res.reportDir);
  assert.deepEqual(schemaErrors(run), []);
  assert.equal(run.status, 'failed');
  assert.match(run.error, reason);
  const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
  assert.match(md, /FAILED/);
  return run;
}

describe('failures', () => {
  it('the node dying mid-run: torn down, report failed with the reason and what was measured', async () => {
    const r = startRun(GETH_DEV, { ...SHORT, DURATION_S: '4', REPEAT: '2', IDLE_S: '1' });
    await r.waitFor(/rep2: measuring for 4 s/);
    const geth = gethOf(r.tmp);
    assert.ok(geth, 'geth is running');
    process.kill(geth.pid, 'SIGKILL');
    const res = await r.done;
    const run = assertFailedReport(res, /the node exited during measure \(signal SIGKILL\)/);
    assert.equal(run.phase, 'measure');
    assert.ok(run.idle && run.idle.cpu_s > 0, 'the idle baseline measured before is kept');
    assert.equal(run.repetitions.length, 1, 'the repetition measured before the crash is kept');
    assert.ok(run.repetitions[0].figures.requests_ok > 0);
    assert.match(
      fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'),
      /The repetitions measured before the run failed/,
    );
    assert.ok(run.sync && run.sync.seconds >= 0);
    assert.deepEqual(processesWith(r.tmp), [], 'no process left behind');
  });

  it('Ctrl-C: stops, tears down and writes a failed report', async () => {
    const r = startRun(GETH_DEV, { ...SHORT, DURATION_S: '60' });
    await r.waitFor(/warming up/);
    r.child.kill('SIGINT');
    const res = await r.done;
    assertFailedReport(res, /interrupted by SIGINT/);
    assert.match(res.stderr, /SIGINT: stopping the run/);
    assert.deepEqual(processesWith(r.tmp), [], 'no process left behind');
  });

  it('a node that never syncs: a clear error after SYNC_TIMEOUT_S', async () => {
    const node = await startGeth({ period: 0 }); // no transactions, no new blocks: the head never advances
    try {
      const file = writeScenario(
        tmpDir(),
        'stuck',
        `RUNTIME=attach\nRPC_URL=${node.rpcUrl}\nNODE_PID=${node.pid}\nSYNC_TIMEOUT_S=4\n`,
      );
      const res = await startRun(file).done;
      const run = assertFailedReport(
        res,
        /node not synced with its head advancing after 4 s \(SYNC_TIMEOUT_S\); last state: /,
      );
      assert.equal(run.phase, 'sync');
      assert.ok(node.alive(), 'attach never stops the node');
    } finally {
      await node.stop();
    }
  });

  it('an invalid scenario: every problem listed, exit status 2, nothing started, no report', async () => {
    const dir = tmpDir();
    const file = writeScenario(dir, 'bad', 'DB_CACHE=64\nCORES=64\nWORKLOAD=nope\n');
    const r = startRun(file, { REPORTS_DIR: path.join(dir, 'reports') });
    const res = await r.done;
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /bad\.env:1: unknown key DB_CACHE \(did you mean DB_CACHE_MB\?\)/);
    assert.match(res.stderr, /bad\.env:2: CORES: 64 cores asked but this machine has \d+/);
    assert.match(res.stderr, /bad\.env:3: WORKLOAD: no workload "nope"/);
    assert.ok(!fs.existsSync(path.join(dir, 'reports')));
  });

  it('a missing scenario file is named', async () => {
    const res = await startRun('/nonexistent/x.env').done;
    assert.equal(res.code, 2);
    assert.match(res.stderr, /\/nonexistent\/x\.env: cannot read scenario file: no such file/);
  });
});
