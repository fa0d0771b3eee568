'use strict';
// NETWORK_NODES=2 on polkadot-omni-node (npm run test:omni-node; the node
// takes most of an hour to build, so this file runs where it is built and
// fails, never skips, where it is not): a Substrate network on the host
// runtime. network-1 authors in the node's dev mode; the node under test and
// network-2 import its blocks from their peers over libp2p, receive the
// network's transfers by gossip, and the node's CPU still agrees with an
// independent /proc reading of its own process.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, watchCpu, processesWith, readRun } = require('../integration/harness');
const { schemaErrors, ROOT } = require('../helpers');
const { cacheDir } = require('../../src/install/cache');
const { NEVER_MS } = require('../../src/clients/substrate-network');

const OMNI =
  process.env.CHAINPERF_OMNI_NODE_BIN || cacheDir('polkadot-omni-node', '0.24.0', 'bin', 'polkadot-omni-node');

/** The run's omni-node processes: the node under test (its data in node-data) or network node i. */
const omniProcess = (tmp, re) => processesWith(tmp).find((x) => re.test(x.cmd) && !x.cmd.startsWith('sh '));
const NODE = /polkadot-omni-node .*--base-path \S+\/node-data /;

describe('NETWORK_NODES=2 on polkadot-omni-node: a Substrate network on the host runtime', function () {
  this.timeout(900000);
  let res;
  let run;
  let tmp;
  let nodeCmd = null;
  let cpuWatch;

  before(async () => {
    assert.ok(
      fs.existsSync(OMNI),
      `polkadot-omni-node is not built at ${OMNI}: build it with ./run.sh install scenarios/polkadot-omni-dev.env (about 46 minutes, once), or set CHAINPERF_OMNI_NODE_BIN`,
    );
    const r = startRun(path.join(ROOT, 'scenarios', 'polkadot-omni-dev.env'), {
      CLIENT_BIN: OMNI,
      NETWORK_NODES: '2',
      PEERS: '4', // --in-peers 2: both network nodes dial in
      NETWORK_TPS: '2',
      DURATION_S: '16',
      WARMUP_S: '3',
      IDLE_S: '3',
      HISTORY_TRANSFERS: '8',
      HISTORY_ACCOUNTS: '4',
      CONCURRENCY: '8',
      ARCHIVE: 'none',
    });
    tmp = r.tmp;
    cpuWatch = watchCpu(() => {
      const p = omniProcess(tmp, NODE);
      if (p) nodeCmd = p.cmd;
      return p ? p.pid : null;
    });
    res = await r.done;
    cpuWatch.stop();
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 with a valid run.json that describes the network', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.network.nodes, 2);
    assert.match(run.network.protocol, /libp2p/);
    assert.match(run.network.blocks, /authored by network-1/);
  });

  it('the node under test is a member that authors nothing, with its own node key', () => {
    assert.ok(nodeCmd, 'the node under test was seen running');
    assert.match(nodeCmd, /--node-key [0-9a-f]{64} /);
    assert.ok(nodeCmd.includes(`--dev-block-time ${NEVER_MS}`), nodeCmd);
    assert.match(nodeCmd, /--in-peers 2 --out-peers 2 /);
  });

  it('has both network nodes as peers through the window, by its own system_health', () => {
    const p = run.node.network.peers;
    assert.ok(p.samples >= 5, JSON.stringify(p));
    assert.equal(p.min, 2, JSON.stringify(p));
    assert.match(p.source, /system_health/);
  });

  it("imports network-1's blocks from its peers and moves peer-to-peer bytes in the window", () => {
    const n = run.node.network;
    assert.ok(n.blocks >= 5, JSON.stringify(n));
    assert.ok(n.transactions_sent > 0 && n.transactions_included > 0, JSON.stringify(n));
    assert.ok(n.p2p_in_bytes > 0 && n.p2p_out_bytes > 0, JSON.stringify(n));
    // the node under test authors nothing, yet its best block advanced through the window: imported
    assert.ok(run.sync.head > 0);
    const nodeLog = fs.readFileSync(path.join(res.reportDir, 'node.log'), 'utf8');
    assert.match(nodeLog, /Imported #\d+/);
    assert.ok(!/Prepared block for proposing/.test(nodeLog), 'the node under test authored a block');
  });

  it("node CPU agrees within 3% with /proc of the node's own process: the network nodes are not counted", () => {
    const w = run.node.cpu_window;
    const independent = cpuWatch.cpuAt(w.end_ms) - cpuWatch.cpuAt(w.start_ms);
    const measured = run.node.cpu_total_s;
    assert.ok(Math.abs(independent - measured) / measured < 0.03, `chainperf ${measured} s, /proc ${independent} s`);
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
  });
});

describe('SYNC=network on polkadot-omni-node: the node downloads the chain from its peers', function () {
  this.timeout(900000);
  let res;
  let run;
  let tmp;

  before(async () => {
    assert.ok(fs.existsSync(OMNI), `polkadot-omni-node is not built at ${OMNI}`);
    const r = startRun(path.join(ROOT, 'scenarios', 'polkadot-omni-dev.env'), {
      CLIENT_BIN: OMNI,
      NETWORK_NODES: '1',
      SYNC: 'network',
      PEERS: '4',
      NETWORK_TPS: '0',
      DURATION_S: '6',
      WARMUP_S: '2',
      IDLE_S: '2',
      HISTORY_TRANSFERS: '16',
      HISTORY_ACCOUNTS: '4',
      CONCURRENCY: '4',
      ARCHIVE: 'none',
    });
    tmp = r.tmp;
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0; the node was at the genesis when its peer dialled it, and reached the network’s best block', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    const y = run.sync;
    assert.equal(y.mode, 'network');
    assert.equal(y.start_head, 0);
    assert.ok(y.blocks >= 8 && y.head === y.blocks, JSON.stringify(y));
    assert.ok(y.p2p_in_bytes > 0 && y.cpu_s > 0, JSON.stringify(y));
    assert.ok(run.history.txs >= 16, 'the history was authored on the network before the node synced it');
    assert.equal(run.node.network.peers.min, 1, JSON.stringify(run.node.network.peers));
  });

  it('leaves no process behind', () => {
    assert.deepEqual(processesWith(tmp), []);
  });
});
