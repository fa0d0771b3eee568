'use strict';
// A Substrate scenario end to end on the best real endpoint this machine has:
// polkadot-omni-node when its binary is built (a real node), else chopsticks
// (a development server; the test says so in its title and output). Real
// processes: the client, @polkadot/api in artillery's workers, Prometheus
// where the client exports metrics.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, watchCpu, processesWith, readRun, artilleryCount } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const { cacheDir } = require('../../src/install/cache');

const OMNI =
  process.env.CHAINPERF_OMNI_NODE_BIN || cacheDir('polkadot-omni-node', '0.24.0', 'bin', 'polkadot-omni-node');
const useOmni = fs.existsSync(OMNI);
const endpoint = useOmni ? { CLIENT: 'polkadot-omni-node', CLIENT_BIN: OMNI } : { CLIENT: 'chopsticks' };
const label = useOmni
  ? `polkadot-omni-node (a real node, ${OMNI})`
  : `chopsticks 1.5.1 (a development server, NOT a node: polkadot-omni-node is not built at ${OMNI})`;
process.stderr.write(`\n  Substrate integration test endpoint: ${label}\n`);

const SHORT = {
  ...endpoint,
  DURATION_S: '8',
  WARMUP_S: '2',
  IDLE_S: '3',
  HISTORY_TRANSFERS: '8',
  HISTORY_ACCOUNTS: '4',
  CONCURRENCY: '8',
  MAX_ERROR_RATE: '0',
  ARCHIVE: 'none',
};

/** The node process a run started under its TMPDIR (not the sh that execs it). */
function nodeOf(tmp) {
  const re = useOmni ? /polkadot-omni-node.*--chain/ : /chopsticks\.cjs.*--genesis/;
  return processesWith(tmp).find((x) => re.test(x.cmd) && !x.cmd.startsWith('sh '));
}

describe(`Substrate end to end on ${label}`, () => {
  let res;
  let run;
  let cpuWatch;
  let tmp;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'polkadot-dev.env'), SHORT);
    tmp = r.tmp;
    cpuWatch = watchCpu(() => {
      const p = nodeOf(tmp);
      return p ? p.pid : null;
    });
    res = await r.done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 with a report valid against the schema, status ok, the client and its kind in provenance', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.status, 'ok');
    assert.equal(run.provenance.client.name, endpoint.CLIENT);
    assert.match(run.provenance.client.chain_spec, /bridge-hub-polkadot\.json$/);
    assert.equal(run.provenance.scenario.CHAIN, 'polkadot');
    const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
    if (useOmni) {
      assert.equal(run.provenance.client.kind, undefined);
      assert.ok(!run.warnings.some((w) => /development server/.test(w)));
    } else {
      assert.equal(run.provenance.client.kind, 'development server');
      assert.ok(
        run.warnings.includes(
          "chopsticks is a development server, not a node: its figures are not a node's (no networking, no database or trie cache, blocks built on demand by chainperf)",
        ),
      );
      assert.match(md, /\*\*chopsticks is a development server, not a node: these figures are not a node's\.\*\*/);
    }
  });

  it('synced by system_health with history created and harvested from the chain', () => {
    assert.ok(run.sync.head >= 1 && run.sync.target <= run.sync.head);
    assert.equal(run.history.txs, 8);
    const pool = JSON.parse(fs.readFileSync(path.join(res.reportDir, 'params.json'), 'utf8'));
    assert.ok(pool.blocks.length > 8, `${pool.blocks.length} blocks`);
    assert.ok(pool.accounts.length >= 10 && pool.accounts.every((a) => BigInt(a.free) > 0n));
    assert.ok(pool.signers.length >= 6 + 4 + 8, 'well-known, history and one per user funded in the genesis');
    assert.equal(pool.spec_name, 'bridge-hub-polkadot');
  });

  it('counts every JSON-RPC call, not one per operation: requests by wire method, more calls than operations', () => {
    const f = run.figures;
    assert.equal(f.requests_failed, 0, JSON.stringify([run.errors, run.substrate.operation_errors]));
    const methods = Object.keys(f.methods);
    for (const m of [
      'chain_getBlockHash',
      'chain_getBlock',
      'chain_getHeader',
      'state_getStorage',
      'state_getRuntimeVersion',
      'payment_queryInfo',
    ]) {
      assert.ok(f.methods[m] && f.methods[m].requests_ok > 0, `${m} in ${methods.join(', ')}`);
    }
    assert.ok(
      methods.some((m) => /^chain_subscribeNewHead/.test(m)),
      'subscriptions are calls too',
    );
    const ops = run.substrate.operations;
    for (const op of ['query.system.account', 'at.system.account', 'at.system.events', 'chain_subscribeNewHeads'])
      assert.ok(ops[op] && ops[op].ok > 0, op);
    const failedOps = Object.values(ops).reduce((n, o) => n + o.failed, 0);
    assert.equal(failedOps, 0, JSON.stringify(run.substrate.operation_errors));
    assert.ok(
      f.requests_ok > run.substrate.operations_ok,
      `${f.requests_ok} calls for ${run.substrate.operations_ok} operations`,
    );
    // One call per operation where the operation is one call: nothing shared
    // between users. A call answered just before the window opens is not the
    // window's while its operation, resolved a moment later, is: at most one
    // such operation per virtual user in flight at the opening edge.
    const users = Number(SHORT.CONCURRENCY);
    for (const m of ['chain_getBlock', 'payment_queryInfo']) {
      assert.ok(
        f.methods[m].requests_ok >= ops[m].ok - users,
        `${m}: ${f.methods[m].requests_ok} calls for ${ops[m].ok} operations`,
      );
    }
    const sum = Object.values(f.methods).reduce((s, m) => s + m.requests_ok, 0);
    assert.equal(sum, f.requests_ok);
    assert.equal(artilleryCount(res.reportDir, 'chainperf.ok.'), f.requests_ok, "artillery's own counters");
  });

  it('CPU time per request is per call, > 0, and the node CPU agrees with /proc read by this test', () => {
    const f = run.figures;
    assert.ok(f.cpu_ms_per_request > 0);
    // CPU read at the window's edges is divided by the requests completed between the two reads (cpu_window)
    const cw = run.node.cpu_window;
    assert.ok(Math.abs(f.cpu_ms_per_request - (run.node.cpu_total_s * 1000) / cw.requests_ok) < 1e-5);
    assert.ok(
      Math.abs(cw.start_ms - run.window.start_ms) < 500 && Math.abs(cw.end_ms - run.window.end_ms) < 500,
      'read close to the planned edges',
    );
    assert.ok(
      Math.abs(cw.requests_ok - f.requests_ok) <= f.requests_ok * 0.05,
      `${cw.requests_ok} of ${f.requests_ok}`,
    );
    assert.ok(run.node.cpu_user_s > 0);
    // The node's CPU comes in bursts (block production every 2 s), so the CPU
    // read from /proc every 50 ms is not interpolated at the edges: chainperf's
    // figure must lie between what the samples just inside and just outside
    // the window saw, with 5% either side.
    const b = cpuWatch.between(run.node.cpu_window.start_ms, run.node.cpu_window.end_ms);
    const got = run.node.cpu_total_s;
    assert.ok(
      got >= b.inner * 0.95 && got <= b.outer * 1.05,
      `chainperf ${got} s, /proc ${b.inner.toFixed(3)}..${b.outer.toFixed(3)} s (samples ${b.gaps_ms.join(' and ')} ms apart at the edges)`,
    );
    assert.ok(run.generator.cpu_us_per_request > 0);
  });

  it("the node's own request counter cross-checks the count where it has one (omni-node), and is absent where not (chopsticks)", () => {
    if (useOmni) {
      const served = run.node.rpc_requests;
      assert.ok(
        Math.abs(served - run.figures.requests_ok) / run.figures.requests_ok < 0.25,
        `node counted ${served}, chainperf ${run.figures.requests_ok}`,
      );
      assert.ok(run.node.rpc_requests_by_method.chain_getBlock > 0);
    } else {
      assert.equal(run.node.rpc_requests, undefined);
      assert.equal(run.provenance.tools.prometheus, undefined, 'no Prometheus beside a client without metrics');
    }
  });

  it('leaves no process or temporary folder behind', () => {
    assert.deepEqual(processesWith(tmp), []);
    assert.ok(!fs.existsSync(`/proc/${run.node.pid}`));
    assert.deepEqual(
      fs.readdirSync(tmp).filter((f) => f.startsWith('chainperf-')),
      [],
    );
  });
});

describe(`Substrate write workload on ${useOmni ? 'polkadot-omni-node' : 'chopsticks (a development server, not a node)'}`, () => {
  let res;
  let run;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'polkadot-transfers.env'), {
      ...SHORT,
      CONCURRENCY: '4',
      // chopsticks builds a block when asked (every 2 s): a window of several, so that a loaded machine, which slows
      // each block (once none in 8 s), still includes transactions in it
      DURATION_S: '16',
      WARMUP_S: '0',
      IDLE_S: '0',
      HISTORY_TRANSFERS: '0',
    });
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('signed transfers are included, with transactions per second and inclusion latency reported', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    const tx = run.substrate.transactions;
    assert.ok(tx.included > 0, JSON.stringify(tx));
    assert.equal(tx.failed, 0, JSON.stringify(tx.errors));
    assert.ok(Math.abs(tx.tps - tx.included / 16) < 0.001);
    const l = tx.inclusion_latency_ms;
    assert.ok(l.p50 > 0 && l.p50 <= l.p99 && l.p99 <= l.max);
    // Every included transaction was submitted by a counted call, except those already in flight when the
    // window opened (submitted before it, included in it): at most one per user, 4 here.
    const submits = run.figures.methods.author_submitAndWatchExtrinsic.requests_ok;
    assert.ok(submits + 4 >= tx.included, `${submits} submissions in the window, ${tx.included} included`);
  });
});
