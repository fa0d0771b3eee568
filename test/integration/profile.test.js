'use strict';
// NODE_PROFILE=cpu and per-core load on real nodes: geth profiled by its own
// profiler (pprof) over each window of a REPEAT run on two cores; chopsticks (a
// Node.js process on this host) profiled from outside by perf; then compare
// with a profile on both sides.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { startRun, readRun } = require('./harness');
const { schemaErrors, ROOT } = require('../helpers');

/** A flame graph inferno drew: an SVG document with one <g> per frame. */
function assertFlamegraph(file, mustShow) {
  const svg = fs.readFileSync(file, 'utf8');
  assert.match(svg.slice(0, 300), /<svg/);
  assert.match(svg.trimEnd(), /<\/svg>$/);
  assert.ok((svg.match(/<g>/g) || []).length > 10, `${file} draws a few frames`);
  if (mustShow) assert.match(svg, mustShow);
}

/** The per-core figures add up to the node cgroup's own total, and agree with /proc/PID/stat. */
function assertPerCore(node, cpus) {
  const pc = node.per_core;
  assert.ok(pc, 'node.per_core');
  const sum = pc.cores.reduce((s, c) => s + c.cpu_s, 0);
  assert.ok(sum > 0);
  assert.ok(
    Math.abs(sum - pc.usage_s) <= 0.01 * pc.usage_s,
    `cores add up to ${sum} s, cgroup cpuacct.usage ${pc.usage_s} s`,
  );
  // /proc/PID/stat (the node process, 10 ms ticks) read at the same edges.
  const check = node.cpu_check.total_s;
  assert.ok(
    Math.abs(sum - check) <= Math.max(0.05 * check, 0.05),
    `cores add up to ${sum} s, /proc/PID/stat ${check} s`,
  );
  assert.deepEqual(
    pc.cores.filter((c) => c.node_core).map((c) => c.cpu),
    cpus,
  );
  assert.ok(pc.imbalance >= 1 && pc.imbalance <= cpus.length, `imbalance ${pc.imbalance}`);
}

describe('NODE_PROFILE=cpu and per-core load', () => {
  const dirs = {};

  describe('geth on the host runtime, its own profiler, REPEAT=2 on two cores', () => {
    let res;
    let run;
    before(async () => {
      res = await startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
        NODE_PROFILE: 'cpu',
        CORES: '2',
        REPEAT: '2',
        DURATION_S: '6',
        WARMUP_S: '0',
        IDLE_S: '0',
        HISTORY_TRANSFERS: '20',
        HISTORY_CONTRACT_CALLS: '10',
        ARCHIVE: 'none',
      }).done;
      if (res.code !== 0) process.stderr.write(res.stderr);
      run = readRun(res.reportDir);
      dirs.geth = res.reportDir;
    });

    it('exits 0 with run.json valid against the schema', () => {
      assert.equal(res.code, 0);
      assert.deepEqual(schemaErrors(run), []);
    });

    it("keeps a pprof profile and a flame graph of each window, whose top functions include geth's RPC handling", () => {
      const p = run.profile;
      assert.equal(p.profiler, 'pprof');
      assert.deepEqual(
        p.windows.map((w) => w.name),
        ['rep1', 'rep2'],
      );
      for (const w of p.windows) {
        assert.equal(w.error, undefined, w.error);
        const native = fs.readFileSync(path.join(res.reportDir, w.native));
        assert.deepEqual([...native.subarray(0, 2)], [0x1f, 0x8b], 'gzipped protobuf, as geth serves it');
        assert.ok(w.samples > 0, `${w.name}: ${w.samples} samples`);
        assert.ok(Math.abs(w.seconds - 6) < 0.5, `${w.name} profiled ${w.seconds} s of a 6 s window`);
        assertFlamegraph(path.join(res.reportDir, w.flamegraph), /go-ethereum\/rpc/);
      }
      assert.equal(p.folded, 'profile/all.folded');
      assertFlamegraph(path.join(res.reportDir, p.flamegraph), /go-ethereum\/rpc/);
      assert.ok(
        p.top.by_total.slice(0, 15).some((r) => /go-ethereum\/rpc\.\(\*handler\)/.test(r.function)),
        JSON.stringify(p.top.by_total.map((r) => r.function)),
      );
      assert.equal(
        p.top.samples,
        p.windows.reduce((s, w) => s + w.samples, 0),
      );
      assert.ok(p.top.samples > 20, `${p.top.samples} samples in both windows`);
    });

    it('says profiling was on, in summary.md and in the warnings', () => {
      const md = fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8');
      assert.match(md, /Profiling was on \(NODE_PROFILE=cpu, pprof\)/);
      assert.match(md, /## Node CPU profile/);
      assert.match(md, /!\[Flame graph of the node's CPU\]\(profile\/all\.svg\)/);
      assert.ok(run.warnings.some((w) => /^NODE_PROFILE=cpu: the node was profiled/.test(w)));
    });

    it("splits each window's CPU over the node's two cores, adding up to its total, with a chart", () => {
      for (const r of run.repetitions) assertPerCore(r.node, [0, 1]);
      assert.ok(fs.existsSync(path.join(res.reportDir, 'charts', 'per-core.svg')));
      assert.match(
        fs.readFileSync(path.join(res.reportDir, 'summary.md'), 'utf8'),
        /Per-core load .*cpu0 .*cpu1 .*Busiest core against the mean/,
      );
    });
  });

  describe('chopsticks (a Node.js process) on the host runtime, profiled by perf', () => {
    let res;
    let run;
    before(async () => {
      res = await startRun(path.join(ROOT, 'scenarios', 'polkadot-dev.env'), {
        NODE_PROFILE: 'cpu',
        CLIENT: 'chopsticks',
        DURATION_S: '6',
        WARMUP_S: '0',
        IDLE_S: '0',
        HISTORY_TRANSFERS: '4',
        HISTORY_ACCOUNTS: '4',
        CONCURRENCY: '8',
        ARCHIVE: 'none',
      }).done;
      if (res.code !== 0) process.stderr.write(res.stderr);
      run = readRun(res.reportDir);
      dirs.chopsticks = res.reportDir;
    });

    it("keeps perf's data, folded stacks and a flame graph of the window, and the top functions", () => {
      assert.equal(res.code, 0);
      assert.deepEqual(schemaErrors(run), []);
      const p = run.profile;
      assert.equal(p.profiler, 'perf');
      assert.match(p.describe, /^perf record -e cpu-clock -F 99 -g -p \d+$/);
      const [w] = p.windows;
      assert.equal(w.name, 'measure');
      assert.equal(w.error, undefined, w.error);
      assert.ok(fs.statSync(path.join(res.reportDir, w.native)).size > 0);
      // perf's own reading of its file: samples of the node's process.
      const header = execFileSync('perf', ['report', '--header-only', '-i', path.join(res.reportDir, w.native)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      assert.match(header, /cpu-clock/);
      assert.ok(w.samples > 10, `${w.samples} samples`);
      assertFlamegraph(path.join(res.reportDir, w.flamegraph));
      assert.ok(p.top.by_self.length > 0 && p.top.by_total.length > 0);
      // The node ran with V8's perf map (chopsticks' profileEnv): perf named its JavaScript or WebAssembly frames.
      assert.match(fs.readFileSync(path.join(res.reportDir, w.folded), 'utf8'), /;JS:/);
    });

    it("splits the window's CPU over the node's core", () => {
      assertPerCore(run.node, [0]);
    });
  });

  describe("geth in a compose node container, profiled by perf on the container's main process", () => {
    let res;
    let run;
    before(async () => {
      res = await startRun(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
        RUNTIME: 'compose',
        GRAFANA: 'no',
        NODE_PROFILE: 'cpu',
        DURATION_S: '6',
        WARMUP_S: '0',
        IDLE_S: '0',
        HISTORY_TRANSFERS: '8',
        HISTORY_CONTRACT_CALLS: '4',
        ARCHIVE: 'none',
      }).done;
      if (res.code !== 0) process.stderr.write(res.stderr);
      run = readRun(res.reportDir);
    });

    it("profiles geth inside the container, Go symbols and all, and splits its CPU by core from the container's cgroup", () => {
      assert.equal(res.code, 0);
      assert.deepEqual(schemaErrors(run), []);
      const p = run.profile;
      assert.equal(p.profiler, 'perf');
      assert.equal(p.windows[0].error, undefined, p.windows[0].error);
      assert.ok(p.top.samples > 0);
      assertFlamegraph(path.join(res.reportDir, p.flamegraph), /go-ethereum/);
      const pc = run.node.per_core;
      assert.match(pc.source, /container/);
      const sum = pc.cores.reduce((x, c) => x + c.cpu_s, 0);
      assert.ok(Math.abs(sum - pc.usage_s) <= 0.01 * pc.usage_s);
      // The Docker engine's stats of the container, read at the window's edges too, at instants of their own (the
      // engine answers in up to a second on a loaded machine): the two agree as rates over their own spans (CI saw
      // totals of 2.186 s and 2.052 s).
      const c = run.node.cpu_check;
      const rate = sum / pc.seconds;
      assert.ok(
        Math.abs(rate - c.cpu_s_per_s) <= Math.max(0.05 * c.cpu_s_per_s, 0.01),
        `cores add up to ${rate.toFixed(4)} CPU s/s over ${pc.seconds} s, Docker stats ${c.cpu_s_per_s} over ${c.seconds} s`,
      );
    });
  });

  describe('compare with a profile on both sides', () => {
    it('writes the functions whose share changed most and a differential flame graph', () => {
      assert.ok(dirs.geth && dirs.chopsticks, 'both runs above');
      const out = execFileSync(path.join(ROOT, 'run.sh'), ['compare', dirs.chopsticks, dirs.geth], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, REPORTS_DIR: path.dirname(path.dirname(dirs.geth)) },
      });
      assert.match(out, /## Node CPU profiles \(NODE_PROFILE=cpu on both sides\)/);
      assert.match(out, /A was profiled with perf, B with pprof/);
      // Rows: function, total A, total B, change, self A, self B, change; the largest change of total share first.
      const rows = out
        .split('\n')
        .filter((l) => /^\| `/.test(l))
        .map((l) =>
          l
            .split(' | ')
            .slice(1, 4)
            .map((x) => Number.parseFloat(x)),
        );
      assert.ok(rows.length >= 10, `${rows.length} rows`);
      for (const [a, b, change] of rows) assert.ok(Math.abs(b - a - change) <= 0.16, `${b} - ${a} is not ${change}`);
      const changes = rows.map((r) => Math.abs(r[2]));
      assert.deepEqual(
        changes,
        [...changes].sort((x, y) => y - x),
      );
      const compareDir = path.join(path.dirname(path.dirname(dirs.geth)), 'compare');
      const [folder] = fs.readdirSync(compareDir);
      assertFlamegraph(path.join(compareDir, folder, 'profile-diff.svg'));
    });
  });
});
