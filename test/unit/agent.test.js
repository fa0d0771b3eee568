'use strict';
// SWARM_GENERATOR_NODES: the generator agent (what runs in a generator's container) and chainperf's side of it,
// over a real HTTP connection on this machine; the agent's files kept apart below a prefix, as on another machine.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { createAgent, CpuSamples } = require('../../src/workload/agent');
const { GeneratorAgent, settleReadings, agentsGroup, remoteSpec } = require('../../src/workload/agent-client');
const { tmpDir } = require('../helpers');

describe('generator agent (SWARM_GENERATOR_NODES)', () => {
  let server;
  let there; // what stands for the other machine's file system
  let root; // the run's work folder: the same path on both sides
  let client;

  beforeEach(async () => {
    there = tmpDir();
    root = tmpDir();
    // a container busy on one core: its counter is the clock, in seconds
    const cpu = { source: 'test', read: () => Date.now() / 1000 };
    server = createAgent({ root, token: 'secret', cpu, prefix: there });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new GeneratorAgent({
      index: 1,
      hostname: 'worker-1',
      addr: '127.0.0.1',
      port: server.address().port,
      token: 'secret',
      root,
      hereAddr: '10.0.0.5',
    });
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  const farSide = (p) => path.join(there, p);

  it('answers nothing without the run token, and no path outside the work folder', async () => {
    const stranger = new GeneratorAgent({ ...client, token: 'guess' });
    assert.equal((await stranger.request('GET', '/health')).status, 401);
    assert.equal((await client.request('GET', `/file?path=${encodeURIComponent('/etc/passwd')}`)).status, 403);
    const r = await client.request('PUT', `/file?path=${encodeURIComponent(`${root}/../x`)}`, 'x');
    assert.equal(r.status, 403);
  });

  it("measures the agent's clock against this one; refuses a clock off by more than the limit", async () => {
    await client.ready({ timeoutS: 5 });
    // the same clock: zero within the half round trip allowed below
    assert.ok(Math.abs(client.clock.offset_ms) <= 25, JSON.stringify(client.clock));
    assert.equal(client.health.cpu_source, 'test');
    const skewed = createAgent({ root, token: 'secret', prefix: there, cpu: null, now: () => Date.now() + 500 });
    await new Promise((resolve) => skewed.listen(0, '127.0.0.1', resolve));
    try {
      const far = new GeneratorAgent({ ...client, port: skewed.address().port });
      // the offset measured within half the request's round trip of the 500 ms (a loaded machine saw 499)
      await assert.rejects(far.ready({ timeoutS: 5 }), (err) => {
        const m = /worker-1's clock is (-?\d+) ms from this machine's.*NTP/.exec(err.message);
        assert.ok(m && Math.abs(Number(m[1]) - 500) <= 25, err.message);
        return true;
      });
    } finally {
      await new Promise((resolve) => skewed.close(resolve));
    }
  });

  it('sends the pool and what chainperf writes into a session folder; brings back what the generator writes there', async () => {
    const pool = path.join(tmpDir(), 'params.json');
    fs.writeFileSync(pool, '{"blocks":[1]}');
    const session = path.join(root, 'repeat.session');
    fs.mkdirSync(session);
    fs.writeFileSync(path.join(session, 'window-1.json'), '{"start_at":1}');
    const poolThere = path.join(root, 'generator-pool', 'params.json');
    const sends = { files: [[pool, poolThere]], dirs: [session] };
    await client.sync(sends);
    assert.equal(fs.readFileSync(farSide(poolThere), 'utf8'), '{"blocks":[1]}');
    assert.equal(fs.readFileSync(farSide(path.join(session, 'window-1.json')), 'utf8'), '{"start_at":1}');
    // the generator writes its registration, its samples (whole, then renamed) and a growing partial record
    fs.writeFileSync(farSide(path.join(session, 'worker-1')), '');
    fs.mkdirSync(farSide(path.join(root, 'samples-measure.partial')), { recursive: true });
    fs.mkdirSync(farSide(path.join(root, 'samples-measure')), { recursive: true });
    fs.writeFileSync(farSide(path.join(root, 'samples-measure', '.worker-1.json.part')), 'half');
    fs.writeFileSync(farSide(path.join(root, 'samples-measure.partial', 'partial-1.jsonl')), 'a\n');
    await client.sync(sends);
    assert.ok(fs.existsSync(path.join(session, 'worker-1')));
    assert.ok(!fs.existsSync(path.join(root, 'samples-measure', '.worker-1.json.part')), 'a file being written stays');
    fs.appendFileSync(farSide(path.join(root, 'samples-measure.partial', 'partial-1.jsonl')), 'b\n');
    fs.writeFileSync(farSide(path.join(root, 'samples-measure', 'worker-1.json')), '{"ok":1}');
    await client.sync(sends);
    assert.equal(fs.readFileSync(path.join(root, 'samples-measure.partial', 'partial-1.jsonl'), 'utf8'), 'a\nb\n');
    assert.equal(fs.readFileSync(path.join(root, 'samples-measure', 'worker-1.json'), 'utf8'), '{"ok":1}');
    // the registration came from there: it is not sent back; the pool, sent, is not brought back
    assert.ok(!fs.existsSync(path.join(root, 'generator-pool')));
    // a window measured again: chainperf removes its samples here, and the agent removes them there
    fs.rmSync(path.join(root, 'samples-measure'), { recursive: true });
    await client.sync(sends);
    assert.ok(!fs.existsSync(farSide(path.join(root, 'samples-measure', 'worker-1.json'))));
    assert.ok(!fs.existsSync(path.join(root, 'samples-measure', 'worker-1.json')), 'not brought back');
  });

  it('a file sent again whole when forced (a spec rewritten at the same size), not otherwise', async () => {
    const spec = path.join(root, 'measure.generator.json');
    fs.writeFileSync(spec, '{"start_at":1}');
    await client.push(spec);
    fs.writeFileSync(spec, '{"start_at":2}');
    await client.push(spec);
    assert.equal(fs.readFileSync(farSide(spec), 'utf8'), '{"start_at":1}', 'same size: taken as sent');
    await client.push(spec, spec, { force: true });
    assert.equal(fs.readFileSync(farSide(spec), 'utf8'), '{"start_at":2}');
  });

  it("a generator's CPU at the window's edges, read as they pass and interpolated back to them; the total of several", async () => {
    const group = client.group();
    const a = group.cpu();
    const total = agentsGroup([client, client]).cpu();
    await new Promise((r) => setTimeout(r, 100));
    const b = group.cpu();
    const [ra, rb, rt] = await settleReadings([a, b, total]);
    // the value at the instant, not at the agent's reading a moment later
    assert.ok(Math.abs(ra.total_s - a.at_ms / 1000) < 0.002, `${ra.total_s} at ${a.at_ms}`);
    assert.ok(
      Math.abs(rb.total_s - ra.total_s - (b.at_ms - a.at_ms) / 1000) < 0.003,
      `${ra.total_s} then ${rb.total_s}`,
    );
    assert.ok(Math.abs(rt.total_s - 2 * (total.at_ms / 1000)) < 0.004, `${rt.total_s} at ${total.at_ms}`);
    // an instant older than the readings kept, or an agent that does not answer: no figure rather than a wrong one
    const old = group.cpu();
    old.at_ms -= 3 * 3600e3;
    const gone = new GeneratorAgent({ ...client, port: 1 }).group().cpu();
    assert.deepEqual(await settleReadings([old, gone, null, { total_s: 1 }]), [null, null, null, { total_s: 1 }]);
  });

  it('interpolates a counter between its samples; null outside them', () => {
    const s = new CpuSamples(null);
    s.t = [1000, 1010, 1020];
    s.v = [1, 2, 4];
    assert.equal(s.at(1005), 1.5);
    assert.equal(s.at(1015), 3);
    assert.equal(s.at(1020), 4);
    assert.equal(s.at(999), null);
    assert.equal(s.at(1021), null);
  });

  it("the spec a generator elsewhere reads: this machine's loopback address becomes its swarm address", () => {
    assert.equal(remoteSpec({ rpc_url: 'http://127.0.0.1:8545' }, '10.0.0.5').rpc_url, 'http://10.0.0.5:8545');
    assert.equal(remoteSpec({ rpc_url: 'ws://localhost:8546/' }, '10.0.0.5').rpc_url, 'ws://10.0.0.5:8546/');
    assert.equal(remoteSpec({ rpc_url: 'http://10.1.1.1:80' }, '10.0.0.5').rpc_url, 'http://10.1.1.1:80');
  });
});

describe("generators on swarm nodes: the run's warnings", () => {
  const { generatorWarnings } = require('../../src/session/run-warnings');
  const samples = { skipped: 0 };
  const run = (node, gens, nodePlacement = null) => ({
    generator: { cpus: null, cpu_utilization: 0.2, cores: 4 },
    stack: {
      swarm: {
        node,
        ...(nodePlacement ? { node_placement: { node: nodePlacement } } : {}),
        generator_placement: { generators: gens.map((n, index) => ({ index, node: n })) },
      },
    },
  });

  it("names the generators on the node's machine, and only them", () => {
    const s = { RUNTIME: 'swarm', CORES: 1 };
    assert.deepEqual(generatorWarnings(run('vm', ['w1', 'w2']), s, samples), []);
    assert.deepEqual(generatorWarnings(run('vm', ['w1', 'vm']), s, samples), [
      "load generator 1 ran on the node's machine (vm), on any of its cores: its CPU competes with the node's",
    ]);
    // SWARM_NODE: the node on w1, so a generator there shares its machine, not one on chainperf's
    assert.match(generatorWarnings(run('vm', ['w1', 'vm'], 'w1'), s, samples).join(), /load generator 0 ran on .*w1/);
  });
});

describe("the generator's image (SWARM_GENERATOR_NODES)", () => {
  const { imageSpecs } = require('../../src/runtime/images');
  const { baseRef, generatorSourceHash } = require('../../src/runtime/generator-image');

  it("chainperf's sources on a base of the packages, each tagged by a hash of what goes in", () => {
    const specs = imageSpecs({ CLIENT: 'geth', CLIENT_VERSION: '1.16.7', GRAFANA: 'no', SWARM_GENERATOR_NODES: 'w1' });
    assert.match(baseRef(), /^chainperf\/generator-base:[0-9a-f]{12}$/);
    assert.deepEqual(specs.generator.buildArgs, { BASE: baseRef() });
    assert.equal(specs.generator.local, `chainperf/generator:${generatorSourceHash()}`);
    assert.equal(specs.generator.upstream, null, 'no registry has it');
    assert.equal(imageSpecs({ CLIENT: 'geth', CLIENT_VERSION: '1.16.7', GRAFANA: 'no' }).generator, undefined);
  });
});
