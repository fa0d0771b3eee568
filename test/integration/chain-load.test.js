'use strict';
// A chain that moves: CHAIN_LOAD=mainnet at a 2 s slot (its gas per second
// kept: 5M gas a block) on STATE=small, through a network of one node
// (derived), with the node under test cut from the chain for 10 s inside the
// window (FAULT=pause-node). This test polls both nodes itself, 20 times a
// second, and holds the run's head lag to what it saw; the node's import times
// are there, its stale answers during the pause counted, its catch-up rate
// given, and its CPU net of the chain's work below its gross CPU.

const assert = require('node:assert/strict');
const path = require('node:path');
const { startRun, processesWith, readRun, LIGHT_LOAD } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const { rpcCall } = require('../../src/util/rpc');

const SLOT_S = 2;
const PAUSE = { at: 6, for: 10 };
const RUN = {
  ...LIGHT_LOAD,
  CHAIN_LOAD: 'mainnet',
  DEV_BLOCK_TIME_S: String(SLOT_S),
  STATE: 'small',
  FAULT: `pause-node@${PAUSE.at}s:${PAUSE.for}s`,
  DURATION_S: '24',
  WARMUP_S: '2',
  IDLE_S: '4',
};
const OWN_POLL_MS = 50;
const HEAD_LOOK_MS = 250; // the run's own looks (src/network/head-watch.js)

/** The HTTP port of the run's geth process whose command line matches re. */
function portOf(tmp, re) {
  const p = processesWith(tmp).find((x) => re.test(x.cmd) && !x.cmd.startsWith('sh '));
  const m = p && /--http\.port (\d+)/.exec(p.cmd);
  return m ? Number(m[1]) : null;
}

/** Polls both nodes' heads every OWN_POLL_MS until stopped: [{at_ms, node, net}]. */
function pollBoth(nodeUrl, netUrl) {
  const polls = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      const at = Date.now();
      const [node, net] = await Promise.all(
        [nodeUrl, netUrl].map((u) => rpcCall(u, 'eth_blockNumber', [], { timeoutMs: 1000 }).then(Number, () => null)),
      );
      if (node !== null && net !== null) polls.push({ at_ms: at, node, net });
      await new Promise((r) => setTimeout(r, Math.max(0, at + OWN_POLL_MS - Date.now())));
    }
  })();
  return {
    polls,
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

/**
 * The worst lag the test's own polls saw: at each poll, how long the network node had been past the node's head (since
 * the first poll that saw the network node above it).
 */
function ownWorstLag(polls, fromMs, toMs) {
  let worst = 0;
  for (const p of polls.filter((x) => x.at_ms >= fromMs && x.at_ms < toMs)) {
    const firstAbove = polls.find((q) => q.net > p.node);
    if (firstAbove && firstAbove.at_ms <= p.at_ms) worst = Math.max(worst, (p.at_ms - firstAbove.at_ms) / 1000);
  }
  return worst;
}

describe('CHAIN_LOAD=mainnet at a 2 s slot on STATE=small, the node cut from the chain for 10 s', () => {
  let res;
  let run;
  let own;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), RUN);
    await r.waitFor(/measure: measuring for \d+ s from \S+ /);
    const nodePort = portOf(r.tmp, /\bgeth --networkid .*--datadir \S+\/node-data /);
    const netPort = portOf(r.tmp, /\bgeth --networkid .*\/network\/node-1 /);
    assert.ok(nodePort && netPort, 'the node under test and network-1 are running');
    own = pollBoth(`http://127.0.0.1:${nodePort}`, `http://127.0.0.1:${netPort}`);
    res = await r.done;
    await own.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 with a valid run.json; the network of one node was chosen, and said so', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.match(res.stderr, /NETWORK_NODES=1: derived, because CHAIN_LOAD=mainnet needs a network/);
    assert.equal(run.network.nodes, 1);
  });

  it('gives import times and head lag, the lag agreeing with this test’s own polls of both nodes within a look', () => {
    const k = run.node.network.keep_up;
    assert.ok(k.import_ms.blocks >= 3, `${k.import_ms.blocks} imports`);
    assert.ok(k.import_ms.p50_ms > 0 && k.import_ms.p99_ms >= k.import_ms.p50_ms);
    assert.ok(k.import_ms.client.blocks >= 3, 'and geth’s own import times, from its log');
    assert.ok(k.head_lag.samples >= 3.5 * Number(RUN.DURATION_S), `${k.head_lag.samples} looks: 4 a second`);
    const mine = ownWorstLag(own.polls, run.window.start_ms, run.window.end_ms);
    assert.ok(mine >= PAUSE.for - SLOT_S, `the pause seen by this test: ${mine} s behind at worst`);
    assert.ok(
      Math.abs(k.head_lag.worst.seconds - mine) <= (HEAD_LOOK_MS + OWN_POLL_MS) / 1000,
      `worst head lag: the run's ${k.head_lag.worst.seconds} s, this test's ${mine} s`,
    );
    assert.equal(run.figures.head_lag_s_max, k.head_lag.worst.seconds);
  });

  it('counts the stale answers while the node was cut off', () => {
    const st = run.node.network.keep_up.stale_answers;
    assert.ok(st.count > 0 && st.of > st.count, JSON.stringify(st));
    // outside the pause a node is at most a block behind; cut off for 10 s at a 2 s slot, several
    assert.ok(st.most_blocks_behind >= PAUSE.for / SLOT_S - 1, JSON.stringify(st));
  });

  it('catches up after the pause, with its rate', () => {
    const f = run.fault;
    assert.equal(f.kind, 'pause-node');
    assert.ok(f.restored_ms - f.cut_ms >= PAUSE.for * 1000);
    assert.ok(f.catch_up.caught_up, JSON.stringify(f.catch_up));
    assert.ok(f.catch_up.gap_blocks >= PAUSE.for / SLOT_S - 1, JSON.stringify(f.catch_up));
    assert.ok(f.catch_up.blocks_per_s > 0, JSON.stringify(f.catch_up));
  });

  it("reports the feed's rate, gas per block and own CPU against the profile; off by more than 5% is a warning", () => {
    const cl = run.node.network.chain_load;
    assert.equal(cl.profile, 'mainnet');
    assert.equal(cl.target_gas_per_block, 5000000, 'mainnet’s 2.5 Mgas/s at a 2 s slot');
    assert.ok(cl.gas_per_block.blocks >= 8, JSON.stringify(cl));
    assert.ok(Math.abs(cl.gas_per_block.mean / cl.target_gas_per_block - 1) < 0.15, JSON.stringify(cl));
    assert.ok(cl.tx_per_s > 0 && cl.feed_cores > 0 && cl.feed_cores < 1, JSON.stringify(cl));
    if (!cl.within_5pct) assert.ok(run.warnings.includes(cl.warning), 'a feed off its profile is a warning');
    assert.equal(run.network.chain_load.network_needs.gas_limit, 60000000);
    assert.ok(run.node.network.transactions_included > 0);
  });

  it('gives CPU per request net of the chain’s work, below the gross figure', () => {
    const f = run.figures;
    assert.ok(f.cpu_ms_per_request_net_of_chain > 0, JSON.stringify(f));
    assert.ok(f.cpu_ms_per_request_net_of_chain < f.cpu_ms_per_request, JSON.stringify(f));
    assert.ok(run.idle_chain.cpu_s > 0);
  });
});
