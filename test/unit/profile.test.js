'use strict';
// Folding, summarizing and comparing CPU profiles; per-core load from per-CPU counters.
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { Profile, StringTable, ValueType, Sample, Location, Line, Function: Fn } = require('pprof-format');
const { pprofToFolded, parseFolded, topFunctions, diffFunctions, mergeFolded } = require('../../src/measure/folded');
const { parsePerCpu, perCoreBetween, perSecond, readPerCpu } = require('../../src/measure/percore');
const { profileSection, perCoreLine } = require('../../src/report/profile');

/**
 * A Go-like CPU profile: stacks given leaf first as function names; a location with two lines holds an inlined call.
 */
function makePprof(samples) {
  const st = new StringTable();
  const fns = new Map();
  const fnId = (name) => {
    if (!fns.has(name)) fns.set(name, new Fn({ id: fns.size + 1, name: st.dedup(name) }));
    return fns.get(name).id;
  };
  const locs = [];
  const locId = (names) => {
    const loc = new Location({ id: locs.length + 1, line: names.map((n) => new Line({ functionId: fnId(n) })) });
    locs.push(loc);
    return loc.id;
  };
  const sample = samples.map(
    ({ stack, count }) =>
      new Sample({ locationId: stack.map((f) => locId([].concat(f))), value: [count, count * 1e7] }),
  );
  const p = new Profile({
    sampleType: [
      new ValueType({ type: st.dedup('samples'), unit: st.dedup('count') }),
      new ValueType({ type: st.dedup('cpu'), unit: st.dedup('nanoseconds') }),
    ],
    sample,
    location: locs,
    function: [...fns.values()],
    stringTable: st,
    durationNanos: 10e9,
    period: 1e7,
  });
  return zlib.gzipSync(Buffer.from(p.encode()));
}

describe('CPU profiles: folding and summarizing', () => {
  it('folds a gzipped pprof profile root first, inlined callees after their callers, counted in samples', () => {
    const buf = makePprof([
      { stack: ['rpc.handleCall', 'rpc.serve', 'runtime.goexit'], count: 6 },
      // json.encode inlined into rpc.reply
      { stack: [['json.encode', 'rpc.reply'], 'rpc.serve', 'runtime.goexit'], count: 3 },
      { stack: ['runtime.gcBgMarkWorker', 'runtime.goexit'], count: 1 },
    ]);
    const f = pprofToFolded(buf);
    assert.equal(f.samples, 10);
    assert.equal(f.duration_s, 10);
    assert.deepEqual(f.text.trim().split('\n').sort(), [
      'runtime.goexit;rpc.serve;rpc.handleCall 6',
      'runtime.goexit;rpc.serve;rpc.reply;json.encode 3',
      'runtime.goexit;runtime.gcBgMarkWorker 1',
    ]);
  });

  it('ranks functions by self share (leaf) and total share (anywhere on the stack, once per stack)', () => {
    const stacks = parseFolded('main;a;b 6\nmain;a;a;c 3\nmain 1\nbad line\nx;y 0\n');
    assert.equal(stacks.length, 3, 'malformed and empty lines are skipped');
    const top = topFunctions(stacks, 3);
    assert.equal(top.samples, 10);
    assert.deepEqual(
      top.by_self.map((r) => [r.function, r.self, r.self_share]),
      [
        ['b', 6, 0.6],
        ['c', 3, 0.3],
        ['main', 1, 0.1],
      ],
    );
    assert.deepEqual(
      top.by_total.map((r) => [r.function, r.total, r.total_share]),
      [
        ['main', 10, 1],
        ['a', 9, 0.9],
        ['b', 6, 0.6],
      ],
    );
  });

  it('names the functions whose share changed most between two profiles', () => {
    const a = parseFolded('main;rpc;json 50\nmain;rpc;db 50\n');
    const b = parseFolded('main;rpc;json 20\nmain;rpc;db 60\nmain;gzip 20\n');
    const d = diffFunctions(a, b);
    assert.deepEqual(
      d.rows.map((r) => [r.function, r.delta_total]),
      [
        ['json', -0.3],
        ['gzip', 0.2],
        ['rpc', -0.2],
        ['db', 0.1],
      ],
    );
    assert.equal(
      d.rows.find((r) => r.function === 'main'),
      undefined,
      'unchanged shares are not listed',
    );
    assert.equal(d.rows[1].a_self_share, 0);
    assert.equal(d.rows[1].b_self_share, 0.2);
  });

  it('merges folded profiles by adding the counts of equal stacks', () => {
    const merged = parseFolded(mergeFolded(['a;b 2\na;c 1\n', 'a;b 3\n']));
    assert.deepEqual(merged.map((x) => [x.frames.join(';'), x.count]).sort(), [
      ['a;b', 5],
      ['a;c', 1],
    ]);
  });
});

describe('per-core load', () => {
  it('parses cpuacct.usage_percpu', () => {
    assert.deepEqual(parsePerCpu('12 34 \n'), [12, 34]);
  });

  it('reads the total around the per-CPU counter, again while a busy node used CPU between those reads', () => {
    // a node using CPU between the reads: 30 ms of it before the first try's per-CPU read, then 1 us between reads
    let used = 1e9;
    const spent = [0, 30e6];
    const reads = [];
    const read = (file) => {
      reads.push(file.split('/').pop());
      used += spent.shift() || 1e3;
      return file.endsWith('usage_percpu') ? `${used / 2} ${used / 2}` : String(used);
    };
    const r = readPerCpu('/cg/cpuacct.usage_percpu', read);
    const once = ['cpuacct.usage', 'cpuacct.usage_percpu', 'cpuacct.usage'];
    assert.deepEqual(reads, [...once, ...once], "a second try: the first one's reads of the total were 30 ms apart");
    const sum = r.ns[0] + r.ns[1];
    assert.ok(Math.abs(r.usage_ns - sum) <= 1e3, `total ${r.usage_ns} ns, cores ${sum} ns`);
  });

  it("splits the node's CPU over its cores, adds up to the total and gives the busiest core against the mean", () => {
    const a = { ns: [1e9, 2e9, 5e9], usage_ns: 8e9, at_ms: 0 };
    const b = { ns: [4e9, 3e9, 5e9], usage_ns: 12e9, at_ms: 4000 };
    const pc = perCoreBetween(a, b, { cpus: '0-1', source: 'test' });
    assert.equal(pc.total_s, 4);
    assert.equal(pc.usage_s, 4);
    assert.deepEqual(
      pc.cores.map((c) => [c.cpu, c.cpu_s, c.utilization, c.node_core]),
      [
        [0, 3, 0.75, true],
        [1, 1, 0.25, true],
        [2, 0, 0, false],
      ],
    );
    assert.equal(pc.busiest_cpu, 0);
    assert.equal(pc.imbalance, 1.5, "busiest 3 s against a mean of 2 s over the node's two cores");
    assert.match(perCoreLine(pc), /cpu0 3\.000 s \(75\.0% busy\), cpu1 1\.000 s \(25\.0% busy\).*1\.50x/);
  });

  it('has no imbalance when the node did not run, and per-second points from consecutive reads', () => {
    const idle = perCoreBetween({ ns: [5, 5], at_ms: 0 }, { ns: [5, 5], at_ms: 1000 }, { source: 't' });
    assert.equal(idle.imbalance, null);
    const s = perSecond([
      { ns: [0, 0], at_ms: 0 },
      { ns: [5e8, 1e8], at_ms: 1000 },
      { ns: [6e8, 1e9], at_ms: 2000 },
    ]);
    assert.deepEqual(s, [
      { t_ms: 0, span_s: 1, cpu_s: [0.5, 0.1] },
      { t_ms: 1000, span_s: 1, cpu_s: [0.1, 0.9] },
    ]);
  });
});

describe('report: NODE_PROFILE section', () => {
  it('says profiling was on and lists the top functions and the flame graph', () => {
    const top = topFunctions(parseFolded('main;rpc.handleCall 3\nmain;gc 1\n'), 5);
    const lines = profileSection({
      profile: {
        mode: 'cpu',
        profiler: 'pprof',
        describe: 'geth pprof',
        renderer: 'inferno 0.12.8',
        folded: 'profile/measure.folded',
        flamegraph: 'profile/measure.svg',
        top,
        windows: [
          {
            name: 'measure',
            profiler: 'pprof',
            samples: 4,
            seconds: 10,
            native: 'profile/measure.pb.gz',
            folded: 'profile/measure.folded',
            flamegraph: 'profile/measure.svg',
          },
        ],
      },
    }).join('\n');
    assert.match(lines, /\*\*Profiling was on\*\*/);
    assert.match(lines, /\| `rpc\.handleCall` \| 75\.0% \| 75\.0% \|/);
    assert.match(lines, /!\[Flame graph of the node's CPU\]\(profile\/measure\.svg\)/);
    assert.deepEqual(profileSection({}), []);
  });
});

describe('NODE_PROFILE: scenario validation', () => {
  const { resolveScenario } = require('../../src/scenario/resolve');
  const { writeScenario, tmpDir } = require('../helpers');
  const resolve = (file) => resolveScenario(file, { env: {}, cpuCount: 2, dockerEngine: null });

  it("takes cpu or none, and in attach mode needs the node's PID for perf", () => {
    const dir = tmpDir();
    assert.deepEqual(resolve(writeScenario(dir, 'p', 'RUNTIME=host\nNODE_PROFILE=cpu\n')).errors, []);
    assert.match(
      resolve(writeScenario(dir, 'q', 'RUNTIME=host\nNODE_PROFILE=flame\n')).errors.join('\n'),
      /NODE_PROFILE/,
    );
    const attach =
      'RUNTIME=attach\nRPC_URL=http://127.0.0.1:8545\nMETRICS_URL=http://127.0.0.1:6060/debug/metrics/prometheus\nNODE_PROFILE=cpu\n';
    assert.match(
      resolve(writeScenario(dir, 'a', attach)).errors.join('\n'),
      /NODE_PROFILE=cpu with RUNTIME=attach needs NODE_PID/,
    );
    assert.deepEqual(resolve(writeScenario(dir, 'b', `${attach}NODE_PID=1\n`)).errors, []);
  });
});

describe('compare: two runs with profiles', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const { compare, renderCompare } = require('../../src/compare');
  const { tmpDir } = require('../helpers');

  function runDir(root, name, folded, profiler = 'pprof') {
    const dir = path.join(root, name);
    fs.mkdirSync(path.join(dir, 'profile'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'profile', 'measure.folded'), folded);
    const figures = { cpu_ms_per_request: 0.2, cpu_ms_per_request_net: 0.19, rps: 100, latency_ms: { p99: 3 } };
    fs.writeFileSync(
      path.join(dir, 'run.json'),
      JSON.stringify({
        scenario_name: name,
        run_id: name,
        figures,
        provenance: {},
        profile: { mode: 'cpu', profiler, folded: 'profile/measure.folded' },
      }),
    );
    return dir;
  }

  it('lists the functions whose share changed most, largest change first', () => {
    const root = tmpDir();
    const a = runDir(root, 'a', 'main;rpc;json 50\nmain;rpc;db 50\n');
    const b = runDir(root, 'b', 'main;rpc;json 20\nmain;rpc;db 60\nmain;gzip 20\n', 'perf');
    const c = compare(a, b);
    assert.deepEqual(
      c.profile.rows.slice(0, 2).map((r) => [r.function, r.delta_total]),
      [
        ['json', -0.3],
        ['gzip', 0.2],
      ],
    );
    const md = renderCompare(c);
    assert.match(md, /## Node CPU profiles/);
    assert.match(md, /A was profiled with pprof, B with perf/);
    assert.match(md, /\| `json` \| 50\.0% \| 20\.0% \| -30\.0 pt \| 50\.0% \| 20\.0% \| -30\.0 pt \|/);
  });

  it('adds nothing when one side has no profile', () => {
    const root = tmpDir();
    const a = runDir(root, 'a', 'main 1\n');
    const b = path.join(root, 'b');
    fs.mkdirSync(b);
    fs.writeFileSync(
      path.join(b, 'run.json'),
      JSON.stringify({ scenario_name: 'b', run_id: 'b', figures: null, provenance: {} }),
    );
    const c = compare(a, b);
    assert.equal(c.profile, undefined);
    assert.doesNotMatch(renderCompare(c), /Node CPU profiles/);
  });
});

describe('report: per-core line', () => {
  it("names the gap between the cgroup's exact total and its tick-kept user and system counters", () => {
    const pc = perCoreBetween(
      { ns: [0], usage_ns: 0, at_ms: 0 },
      { ns: [1e9], usage_ns: 1e9, at_ms: 2000 },
      { cpus: '0', source: 't' },
    );
    assert.match(
      perCoreLine(pc, { cpu_source: { kind: 'cgroup' }, cpu_total_s: 0.9 }),
      /cpuacct\.usage\) is 1\.000 s; .* add up to 0\.900 s \(-10\.0%\)/,
    );
    assert.doesNotMatch(perCoreLine(pc, { cpu_source: { kind: 'cgroup' }, cpu_total_s: 1.005 }), /scheduler tick/);
    assert.doesNotMatch(perCoreLine(pc, { cpu_source: { kind: 'cadvisor' }, cpu_total_s: 0.5 }), /scheduler tick/);
  });
});

describe("a window's profile", () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const { tmpDir } = require('../helpers');
  const { finishProfile } = require('../../src/measure/profile');

  it('a window measured again (its load began late) has one profile, its last', async () => {
    const reportDir = tmpDir();
    fs.mkdirSync(path.join(reportDir, 'profile'));
    const hooks = { profiler: { kind: 'pprof', tools: {} }, windows: [] };
    const prof = (startMs) => ({
      stop: async () => ({ folded: 'main;serve 3\n', start_ms: startMs, seconds: 6, native: 'x.pb.gz' }),
    });
    await finishProfile(hooks, prof(1000), { name: 'rep1', reportDir });
    await finishProfile(hooks, prof(2000), { name: 'rep1', reportDir }); // the same window, measured again
    await finishProfile(hooks, prof(3000), { name: 'rep2', reportDir });
    assert.deepEqual(
      hooks.windows.map((w) => [w.name, w.start_ms]),
      [
        ['rep1', 2000],
        ['rep2', 3000],
      ],
    );
  });
});
