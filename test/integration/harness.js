'use strict';
// Runs ./run.sh as a user would and watches the processes it starts from the
// outside: each run gets its own TMPDIR, which every process it starts (geth's
// datadir, Prometheus' storage, artillery's script) has in its command line.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { ROOT, tmpDir } = require('../helpers');
const { readProcStat } = require('../../src/measure/cpu');

/** PIDs whose command line contains marker. */
function processesWith(marker) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(marker)) out.push({ pid: Number(d), cmd });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * The load of a test about what happens around a window (a signal, a crash, a teardown), not about its figures:
 * 100 requests/s in an open loop instead of a scenario's users back to back. A closed loop keeps the node and its
 * generator on both cores of a CI machine for the whole window, and every test file running beside it waits for
 * them (docs/testing.md). Through the lean engine, whose open loop keeps one generator for the run (through ethers it
 * would be a pass per window, each with artillery's start-up).
 */
const LIGHT_LOAD = { GENERATOR: 'lean', RATE: '100' };

/**
 * Starts ./run.sh scenario with env overrides; scenario may be an argument list (['ab', 'a.env', 'b.env']).
 * @returns {{child, done: Promise<{code:number, stdout:string, stderr:string, reportDir:string}>, tmp:string}}
 */
function startRun(scenario, env = {}) {
  const tmp = tmpDir('chainperf-it-');
  // RUNTIME defaults to auto (compose where Docker answers): these tests choose it, host unless they or the file say.
  const args = Array.isArray(scenario) ? scenario : [scenario];
  let file = '';
  try {
    file = fs.readFileSync(args[args.length - 1], 'utf8');
  } catch {
    // a missing file is what some tests check
  }
  const chosen = (key) => env[key] !== undefined || new RegExp(`^\\s*${key}=`, 'm').test(file);
  if (!chosen('RUNTIME')) env = { ...env, RUNTIME: 'host' };
  // A dev chain's history over 2 blocks rather than 8 (HISTORY_BLOCKS): about 6 s less a run, for the tests that are
  // about something else than how many blocks the history spans
  if (!chosen('HISTORY_BLOCKS')) env = { ...env, HISTORY_BLOCKS: '2' };
  const reports = env.REPORTS_DIR || path.join(tmp, 'reports');
  const child = spawn(path.join(ROOT, 'run.sh'), args, {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: tmp, REPORTS_DIR: reports, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const stderrListeners = [];
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
    for (const fn of stderrListeners) fn(stderr);
  });
  const done = new Promise((resolve) => {
    child.on('close', (code) => {
      const lines = stdout.trim().split('\n');
      resolve({ code, stdout, stderr, reportDir: lines[lines.length - 1] });
    });
  });
  /** Resolves when the run's log matches re. */
  const waitFor = (re) =>
    new Promise((resolve, reject) => {
      if (re.test(stderr)) return resolve();
      stderrListeners.push((all) => {
        if (re.test(all)) resolve();
      });
      done.then(() => reject(new Error(`run ended before its log matched ${re}:\n${stderr}`)));
    });
  return { child, done, tmp, reports, waitFor, stderrText: () => stderr };
}

/**
 * Samples a process's CPU from /proc every intervalMs, independently of chainperf.
 * cpuAt(ms) interpolates the cumulative CPU seconds at any instant inside the sampled span;
 * between(startMs, endMs) brackets the CPU used over a window by the samples around its edges.
 */
function watchCpu(findPid, intervalMs = 50) {
  const samples = [];
  let pid = null;
  const timer = setInterval(() => {
    if (pid === null) pid = findPid();
    if (pid === null) return;
    try {
      const c = readProcStat(pid);
      samples.push({ t: Date.now(), cpu: c.user_s + c.system_s });
    } catch {
      // process gone
    }
  }, intervalMs);
  return {
    get pid() {
      return pid;
    },
    stop: () => clearInterval(timer),
    cpuAt(ms) {
      for (let i = 1; i < samples.length; i++) {
        const a = samples[i - 1];
        const b = samples[i];
        if (a.t <= ms && ms <= b.t) return a.cpu + ((b.cpu - a.cpu) * (ms - a.t)) / Math.max(1, b.t - a.t);
      }
      throw new Error(`no independent CPU samples around ${new Date(ms).toISOString()}`);
    },
    /**
     * The CPU used over [startMs, endMs] bracketed by the samples around its
     * edges: inner (between the samples just inside) and outer (just outside).
     * For a node whose CPU comes in bursts, where interpolating is not precise.
     */
    between(startMs, endMs) {
      const before = (ms) => [...samples].reverse().find((x) => x.t <= ms);
      const after = (ms) => samples.find((x) => x.t >= ms);
      const [sb, sa, eb, ea] = [before(startMs), after(startMs), before(endMs), after(endMs)];
      if (!sb || !sa || !eb || !ea) throw new Error("no independent CPU samples around the window's edges");
      return { inner: eb.cpu - sa.cpu, outer: ea.cpu - sb.cpu, gaps_ms: [sa.t - sb.t, ea.t - eb.t] };
    },
  };
}

/** The geth process a run started under its TMPDIR (not the sh that execs it), or undefined. */
function gethOf(tmp) {
  return processesWith(tmp).find((x) => /\bgeth\b.*--dev/.test(x.cmd) && !x.cmd.startsWith('sh '));
}

/**
 * A run to its end, with the command line of the node it started (found by nodeOf(tmp) while it ran),
 * its run.json and its parameter pool; its stderr is shown when it fails.
 */
async function runWatchingNode(scenario, env, nodeOf) {
  const r = startRun(scenario, env);
  let nodeCmd = null;
  const timer = setInterval(() => {
    const p = nodeOf(r.tmp);
    if (p) nodeCmd = p.cmd;
  }, 200);
  const res = await r.done;
  clearInterval(timer);
  if (res.code !== 0) process.stderr.write(res.stderr);
  const pool = JSON.parse(fs.readFileSync(path.join(res.reportDir, 'params.json'), 'utf8'));
  return { res, run: readRun(res.reportDir), pool, nodeCmd };
}

/** watchCpu on the geth process of the run whose TMPDIR is tmp. */
function watchGethCpu(tmp) {
  return watchCpu(() => {
    const p = gethOf(tmp);
    return p ? p.pid : null;
  });
}

function readRun(reportDir) {
  return JSON.parse(fs.readFileSync(path.join(reportDir, 'run.json'), 'utf8'));
}

/** Sums artillery's own aggregate counters whose names start with prefix. */
function artilleryCount(reportDir, prefix) {
  const raw = JSON.parse(fs.readFileSync(path.join(reportDir, 'artillery.json'), 'utf8'));
  return Object.entries(raw.aggregate.counters)
    .filter(([k]) => k.startsWith(prefix))
    .reduce((s, [, v]) => s + v, 0);
}

/** Every file under dir with its size and modification time, sorted: equal listings mean nothing was written there. */
function fileListing(dir) {
  return execFileSync('find', [dir, '-type', 'f', '-printf', '%P %s %T@\n'], { encoding: 'utf8' })
    .split('\n')
    .sort()
    .join('\n');
}

/** What a killed container can have run after the last 50 ms reading of watchContainerCpu, before its death. */
const KILLED_LATE_CPU_S = 0.05;

/**
 * Cumulative CPU (s) of a container (compose or swarm) from its cgroup v1 cpuacct.usage, sampled every 50 ms; parent:
 * its engine's cgroup parent (another engine's, for a swarm worker's container).
 */
function watchContainerCpu(findId, { parent = 'docker' } = {}) {
  const samples = [];
  let id = null;
  const timer = setInterval(async () => {
    if (!id) id = await findId();
    if (!id) return;
    try {
      const ns = Number(fs.readFileSync(`/sys/fs/cgroup/cpuacct/${parent}/${id}/cpuacct.usage`, 'utf8'));
      samples.push({ t: Date.now(), cpu: ns / 1e9 });
    } catch {
      // not there (yet, or any more)
    }
  }, 50);
  return {
    stop: () => clearInterval(timer),
    /**
     * The CPU at ms, between the two readings around it. afterLast: a time after the last reading is given that
     * reading (a killed container's counter that stopped with it; what it ran between that reading and its death,
     * at most one 50 ms interval, is not in it: KILLED_LATE_CPU_S).
     */
    cpuAt(ms, { afterLast = false } = {}) {
      for (let i = 1; i < samples.length; i++) {
        const [a, b] = [samples[i - 1], samples[i]];
        if (a.t <= ms && ms <= b.t) return a.cpu + ((b.cpu - a.cpu) * (ms - a.t)) / Math.max(1, b.t - a.t);
      }
      const last = samples[samples.length - 1];
      if (afterLast && last && ms > last.t) return last.cpu;
      throw new Error(`no cgroup samples around ${new Date(ms).toISOString()}`);
    },
  };
}

/** The memory limit (bytes) and memory+swap limit of a process's cgroup v1 memory group, read from the kernel. */
function memoryLimitsOf(pid) {
  const line = fs
    .readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
  const dir = path.join('/sys/fs/cgroup/memory', line.slice(line.lastIndexOf(':') + 1));
  const read = (f) => Number(fs.readFileSync(path.join(dir, f), 'utf8'));
  return { memory: read('memory.limit_in_bytes'), memsw: read('memory.memsw.limit_in_bytes') };
}

/**
 * A fleet's run (REPLICAS behind HAProxy): the requests HAProxy counted for the replicas add up to the clients' within
 * 5%, and roundrobin gave each replica more than 0.3 of them while all were in rotation. With a fault, the shares are
 * taken over the whole seconds before the kill (series.json, from HAProxy's access log): after it the one left serves
 * alone, faster or slower depending on what the machine is doing, which moves the window's shares but not the spread.
 */
function assertBalancerCounts(run, reportDir) {
  const f = run.node.fleet;
  const clients = run.figures.requests_ok + run.figures.requests_failed;
  assert.ok(Math.abs(f.requests - clients) / clients < 0.05, `HAProxy ${f.requests}, clients ${clients}`);
  let shares = Object.fromEntries(f.replicas.map((r) => [r.name, r.share]));
  if (f.fault) {
    const seconds = JSON.parse(fs.readFileSync(path.join(reportDir, 'series.json'), 'utf8')).replicas;
    const before = seconds.filter((x) => x.t_ms + 1000 <= f.fault.at_ms);
    const served = Object.fromEntries(f.replicas.map((r) => [r.name, before.reduce((t, x) => t + x.ok[r.name], 0)]));
    const total = Object.values(served).reduce((t, x) => t + x, 0);
    assert.ok(total > 0, 'requests before the fault');
    shares = Object.fromEntries(Object.entries(served).map(([n, x]) => [n, x / total]));
  }
  assert.ok(
    Object.values(shares).every((x) => x > 0.3),
    `shares ${JSON.stringify(shares)}; ${JSON.stringify(f.replicas)}; rotation ${JSON.stringify(f.rotation)}`,
  );
}

/**
 * A fleet's run in containers: each replica's CPU agrees within 3% with its container's cgroup over the window, as
 * watchContainerCpu read it (watches by replica name); a replica killed in the window took its cgroup with it, so its
 * last reading stands for the window's end.
 */
function assertReplicaCpu(run, watches) {
  const w = run.window;
  for (const r of run.node.fleet.replicas) {
    const end = watches[r.name].cpuAt(w.end_ms, { afterLast: !r.up_at_end }); // a killed one: its last reading
    const independent = end - watches[r.name].cpuAt(w.start_ms);
    // A killed replica's CPU is chainperf's reading a moment before the kill: what it ran until the engine killed it
    // (up to 50 ms of CPU on a loaded machine) can be in this test's last reading and not in chainperf's.
    const late = r.up_at_end ? 0 : KILLED_LATE_CPU_S;
    assert.ok(
      independent - r.cpu_s < 0.03 * r.cpu_s + late && r.cpu_s - independent < 0.03 * r.cpu_s,
      `${r.name}: chainperf ${r.cpu_s} s, cgroup ${independent} s`,
    );
  }
}

/**
 * Waits until the run's window has been open for afterS and the node's own request counter (rpc_requests on its
 * metrics endpoint) shows the window's load coming in: a test that kills or freezes the node "inside the window" then
 * does so with load flowing. The load must have begun as the window opened (within the run's LATE_START_MS): a
 * generator that started later on a busy machine has its window measured again (a late start), and a fault injected
 * into the window about to be thrown away would land in the wrong one; the wait then goes on to the new window (the
 * last start logged).
 */
async function untilLoaded(r, metricsUrl, { afterS = 3, timeoutMs = 120000 } = {}) {
  const { metricValue } = require('../../src/measure/cpu');
  const { LATE_START_MS } = require('../../src/measure/window');
  const requests = async () => {
    const res = await fetch(metricsUrl).catch(() => null);
    return res && res.ok ? metricValue(await res.text(), 'rpc_requests') : null;
  };
  // the counter polled every 100 ms, {t0, t, v}: read between t0 and t, to see whether the load began as the window
  // opened
  const seen = [];
  const last = (t) => seen.filter((x) => x.t <= t).pop();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const starts = [...r.stderrText().matchAll(/measuring for \d+ s from (\S+Z)/g)];
    const start = starts.length ? Date.parse(starts[starts.length - 1][1]) : Infinity;
    const t0 = Date.now();
    const v = await requests();
    if (v !== null) seen.push({ t0, t: Date.now(), v });
    if (Date.now() >= start + afterS * 1000 && loadBegan(seen, last, start, LATE_START_MS)) {
      const c = await requests();
      await new Promise((res) => setTimeout(res, 500));
      const d = await requests();
      if (c !== null && d !== null && d - c >= 10) return;
    }
    if (Date.now() > deadline) throw new Error(`untilLoaded: no load on the node ${afterS} s into the window`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/**
 * Whether the polled counter shows the load begun within lateMs of the window's start (the run's own late-start
 * bound: a later start has the window measured again). It takes a poll read before the window and one read inside
 * that span; without either (polling began late, or a loaded machine answered the polls late) the polls cannot tell,
 * and the run's own check decides: a window it finds late is measured again, and the wait goes on to it.
 */
function loadBegan(seen, last, start, lateMs) {
  const a = last(start - 100);
  const inside = seen.some((x) => x.t0 >= start - 100 && x.t <= start + lateMs);
  if (!a || !inside) return true;
  return last(start + lateMs).v - a.v >= 5;
}

/**
 * The node's own request counter through Prometheus agrees with the generator's count: each edge's scrape is up to
 * a scrape interval (1 s) away from the edge, and later under load, so two and a half seconds of requests is the
 * room (a short window's 25% was not, on a loaded machine).
 */
function assertScrapedClose(run) {
  const served = run.node.rpc_requests;
  const ok = run.figures.requests_ok;
  assert.ok(typeof served === 'number' && served > 0, `node counted ${served}`);
  assert.ok(Math.abs(served - ok) <= 2.5 * run.figures.rps, `node counted ${served}, the generator ${ok}`);
  // the scrapes it rose between: the last at or before each edge (1 s apart, on a loaded machine a few)
  const [a, b] = run.node.rpc_requests_span_ms;
  const { start_ms: start, end_ms: end } = run.window;
  assert.ok(a <= start && start - a < 5000 && b <= end && end - b < 5000, JSON.stringify({ a, b, start, end }));
}

module.exports = {
  assertScrapedClose,
  untilLoaded,
  assertBalancerCounts,
  assertReplicaCpu,
  KILLED_LATE_CPU_S,
  watchContainerCpu,
  fileListing,
  startRun,
  LIGHT_LOAD,
  runWatchingNode,
  watchCpu,
  watchGethCpu,
  gethOf,
  memoryLimitsOf,
  processesWith,
  readRun,
  artilleryCount,
};
