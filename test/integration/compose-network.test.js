'use strict';
// NETWORK_NODES=2 in the compose runtime on a real Docker engine: two more
// geth containers of the run's project, peered with the node under test over
// devp2p by service name, blocks through the engine-API driver, transactions
// by gossip. The node starts with only the genesis and downloads the chain
// from its peers (SYNC=network). One network node's container is killed
// inside the window: the run names it and when; the project goes down with
// every volume.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRun, readRun, LIGHT_LOAD } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');
const docker = require('../../src/platform/docker');

/** The container of a service of the run's compose project (null when there is none). */
async function serviceContainer(project, service) {
  const filter = encodeURIComponent(
    JSON.stringify({ label: [`com.docker.compose.project=${project}`, `com.docker.compose.service=${service}`] }),
  );
  const r = await docker.engine('GET', `/containers/json?filters=${filter}`);
  return r.body.length ? r.body[0] : null;
}

describe('NETWORK_NODES=2 in the compose runtime: geth among two peer containers', () => {
  let res;
  let run;
  let project;
  let nodeArgs = null;
  let killedAt = null;

  before(async () => {
    const r = startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      ...LIGHT_LOAD, // a test of the network's containers, not of the window's figures
      RUNTIME: 'compose',
      GRAFANA: 'no',
      NETWORK_NODES: '2',
      PEERS: '6',
      NETWORK_TPS: '5',
      SYNC: 'network',
      DURATION_S: '12',
      WARMUP_S: '2',
      IDLE_S: '4',
      HISTORY_TRANSFERS: '30',
      HISTORY_CONTRACT_CALLS: '16',
    });
    await r.waitFor(/measure: measuring for \d+ s from \S+ /);
    project = /starting compose project (\S+)/.exec(r.stderrText())[1];
    const node = await serviceContainer(project, 'node');
    if (node) nodeArgs = (await docker.inspectContainer(node.Id)).Args.join(' ');
    const start = Date.parse(/measure: measuring for \d+ s from (\S+) /.exec(r.stderrText())[1]);
    await new Promise((resolve) => setTimeout(resolve, start + 5000 - Date.now()));
    const victim = await serviceContainer(project, 'network-2');
    if (victim && (await docker.engine('POST', `/containers/${victim.Id}/kill`)).status === 204) killedAt = Date.now();
    res = await r.done;
    if (res.code !== 0) process.stderr.write(res.stderr);
    run = readRun(res.reportDir);
  });

  it('exits 0 with a valid run.json that names the network containers', () => {
    assert.equal(res.code, 0);
    assert.deepEqual(schemaErrors(run), []);
    assert.equal(run.network.nodes, 2);
    assert.deepEqual(
      run.network.containers.map((c) => c.replace(`${project}-`, '')),
      ['network-1-1', 'network-2-1'],
    );
  });

  it('the node container is a network member (no --dev), its peers capped by PEERS', () => {
    assert.ok(nodeArgs, 'the node container was seen running');
    assert.doesNotMatch(nodeArgs, /--dev\b/);
    assert.match(nodeArgs, /--networkid 1337 .*--authrpc.jwtsecret \/chainperf-network\/jwt.hex/);
    assert.match(nodeArgs, /--maxpeers 6 /);
  });

  it('downloaded the chain from its peers, from the genesis, with its CPU over the sync from its cgroup', () => {
    const y = run.sync;
    assert.equal(y.mode, 'network');
    assert.equal(y.start_head, 0);
    // the chain it downloaded holds the history's blocks: its funding's and one per round (HISTORY_BLOCKS)
    assert.ok(y.blocks >= run.history.rounds + 1 && y.p2p_in_bytes > 1000, JSON.stringify(y));
    assert.ok(y.cpu_s > 0, JSON.stringify(y));
  });

  it('peers with both, gets blocks and receives transactions by gossip in the window', () => {
    const n = run.node.network;
    assert.equal(n.peers.max, 2, JSON.stringify(n.peers));
    assert.ok(n.gossip_transactions_in > 0, JSON.stringify(n));
    assert.ok(n.p2p_in_bytes > 0 && n.p2p_out_bytes > 0, JSON.stringify(n));
    // the driver builds a block a second; a loaded machine builds fewer (7 in a 12 s window in a CI run): blocks came
    assert.ok(n.transactions_sent > 0 && n.blocks >= 3, JSON.stringify(n));
    assert.ok(n.network_nodes_cpu_s > 0 && n.network_nodes_memory_bytes > 0, 'their containers’ cgroups');
  });

  it('a network container killed in the window is named, with when, and the peer count drops', () => {
    assert.ok(killedAt, 'network-2 was found and killed');
    const lost = run.node.network.nodes_lost;
    assert.equal(lost.length, 1, JSON.stringify(lost));
    assert.equal(lost[0].node, 'network-2');
    assert.match(lost[0].container, /network-2-1$/);
    assert.ok(Math.abs(lost[0].at_ms - killedAt) < 4000, 'seen within the 2 s poll');
    assert.ok(
      run.warnings.some((w) => /network node network-2 exited/.test(w)),
      run.warnings.join('\n'),
    );
    assert.equal(run.node.network.peers.min, 1);
  });

  it("keeps the tail of each network node's log in the report", () => {
    for (const i of [1, 2]) {
      const text = fs.readFileSync(path.join(res.reportDir, `network-node-${i}.log`), 'utf8');
      assert.match(text, new RegExp(`^network-${i}-1 +\\| (INFO|WARN)`, 'm'), `network-node-${i}.log`);
    }
  });

  it('brings the project down with every volume, the network nodes’ included', async () => {
    assert.deepEqual(await docker.projectLeftovers(project), { containers: [], volumes: [], networks: [] });
  });
});
