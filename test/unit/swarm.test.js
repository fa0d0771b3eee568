'use strict';
// RUNTIME=swarm: the stack file made from the compose project as Compose renders it, and what a scenario may ask.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { swarmStack, DROPPED } = require('../../src/runtime/swarm-render');
const { ipvsAvailable } = require('../../src/platform/swarm');
const { resolveScenario } = require('../../src/scenario/resolve');
const { writeScenario, tmpDir } = require('../helpers');

/** A project as `docker compose config` renders it (the parts the stack file changes). */
const RENDERED = {
  name: 'chainperf-x',
  services: {
    node: {
      image: 'chainperf/geth:1.16.7',
      command: ['--dev', '--http'],
      cpuset: '0',
      restart: 'no',
      networks: { default: null },
      ports: [{ mode: 'ingress', host_ip: '127.0.0.1', target: 8545, published: '40001', protocol: 'tcp' }],
      volumes: [{ type: 'volume', source: 'node-data', target: '/data', volume: {} }],
      labels: { 'io.chainperf.role': 'node' },
    },
    cadvisor: {
      image: 'chainperf/cadvisor:x',
      volumes: [{ type: 'bind', source: '/sys', target: '/sys', read_only: true, bind: { create_host_path: true } }],
    },
  },
  networks: { default: { name: 'chainperf-x_default' } },
  volumes: { 'node-data': { name: 'chainperf-x_node-data' } },
};

describe('swarm runtime: the stack file', () => {
  const doc = swarmStack(RENDERED, { nodeId: 'abc123' });

  it('is a version 3.8 stack file without the keys a swarm does not take', () => {
    assert.equal(doc.version, '3.8');
    assert.equal(doc.name, undefined);
    assert.equal(doc.networks, undefined, "the stack's own default network");
    for (const key of DROPPED) assert.equal(doc.services.node[key], undefined, key);
    assert.deepEqual(doc.services.node.command, ['--dev', '--http']);
    assert.deepEqual(doc.services.node.labels, { 'io.chainperf.role': 'node' });
  });

  it('publishes in host mode (no routing mesh, no IPVS) and reaches services by DNS round robin', () => {
    assert.deepEqual(doc.services.node.ports, [{ target: 8545, published: 40001, protocol: 'tcp', mode: 'host' }]);
    for (const svc of Object.values(doc.services)) assert.equal(svc.deploy.endpoint_mode, 'dnsrr');
  });

  it('places the node on the given swarm node, cAdvisor on every node, and restarts nothing', () => {
    assert.deepEqual(doc.services.node.deploy.placement.constraints, ['node.id == abc123']);
    assert.equal(doc.services.node.deploy.replicas, 1);
    assert.equal(doc.services.cadvisor.deploy.mode, 'global');
    for (const svc of Object.values(doc.services)) assert.deepEqual(svc.deploy.restart_policy, { condition: 'none' });
  });

  it("turns a memory limit into the service's deploy.resources (the swap limit is set on the container)", () => {
    const limited = { ...RENDERED, services: { node: { ...RENDERED.services.node, mem_limit: '536870912' } } };
    const node = swarmStack(limited, { nodeId: 'abc123' }).services.node;
    assert.deepEqual(node.deploy.resources, { limits: { memory: '536870912' } });
    assert.equal(node.mem_limit, undefined);
    assert.equal(doc.services.node.deploy.resources, undefined, 'no limit without MEMORY_MB');
  });

  it('keeps mounts in the long syntax without Compose v2 extras', () => {
    assert.deepEqual(doc.services.cadvisor.volumes, [
      { type: 'bind', source: '/sys', target: '/sys', read_only: true },
    ]);
    assert.deepEqual(doc.services.node.volumes, [{ type: 'volume', source: 'node-data', target: '/data' }]);
    assert.deepEqual(doc.volumes, { 'node-data': {} });
  });

  it('SWARM_NODE: places the node service on that node by hostname, CORES as a quota, its data in an anonymous volume', () => {
    const remote = swarmStack(RENDERED, { nodeId: 'abc123', remote: { hostname: 'worker-1', cpus: 2 } });
    const node = remote.services.node;
    assert.deepEqual(node.deploy.placement.constraints, ['node.hostname == worker-1']);
    assert.deepEqual(node.deploy.resources, { limits: { cpus: '2' } });
    assert.deepEqual(node.volumes, [{ type: 'volume', target: '/data' }], 'removed with its container');
    assert.deepEqual(remote.volumes, {}, 'no named volume left to outlive the stack on that node');
    assert.deepEqual(remote.services.cadvisor.deploy.mode, 'global');
    assert.equal(remote.services.cadvisor.deploy.placement, undefined);
    // MEMORY_MB: the service's memory limit beside the quota
    const limited = { ...RENDERED, services: { ...RENDERED.services, node: { ...RENDERED.services.node } } };
    limited.services.node.mem_limit = '2147483648';
    const node2 = swarmStack(limited, { nodeId: 'abc123', remote: { hostname: 'worker-1', cpus: 2 } }).services.node;
    assert.deepEqual(node2.deploy.resources, { limits: { memory: '2147483648', cpus: '2' } });
  });

  it('SWARM_NODE: a bind mount of a file on this machine cannot follow the node there', () => {
    const spec = { type: 'bind', source: '/tmp/spec.json', target: '/chainperf/chain-spec.json', read_only: true };
    const withSpec = {
      ...RENDERED,
      services: { node: { ...RENDERED.services.node, volumes: [...RENDERED.services.node.volumes, spec] } },
    };
    assert.throws(
      () => swarmStack(withSpec, { nodeId: 'abc123', remote: { hostname: 'worker-1', cpus: 1 } }),
      /SWARM_NODE=worker-1: the node service mounts \/tmp\/spec.json from the machine chainperf runs on/,
    );
  });

  it("SWARM_NODE on a network: the genesis as a config, the engine secret as a secret, the client's init before the node", () => {
    const folder = { type: 'bind', source: '/work/run/network', target: '/chainperf-network', read_only: true };
    const member = {
      ...RENDERED,
      services: {
        node: {
          ...RENDERED.services.node,
          command: ['--dev', '--authrpc.jwtsecret', '/chainperf-network/jwt.hex', "--extradata=it's"],
          volumes: [...RENDERED.services.node.volumes, folder],
        },
      },
    };
    const init = { entrypoint: ['geth'], initArgs: ['init', '--datadir', '/data', '/chainperf-network/genesis.json'] };
    const remote = { hostname: 'worker-1', cpus: 1, init };
    const out = swarmStack(member, { nodeId: 'abc123', remote });
    const node = out.services.node;
    assert.deepEqual(out.configs, { 'network-genesis': { file: '/work/run/network/genesis.json' } });
    assert.deepEqual(out.secrets, { 'network-jwt': { file: '/work/run/network/jwt.hex' } });
    assert.deepEqual(node.configs, [{ source: 'network-genesis', target: '/chainperf-network/genesis.json' }]);
    assert.deepEqual(node.secrets, [{ source: 'network-jwt', target: '/chainperf-network/jwt.hex' }]);
    assert.deepEqual(node.volumes, [{ type: 'volume', target: '/data' }], 'no bind mount left');
    assert.deepEqual(node.entrypoint, ['/bin/sh', '-c']);
    assert.deepEqual(node.command, [
      "geth init --datadir /data /chainperf-network/genesis.json && exec geth --dev --authrpc.jwtsecret /chainperf-network/jwt.hex '--extradata=it'\\''s'",
    ]);
    // without the client's init (no network), the folder is a bind mount like any other, and refused
    assert.throws(() => swarmStack(member, { nodeId: 'abc123', remote: { hostname: 'worker-1', cpus: 1 } }), /mounts/);
    assert.equal(doc.configs, undefined, 'no configs or secrets in a stack that needs none');
    assert.equal(doc.secrets, undefined);
  });

  it('SWARM_NODE with REPLICAS: each replica service placed on its swarm node, each with its own init', () => {
    const folder = { type: 'bind', source: '/work/run/network', target: '/chainperf-network', read_only: true };
    const member = (command) => ({
      ...RENDERED.services.node,
      command,
      volumes: [{ type: 'volume', source: 'x-data', target: '/data' }, folder],
    });
    const fleet = {
      ...RENDERED,
      services: { node: member(['--dev']), 'replica-2': member(['--r2']), haproxy: { image: 'chainperf/haproxy:x' } },
    };
    const init = { entrypoint: ['geth'], initArgs: ['init', '/chainperf-network/genesis.json'] };
    const remote = { hostname: 'w1', cpus: 1, init, replicas: { 'replica-2': { hostname: 'w2' } } };
    const out = swarmStack(fleet, { nodeId: 'abc123', remote });
    assert.deepEqual(out.services.node.deploy.placement.constraints, ['node.hostname == w1']);
    assert.deepEqual(out.services['replica-2'].deploy.placement.constraints, ['node.hostname == w2']);
    assert.deepEqual(out.services['replica-2'].deploy.resources, { limits: { cpus: '1' } });
    assert.deepEqual(out.services['replica-2'].command, [
      'geth init /chainperf-network/genesis.json && exec geth --r2',
    ]);
    assert.deepEqual(out.services.haproxy.deploy.placement.constraints, ['node.id == abc123'], 'the balancer stays');
    assert.equal(out.services['replica-2'].stop_signal, undefined, 'stopped as usual without a FAULT');
    const killed = swarmStack(fleet, { nodeId: 'abc123', remote: { ...remote, killed: 'replica-2' } });
    assert.equal(killed.services['replica-2'].stop_signal, 'SIGKILL', "FAULT's replica: scaling it to 0 kills it");
    assert.equal(killed.services['replica-2'].stop_grace_period, '0s');
    assert.equal(killed.services.node.stop_signal, undefined);
  });

  it('SWARM_BALANCER_NODE: HAProxy placed on that node, its cores a quota, its configuration a config of the stack', () => {
    const cfg = {
      type: 'bind',
      source: '/work/run/fleet/haproxy.cfg',
      target: '/etc/chainperf/haproxy.cfg',
      read_only: true,
    };
    const doc = {
      ...RENDERED,
      services: { ...RENDERED.services, haproxy: { image: 'chainperf/haproxy:x', volumes: [cfg] } },
    };
    const out = swarmStack(doc, { nodeId: 'abc123', balancer: { hostname: 'w2', cpus: 1 } });
    const lb = out.services.haproxy;
    assert.deepEqual(lb.deploy.placement.constraints, ['node.hostname == w2']);
    assert.deepEqual(lb.deploy.resources, { limits: { cpus: '1' } });
    assert.equal(lb.volumes, undefined, 'no file of this machine mounted there');
    assert.deepEqual(lb.configs, [{ source: 'haproxy-config', target: '/etc/chainperf/haproxy.cfg' }]);
    assert.deepEqual(out.configs, { 'haproxy-config': { file: '/work/run/fleet/haproxy.cfg' } });
    assert.deepEqual(out.services.node.deploy.placement.constraints, ['node.id == abc123'], 'the node stays');
    const here = swarmStack(doc, { nodeId: 'abc123' }).services.haproxy;
    assert.deepEqual(here.deploy.placement.constraints, ['node.id == abc123']);
    assert.equal(here.volumes[0].type, 'bind');
  });

  it('SWARM_GENERATOR_NODES: a service per generator on its node, its agent at a port there, the token a secret', () => {
    const generators = {
      image: 'chainperf/generator:abc',
      tokenFile: '/tmp/run/generator-token',
      root: '/tmp/run',
      list: [
        { index: 0, service: 'generator-0', hostname: 'w2', port: 41000 },
        { index: 1, service: 'generator-1', hostname: 'vm', port: 41001 },
      ],
    };
    const out = swarmStack(RENDERED, { nodeId: 'abc123', generators });
    const g1 = out.services['generator-1'];
    assert.equal(g1.image, 'chainperf/generator:abc');
    assert.deepEqual(g1.deploy.placement.constraints, ['node.hostname == vm']);
    assert.deepEqual(out.services['generator-0'].deploy.placement.constraints, ['node.hostname == w2']);
    assert.deepEqual(g1.ports, [{ target: 41001, published: 41001, protocol: 'tcp', mode: 'host' }]);
    assert.equal(g1.environment.CHAINPERF_AGENT_ROOT, '/tmp/run');
    assert.equal(g1.environment.CHAINPERF_AGENT_PORT, '41001');
    assert.deepEqual(g1.secrets, [{ source: 'generator-token', target: 'generator-token' }]);
    assert.equal(g1.environment.CHAINPERF_AGENT_TOKEN_FILE, '/run/secrets/generator-token');
    assert.deepEqual(out.secrets, { 'generator-token': { file: '/tmp/run/generator-token' } });
    assert.equal(g1.deploy.restart_policy.condition, 'none', 'a generator that exits is not restarted');
    assert.equal(swarmStack(RENDERED, { nodeId: 'abc123' }).services['generator-0'], undefined);
  });

  it('tells a kernel without IPVS', () => {
    assert.equal(ipvsAvailable('/nonexistent/ip_vs'), false);
    assert.equal(ipvsAvailable(__filename), true);
  });
});

describe('swarm runtime: the scenario', () => {
  const resolve = (text) =>
    resolveScenario(writeScenario(tmpDir(), 's', `CHAIN=ethereum\nCLIENT=geth\n${text}`), {
      env: {},
      cpuCount: 2,
      dockerEngine: '20.10.24',
    });

  it("takes the compose runtime's keys, except a volume kept outside the stack and a bind address", () => {
    assert.deepEqual(resolve('RUNTIME=swarm\nKEEP=stack\nSTACK_TIMEOUT_S=60\nGRAFANA=no\n').errors, []);
    assert.match(
      resolve('RUNTIME=swarm\nNODE_VOLUME=kept\n').errors.join(),
      /NODE_VOLUME is only used with RUNTIME=compose/,
    );
    assert.match(
      resolve('RUNTIME=swarm\nBIND_ADDR=0.0.0.0\n').errors.join(),
      /BIND_ADDR is only used with RUNTIME=compose/,
    );
  });

  it("refuses what its stack does not do yet, and the compose runtime's short windows", () => {
    const errs = (text) => resolve(`RUNTIME=swarm\n${text}`).errors.join('\n');
    assert.deepEqual(resolve('RUNTIME=swarm\nSTATE=small\nMEMORY_MB=2048\n').errors, []);
    assert.deepEqual(resolve('RUNTIME=swarm\nSTATE=small\nNETWORK_NODES=1\nREPLICAS=2\n').errors, []);
    assert.match(errs('DISK_READ_MBPS=100\n'), /DISK_READ_MBPS \(a swarm service takes no block I\/O limit\): not yet/);
    assert.match(errs('NODE_PROFILE=cpu\n'), /NODE_PROFILE=cpu: not yet with RUNTIME=swarm/);
    assert.deepEqual(resolve('RUNTIME=swarm\nGENERATORS=2\n').errors, [], 'processes on the machine chainperf runs on');
    assert.deepEqual(resolve('RUNTIME=swarm\nNETWORK_NODES=2\nPEERS=2\n').errors, []);
    assert.match(errs('DURATION_S=3\n'), /at least 5 s with RUNTIME=swarm/);
  });

  it('SWARM_NODE: swarm only; refuses what needs an engine on the machine chainperf runs on', () => {
    const errs = (text) => resolve(`RUNTIME=swarm\nSWARM_NODE=worker-1\n${text}`).errors.join('\n');
    assert.deepEqual(resolve('RUNTIME=swarm\nSWARM_NODE=worker-1\nCORES=1\nKEEP=stack\n').errors, []);
    assert.match(
      resolve('RUNTIME=compose\nSWARM_NODE=worker-1\n').errors.join(),
      /SWARM_NODE is only used with RUNTIME=swarm/,
    );
    assert.match(errs('STATE=small\n'), /STATE: not yet with SWARM_NODE/);
    assert.equal(errs('MEMORY_MB=2048\n'), '', 'the memory limit goes with the service; swap is measured');
    assert.deepEqual(resolve('RUNTIME=swarm\nSWARM_NODE=w1,w2\nNETWORK_NODES=1\nREPLICAS=3\n').errors, []);
    assert.equal(errs('NETWORK_NODES=1\nREPLICAS=2\nFAULT=kill-replica@5s\n'), '', 'killed through the swarm');
    const warned = (text) => resolve(`RUNTIME=swarm\nNETWORK_NODES=1\nREPLICAS=2\n${text}`).warnings.join('\n');
    assert.match(
      warned('SWARM_NODE=w1\nDURATION_S=30\nFAULT=kill-replica@25s\n'),
      /5 s before the window's end it may land after it/,
    );
    assert.doesNotMatch(warned('SWARM_NODE=w1\nDURATION_S=30\nFAULT=kill-replica@20s\n'), /FAULT/);
    assert.doesNotMatch(
      warned('DURATION_S=30\nFAULT=kill-replica@25s\n'),
      /FAULT/,
      'no SWARM_NODE: killed by the engine',
    );
    assert.match(
      resolve('RUNTIME=swarm\nSWARM_NODE=w1,w2,w3\nNETWORK_NODES=1\nREPLICAS=2\n').errors.join(),
      /SWARM_NODE names 3 swarm nodes for 2 replicas/,
    );
    assert.deepEqual(resolve('RUNTIME=swarm\nSWARM_NODE=worker-1\nNETWORK_NODES=2\n').errors, [], 'a member there');
    assert.match(errs('NETWORK_NODES=1\nSYNC=network\n'), /SYNC: not yet with SWARM_NODE/);
    assert.match(errs('KEEP=volume\n'), /KEEP: not yet with SWARM_NODE/);
    assert.match(resolve('RUNTIME=swarm\nSWARM_NODE=no such node\n').errors.join(), /is not a node's hostname/);
  });

  it('SWARM_GENERATOR_NODES: swarm only, hostnames, no more than GENERATORS, not with a replay', () => {
    assert.deepEqual(resolve('RUNTIME=swarm\nGENERATORS=2\nSWARM_GENERATOR_NODES=w1, w2\n').errors, []);
    assert.deepEqual(resolve('RUNTIME=swarm\nSWARM_GENERATOR_NODES=w1\n').errors, []);
    assert.match(
      resolve('RUNTIME=swarm\nGENERATORS=1\nSWARM_GENERATOR_NODES=w1,w2\n').errors.join(),
      /names 2 swarm nodes for 1 generator \(GENERATORS\): one each at most/,
    );
    assert.match(resolve('RUNTIME=swarm\nSWARM_GENERATOR_NODES=a b\n').errors.join(), /"a b" is not a node's hostname/);
    assert.match(
      resolve('RUNTIME=compose\nSWARM_GENERATOR_NODES=w1\n').errors.join(),
      /SWARM_GENERATOR_NODES is only used with RUNTIME=swarm/,
    );
    const capture = path.join(tmpDir(), 'c.jsonl');
    fs.writeFileSync(capture, '{"t":0,"method":"eth_blockNumber","params":[]}\n');
    assert.match(
      resolve(`RUNTIME=swarm\nWORKLOAD=replay:${capture}\nSWARM_GENERATOR_NODES=w1\n`).errors.join(),
      /SWARM_GENERATOR_NODES with a replay: its capture is a file on this machine/,
    );
  });

  it('SWARM_BALANCER_NODE: swarm only, and only where there is a balancer to place', () => {
    const fleet = 'RUNTIME=swarm\nREPLICAS=2\nNETWORK_NODES=1\nPEERS=2\n';
    assert.deepEqual(resolve(`${fleet}SWARM_BALANCER_NODE=worker-1\n`).errors, []);
    assert.deepEqual(resolve('RUNTIME=swarm\nBALANCER=haproxy\nNETWORK_NODES=1\nSWARM_BALANCER_NODE=w1\n').errors, []);
    assert.match(
      resolve('RUNTIME=swarm\nBALANCER=none\nSWARM_BALANCER_NODE=worker-1\n').errors.join(),
      /SWARM_BALANCER_NODE places HAProxy, and this scenario has none/,
    );
    assert.match(
      resolve('RUNTIME=compose\nREPLICAS=2\nNETWORK_NODES=1\nSWARM_BALANCER_NODE=w1\n').errors.join(),
      /SWARM_BALANCER_NODE is only used with RUNTIME=swarm/,
    );
    assert.match(resolve(`${fleet}SWARM_BALANCER_NODE=a b\n`).errors.join(), /"a b" is not a node's hostname/);
  });
});

describe('swarm runtime: SWARM_NODE placement', () => {
  const swarm = require('../../src/platform/swarm');
  const { remotePlacement } = require('../../src/runtime/swarm-placement');
  const { taskExitOf } = require('../../src/runtime/swarm-tasks');
  const listed = [
    { id: 'm1', hostname: 'manager', addr: '10.0.0.1', state: 'ready', availability: 'active', role: 'manager' },
    { id: 'w1', hostname: 'worker-1', addr: '10.0.0.2', state: 'ready', availability: 'active', role: 'worker' },
    { id: 'w2', hostname: 'worker-2', addr: '10.0.0.3', state: 'down', availability: 'active', role: 'worker' },
  ];
  const real = swarm.swarmNodes;
  before(() => (swarm.swarmNodes = async () => listed));
  after(() => (swarm.swarmNodes = real));
  const st = { hostname: 'manager' };

  it("is nothing without SWARM_NODE, or when it names chainperf's own node", async () => {
    assert.equal(await remotePlacement({ SWARM_NODE: '' }, st, '0'), null);
    assert.equal(await remotePlacement({ SWARM_NODE: 'manager' }, st, '0'), null);
  });

  it("gives the node's id, its address and CORES as a count of CPUs", async () => {
    assert.deepEqual(await remotePlacement({ SWARM_NODE: 'worker-1' }, st, '0-2'), {
      hostname: 'worker-1',
      id: 'w1',
      addr: '10.0.0.2',
      cpus: 3,
    });
  });

  it('with REPLICAS, places replica 1 (the node) on the first name and the others on the next, in turn', async () => {
    const placed = await remotePlacement({ SWARM_NODE: 'worker-1,manager', REPLICAS: 3 }, st, '0');
    assert.equal(placed.hostname, 'worker-1');
    assert.deepEqual(placed.replicas, {
      'replica-2': { hostname: 'manager', id: 'm1', addr: '10.0.0.1' },
      'replica-3': { hostname: 'worker-1', id: 'w1', addr: '10.0.0.2' },
    });
    await assert.rejects(remotePlacement({ SWARM_NODE: 'worker-1,worker-9', REPLICAS: 2 }, st, '0'), /worker-9/);
    const faulted = await remotePlacement({ SWARM_NODE: 'worker-1', REPLICAS: 3, FAULT: 'kill-replica@5s' }, st, '0');
    assert.equal(faulted.killed, 'replica-3', 'the last replica, the one FAULT kills');
  });

  it('SWARM_BALANCER_NODE: the node HAProxy goes to, its cores as a count of CPUs; nothing for this one', async () => {
    const { balancerPlacement } = require('../../src/runtime/swarm-placement');
    assert.equal(await balancerPlacement({ SWARM_BALANCER_NODE: '' }, st, '1'), null);
    assert.equal(await balancerPlacement({ SWARM_BALANCER_NODE: 'manager' }, st, '1'), null);
    assert.deepEqual(await balancerPlacement({ SWARM_BALANCER_NODE: 'worker-1' }, st, '1'), {
      hostname: 'worker-1',
      id: 'w1',
      addr: '10.0.0.2',
      cpus: 1,
    });
    await assert.rejects(
      balancerPlacement({ SWARM_BALANCER_NODE: 'worker-2' }, st, '1'),
      /SWARM_BALANCER_NODE=worker-2: the node is down/,
    );
  });

  it("names the swarm's nodes when it has no such node, and refuses one that cannot take tasks", async () => {
    await assert.rejects(
      remotePlacement({ SWARM_NODE: 'worker-9' }, st, '0'),
      /SWARM_NODE=worker-9: the swarm has no such node \(its nodes: manager, worker-1, worker-2\)/,
    );
    await assert.rejects(remotePlacement({ SWARM_NODE: 'worker-2' }, st, '0'), /the node is down and active/);
  });

  it('FAULT on a placed replica: scales its service to 0, then tells when its swarm node reported the task stopped', async () => {
    const { killPlaced } = require('../../src/runtime/swarm-tasks');
    const realScale = swarm.scaleService;
    const realTasks = swarm.serviceTasks;
    const calls = [];
    let polls = 0;
    swarm.scaleService = async (...args) => calls.push(args);
    swarm.serviceTasks = async () => {
      polls += 1;
      const Status =
        polls < 3
          ? { State: 'running', Timestamp: '2026-11-27T22:00:00.000000000Z' }
          : { State: 'shutdown', Timestamp: '2026-11-27T22:00:03.250123456Z', ContainerStatus: { ExitCode: 137 } };
      return [
        { ID: 't2', Status },
        { ID: 'older', Status: { State: 'running' } },
      ];
    };
    try {
      const gone = [];
      const before = Date.now();
      await killPlaced('st', { service: 'replica-2', task: 't2', hostname: 'worker-1' }, (x) => gone.push(x));
      assert.deepEqual(calls, [['st', 'replica-2', 0]]);
      assert.equal(polls, 3, 'looked at until the task stopped');
      assert.equal(gone.length, 1);
      assert.equal(gone[0].reported_ms, Date.parse('2026-11-27T22:00:03.250Z'), "the stop, by the swarm node's report");
      assert.ok(gone[0].ordered_ms >= before && gone[0].ordered_ms <= Date.now());
      assert.match(gone[0].how, /scaled to 0 through the swarm's managers.*worker-1 with SIGKILL/);
      const removed = [];
      swarm.serviceTasks = async () => [];
      await killPlaced('st', { service: 'replica-2', task: 't2', hostname: 'worker-1' }, (x) => removed.push(x));
      assert.ok(Math.abs(removed[0].reported_ms - Date.now()) < 1000, 'a task already removed: when it was seen gone');
      assert.match(removed[0].how, /first seen without its task/);
      swarm.serviceTasks = async () => [{ ID: 't2', Status: { State: 'running' } }];
      await assert.rejects(
        killPlaced('st', { service: 'replica-2', task: 't2', hostname: 'worker-1' }, () => {}, { timeoutMs: 150 }),
        /scaled to 0, but its task on worker-1 still runs/,
      );
    } finally {
      swarm.scaleService = realScale;
      swarm.serviceTasks = realTasks;
    }
  });

  it("reads a task that stopped running as the node's exit, with its exit code", () => {
    assert.equal(taskExitOf({ Status: { State: 'running' } }), null);
    assert.deepEqual(taskExitOf({ Status: { State: 'failed', ContainerStatus: { ExitCode: 137 } } }), {
      code: 137,
      signal: null,
      status: 'failed',
    });
    assert.deepEqual(taskExitOf(undefined), { code: null, signal: null, status: 'removed' });
  });
});

describe('swarm runtime: a task whose container never started', () => {
  const swarm = require('../../src/platform/swarm');
  const { remoteContainer, runningContainers } = require('../../src/runtime/swarm-tasks');
  const place = { id: 'w1', hostname: 'worker-1', addr: '10.0.0.2' };
  const at = (s) => `2026-11-29T22:00:0${s}.000Z`;
  const unstarted = (id, s) => ({
    ID: id,
    CreatedAt: at(s),
    Status: {
      State: 'failed',
      Err: 'starting container failed: unable to remount dir as readonly: device or resource busy',
    },
  });
  const running = (id, s) => ({
    ID: id,
    CreatedAt: at(s),
    NodeID: 'w1',
    Slot: 1,
    Status: { State: 'running', ContainerStatus: { ContainerID: `c-${id}` } },
  });
  const real = { tasks: swarm.serviceTasks, force: swarm.forceUpdate, containers: swarm.stackContainers };
  let forced;
  beforeEach(() => {
    forced = [];
    swarm.forceUpdate = async (...args) => forced.push(args);
  });
  afterEach(() =>
    Object.assign(swarm, { serviceTasks: real.tasks, forceUpdate: real.force, stackContainers: real.containers }),
  );

  it('gives it a new task once, with a warning, and waits for that one', async () => {
    swarm.serviceTasks = async () => (forced.length ? [running('t2', 2), unstarted('t1', 1)] : [unstarted('t1', 1)]);
    const warnings = [];
    const lines = [];
    const c = await remoteContainer('st', 'node', place, { timeoutS: 10, warnings, log: (l) => lines.push(l) });
    assert.deepEqual(forced, [['st', 'node']], 'the service updated with force, once');
    assert.equal(c.task, 't2');
    assert.equal(c.name, 'st_node.1.t2');
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0],
      /failed to start the container of node on worker-1 \(starting container failed: unable to remount/,
    );
    assert.match(lines[0], /^warning: /);
  });

  it('fails on the second task that never started, and at once on a node that exited', async () => {
    swarm.serviceTasks = async () => (forced.length ? [unstarted('t2', 2), unstarted('t1', 1)] : [unstarted('t1', 1)]);
    await assert.rejects(
      remoteContainer('st', 'node', place, { timeoutS: 10 }),
      /swarm task of node on worker-1 failed: starting container failed/,
    );
    assert.equal(forced.length, 1);
    forced = [];
    swarm.serviceTasks = async () => [
      { ID: 't1', CreatedAt: at(1), Status: { State: 'failed', Err: 'task: non-zero exit (1)' } },
    ];
    await assert.rejects(remoteContainer('st', 'node', place, { timeoutS: 10 }), /failed: task: non-zero exit \(1\)/);
    assert.deepEqual(forced, [], 'a node that ran and exited is not started again');
  });

  it('on this engine too: the new task is waited for, the replaced one passed over', async () => {
    swarm.stackContainers = async () =>
      forced.length ? [{ Id: 'c2', State: 'running', Names: ['/st_node.1.t2'] }] : [];
    swarm.serviceTasks = async () => (forced.length ? [running('t2', 2), unstarted('t1', 1)] : [unstarted('t1', 1)]);
    const warnings = [];
    const got = await runningContainers('st', ['node'], { timeoutS: 10, warnings });
    assert.deepEqual(got, { node: { id: 'c2', name: 'st_node.1.t2' } });
    assert.deepEqual(forced, [['st', 'node']]);
    assert.equal(warnings.length, 1);
    assert.doesNotMatch(warnings[0], / on /, 'no swarm node named for a task on this engine');
  });
});
