'use strict';
// Companions chainperf chooses (src/scenario/companions.js): a key whose value
// needs another that the scenario leaves unset gets the smallest value that
// serves, with its source and the run's line; a companion given with a
// contradicting value is refused as before.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { resolveScenario } = require('../../src/scenario/resolve');
const { COMPANIONS, deriveCompanions, derivedLine } = require('../../src/scenario/companions');
const { logTo } = require('../../src/util/log');
const { tmpDir, writeScenario } = require('../helpers');

describe('companions chainperf chooses', () => {
  let dir;
  beforeEach(() => {
    dir = tmpDir();
  });
  /** Resolves a scenario of these lines (RUNTIME=host unless they say), no Docker engine. */
  const resolve = (text, env = {}) =>
    resolveScenario(writeScenario(dir, 'c', /RUNTIME=/.test(text) ? text : `RUNTIME=host\n${text}`), {
      env,
      cpuCount: 2,
      dockerEngine: null,
    });
  /** The derived companions as the run prints them. */
  const lines = (r) => r.derived.map(derivedLine);
  const errs = (text, env) => resolve(text, env).errors.join('\n');

  it('REPLICAS=3 without NETWORK_NODES: a network of one node, its source, its line; no warning about PEERS', () => {
    const r = resolve('REPLICAS=3\n');
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.NETWORK_NODES, 1);
    assert.equal(r.sources.NETWORK_NODES, 'derived (REPLICAS=3 needs a network)');
    assert.deepEqual(lines(r), ['NETWORK_NODES=1: derived, because REPLICAS=3 needs a network']);
    assert.deepEqual(r.warnings, [], 'PEERS=50 is the default: the derived network is not warned about');
    assert.equal(r.scenario.BALANCER, 'haproxy');
    assert.equal(r.scenario.NETWORK_TPS, 2, "a network's default traffic");
    assert.equal(r.scenario.TRANSPORT, 'http');
    assert.equal(r.sources.TRANSPORT, 'default', 'already HTTP: nothing derived');
    // the environment's empty value means "not given"
    assert.equal(resolve('REPLICAS=3\n', { NETWORK_NODES: '' }).scenario.NETWORK_NODES, 1);
  });

  it('REPLICAS=3 with NETWORK_NODES given: kept; NETWORK_NODES=0 given: refused, saying how to leave it to chainperf', () => {
    const two = resolve('REPLICAS=3\nNETWORK_NODES=2\nPEERS=2\n');
    assert.deepEqual(two.errors, []);
    assert.equal(two.scenario.NETWORK_NODES, 2);
    assert.deepEqual(two.derived, []);
    assert.match(
      errs('REPLICAS=3\n', { NETWORK_NODES: '0' }),
      /c\.env:2: REPLICAS: replicas share one chain through a network; NETWORK_NODES=0 \(environment NETWORK_NODES\) starts none; set NETWORK_NODES to 1 or more, or leave it unset$/m,
    );
  });

  it('PEERS given above the network chainperf chose: warned, naming the choice', () => {
    const r = resolve('REPLICAS=2\nPEERS=6\n');
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, [
      'PEERS=6 but the network chainperf starts has 1 other node (NETWORK_NODES=1, derived (REPLICAS=2 needs a network)): the node will have at most 1 peer; set NETWORK_NODES for more',
    ]);
    assert.match(resolve('REPLICAS=2\nPEERS=0\n').warnings.join(), /PEERS=0: the node refuses every peer/);
    assert.match(
      resolve('NETWORK_NODES=1\n').warnings.join(),
      /PEERS=50 but the network has 1 other nodes/,
      'as before',
    );
  });

  it('REPLICAS with TRANSPORT=ws given: refused; attach: no network, the fleet refusal alone', () => {
    assert.match(errs('REPLICAS=2\nTRANSPORT=ws\n'), /REPLICAS: the balancer speaks HTTP; set TRANSPORT=http/);
    const att = resolve('RUNTIME=attach\nRPC_URL=http://127.0.0.1:1\nNODE_PID=1\nREPLICAS=2\n');
    assert.equal(att.scenario, null);
    assert.deepEqual(att.derived, []);
    assert.match(att.errors.join('\n'), /chainperf starts no fleet with RUNTIME=attach/);
    assert.doesNotMatch(att.errors.join('\n'), /NETWORK_NODES/);
  });

  it('a client that cannot join a network: the derived network is refused with its reason and its cause', () => {
    assert.match(
      errs('CLIENT=anvil\nREPLICAS=2\n'),
      /^derived \(REPLICAS=2 needs a network\): NETWORK_NODES: anvil is a development node without peer-to-peer networking$/m,
    );
  });

  it('SYNC=network, BLOCK_DELIVERY and NETWORK_TPS above 0 without NETWORK_NODES: a network of one node each', () => {
    for (const [text, cause] of [
      ['SYNC=network\n', 'SYNC=network'],
      ['BLOCK_DELIVERY=head\n', 'BLOCK_DELIVERY=head'],
      ['BLOCK_DELIVERY=payload\n', 'BLOCK_DELIVERY=payload'],
      ['NETWORK_TPS=5\n', 'NETWORK_TPS=5'],
      ['BALANCER=haproxy\n', 'BALANCER=haproxy'],
    ]) {
      const r = resolve(text);
      assert.deepEqual(r.errors, [], text);
      assert.equal(r.scenario.NETWORK_NODES, 1, text);
      assert.equal(r.sources.NETWORK_NODES, `derived (${cause} needs a network)`, text);
      assert.deepEqual(lines(r), [`NETWORK_NODES=1: derived, because ${cause} needs a network`], text);
      assert.deepEqual(r.warnings, [], text);
    }
    assert.equal(resolve('NETWORK_TPS=0\n').scenario.NETWORK_NODES, 0, 'no traffic, no network');
    assert.match(errs('SYNC=network\nNETWORK_NODES=0\n'), /SYNC=network: .*NETWORK_NODES=0 \(.*\) starts none/);
    assert.match(errs('BLOCK_DELIVERY=head\nNETWORK_NODES=0\n'), /BLOCK_DELIVERY: a lone node builds its own blocks/);
    assert.match(
      errs('NETWORK_TPS=5\nNETWORK_NODES=0\n'),
      /NETWORK_TPS: transactions enter through the network's nodes/,
    );
    assert.match(
      errs('RUNTIME=attach\nRPC_URL=http://127.0.0.1:1\nNODE_PID=1\nSYNC=network\n'),
      /SYNC=network: the node syncs from a network chainperf starts; RUNTIME=attach starts no network/,
    );
  });

  it('FAULT=kill-replica without REPLICAS: two replicas, and the network they need, in that order', () => {
    const r = resolve('FAULT=kill-replica@3s\n');
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.REPLICAS, 2);
    assert.equal(r.sources.REPLICAS, 'derived (FAULT=kill-replica@3s needs another replica to serve on)');
    assert.equal(r.scenario.BALANCER, 'haproxy');
    assert.deepEqual(lines(r), [
      'REPLICAS=2: derived, because FAULT=kill-replica@3s needs another replica to serve on',
      'NETWORK_NODES=1: derived, because REPLICAS=2 needs a network',
    ]);
    assert.match(errs('FAULT=kill-replica@3s\nREPLICAS=1\n'), /FAULT=kill-replica: the fleet needs another replica/);
    assert.match(errs('FAULT=kill-replica@3s\nBALANCER=none\n'), /FAULT=kill-replica: the fleet needs another replica/);
    assert.deepEqual(resolve('FAULT=kill-node@3s\n').derived, [], 'a fault chainperf does not know derives nothing');
    assert.match(
      errs('FAULT=kill-replica@3s\nTRANSPORT=ws\n'),
      /^derived \(FAULT=kill-replica@3s needs another replica to serve on\): REPLICAS: the balancer speaks HTTP; set TRANSPORT=http$/m,
      'a fleet problem is named where its REPLICAS came from',
    );
  });

  it('a subscription workload without TRANSPORT: WebSocket; TRANSPORT=http given, or a fleet: refused', () => {
    const r = resolve('WORKLOAD=eth-subscriptions\n');
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.TRANSPORT, 'ws');
    assert.deepEqual(lines(r), [
      'TRANSPORT=ws: derived, because WORKLOAD=eth-subscriptions needs WebSocket for its subscriptions',
    ]);
    assert.match(errs('WORKLOAD=eth-subscriptions\nTRANSPORT=http\n'), /set TRANSPORT=ws/);
    // a fleet keeps HTTP, which its balancer speaks: the two cannot be served together
    const fleet = resolve('WORKLOAD=eth-subscriptions\nREPLICAS=2\n');
    assert.equal(fleet.scenario, null);
    assert.match(fleet.errors.join('\n'), /holds eth_subscribe subscriptions over WebSocket/);
  });

  it('LEAN_SENDER=native without GENERATOR: the lean engine; GENERATOR given otherwise, or a Substrate chain: refused', () => {
    const r = resolve('LEAN_SENDER=native\n');
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.GENERATOR, 'lean');
    assert.deepEqual(lines(r), ['GENERATOR=lean: derived, because LEAN_SENDER=native needs the lean engine']);
    assert.match(errs('LEAN_SENDER=native\nGENERATOR=ethers\n'), /lean engine's sender, and GENERATOR=ethers/);
    assert.match(errs('CHAIN=polkadot\nLEAN_SENDER=native\n'), /lean engine's sender, and GENERATOR=ethers/);
  });

  it('swarm: SWARM_GENERATOR_NODES names more nodes than GENERATORS, which is unset: one generator each', () => {
    const r = resolve('RUNTIME=swarm\nSWARM_GENERATOR_NODES=w1, w2,w3\n');
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.GENERATORS, 3);
    assert.deepEqual(lines(r), [
      'GENERATORS=3: derived, because SWARM_GENERATOR_NODES=w1, w2,w3 needs a generator on each node',
    ]);
    assert.deepEqual(resolve('RUNTIME=swarm\nSWARM_GENERATOR_NODES=w1\n').derived, [], 'one node: one generator');
    assert.match(
      errs('RUNTIME=swarm\nSWARM_GENERATOR_NODES=w1,w2\nGENERATORS=1\n'),
      /names 2 swarm nodes for 1 generator \(GENERATORS\): one each at most/,
    );
  });

  it('swarm: SWARM_BALANCER_NODE without a balancer: HAProxy in front of one replica, on the network it needs', () => {
    const r = resolve('RUNTIME=swarm\nSWARM_BALANCER_NODE=lb-1\n');
    assert.deepEqual(r.errors, []);
    assert.equal(r.scenario.BALANCER, 'haproxy');
    assert.equal(r.scenario.REPLICAS, 1);
    assert.deepEqual(lines(r), [
      'BALANCER=haproxy: derived, because SWARM_BALANCER_NODE=lb-1 needs a balancer to place',
      'NETWORK_NODES=1: derived, because BALANCER=haproxy needs a network',
    ]);
    const fleet = resolve('RUNTIME=swarm\nSWARM_BALANCER_NODE=lb-1\nREPLICAS=2\n');
    assert.equal(fleet.sources.BALANCER, 'default (REPLICAS=2)', 'a fleet has HAProxy by default');
    assert.match(
      errs('RUNTIME=swarm\nSWARM_BALANCER_NODE=lb-1\nBALANCER=none\n'),
      /SWARM_BALANCER_NODE places HAProxy, and this scenario has none/,
    );
  });

  it('keeps the refusals where chainperf would have to guess what the user means', () => {
    assert.match(errs('SHAPE=step\n'), /shapes an open loop's rate: set RATE/);
    assert.match(errs('STATE_DISTRIBUTION=skewed\n'), /set STATE=small, medium, large or xlarge/);
    assert.match(errs('LB_ALGORITHM=first\n'), /no balancer \(BALANCER=none\)/);
    assert.match(errs('RUNTIME=swarm\nSWARM_NODE=w1,w2\n'), /SWARM_NODE names 2 swarm nodes for 1 replica/);
    assert.match(errs('RUNTIME=compose\nSNAPSHOT=/nonexistent.tar\n'), /set NODE_VOLUME too/);
  });

  it('a row is an entry of the table: it sees what earlier rows chose, and never takes a companion another row kept', () => {
    const values = { LOAD: 'chain', NETWORK_NODES: 0, SPEED: 'slow', PEERS: 50 };
    const sources = { LOAD: 'f.env:1', NETWORK_NODES: 'default', SPEED: 'default', PEERS: 'default' };
    const rows = [
      {
        cause: () => 'LOAD=chain',
        when: (v) => v.LOAD === 'chain',
        key: 'NETWORK_NODES',
        value: 1,
        serves: (v) => v.NETWORK_NODES > 0,
        needs: 'a network',
      },
      {
        cause: () => 'NETWORK_NODES=1',
        when: (v) => v.NETWORK_NODES > 0,
        key: 'SPEED',
        value: 'fast',
        serves: (v) => v.SPEED === 'fast',
        needs: 'speed',
      },
      {
        cause: () => 'LOAD=chain',
        when: () => true,
        key: 'SPEED',
        value: 'slower',
        serves: () => false,
        needs: 'less',
      },
      { cause: () => 'LOAD=chain', when: () => true, key: 'PEERS', value: 1, serves: () => false, needs: 'a peer' },
    ];
    const derived = deriveCompanions(values, sources, { PEERS: { value: 50, where: 'environment PEERS' } }, rows);
    assert.deepEqual(derived.map(derivedLine), [
      'NETWORK_NODES=1: derived, because LOAD=chain needs a network',
      'SPEED=fast: derived, because NETWORK_NODES=1 needs speed',
    ]);
    assert.equal(values.SPEED, 'fast', 'the third row wants another value: the first choice stands');
    assert.equal(values.PEERS, 50, 'a key the scenario gives is never changed');
    assert.equal(sources.SPEED, 'derived (NETWORK_NODES=1 needs speed)');
    assert.ok(
      COMPANIONS.every((row) => ['doc', 'cause', 'when', 'key', 'value', 'serves', 'needs'].every((f) => f in row)),
    );
  });

  it("the first lines of a run and of an A/B session name each derived companion; run.json's sources hold its source", () => {
    const { openRun } = require('../../src/run');
    const r = resolve('REPLICAS=3\n', { REPORTS_DIR: dir });
    const { reportDir, workDir } = openRun('c.env', r.scenario, r.derived);
    logTo(null);
    fs.rmSync(workDir, { recursive: true, force: true });
    const log = fs.readFileSync(path.join(reportDir, 'run.log'), 'utf8').split('\n');
    assert.match(log[0], /run \S+: scenario c\.env/);
    assert.match(log[1], /NETWORK_NODES=1: derived, because REPLICAS=3 needs a network$/);
    assert.match(log[2], /report folder: /);
    // ./run.sh ab: each side's, in the session's first lines
    const { logOpening } = require('../../src/ab/run');
    const abLog = path.join(dir, 'ab.log');
    logTo(abLog);
    const sa = { AB_TARGET_PCT: 2, AB_BURN_IN_PAIRS: 0, AB_MIN_PAIRS: 4, AB_MAX_PAIRS: 20, AB_MAX_S: 600 };
    logOpening({ runId: 'x', fileA: 'a.env', fileB: 'b.env', sa, dir }, { A: resolve('SYNC=network\n'), B: r });
    logTo(null);
    assert.deepEqual(
      fs
        .readFileSync(abLog, 'utf8')
        .split('\n')
        .slice(1, 3)
        .map((l) => l.replace(/^\[[^\]]*\] /, '')),
      [
        'A: NETWORK_NODES=1: derived, because SYNC=network needs a network',
        'B: NETWORK_NODES=1: derived, because REPLICAS=3 needs a network',
      ],
    );
    const { provenance } = require('../../src/report/provenance');
    const p = provenance({ scenario: r.scenario, sources: r.sources, client: {}, runtime: 'host' });
    assert.equal(p.scenario.NETWORK_NODES, 1);
    assert.equal(p.scenario_sources.NETWORK_NODES, 'derived (REPLICAS=3 needs a network)');
  });
});
