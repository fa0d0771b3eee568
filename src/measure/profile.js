'use strict';
// What a measured window can explain besides its figures: a CPU profile of
// the node over exactly the window (NODE_PROFILE=cpu) and the node's CPU on
// each of its cores. measureWorkload calls startWindowHooks at the window's
// start edge and stop() at its end edge; everything else lives here.
//
// Profilers (the native format is kept in the report folder):
//   pprof - geth's own profiler (--pprof): GET /debug/pprof/profile?seconds=N,
//           issued at the start edge, N the window's length; gzipped protobuf.
//   perf  - any other process on this host (a host node, a compose node's
//           main process, NODE_PID in attach): `perf record -e cpu-clock -F 99
//           -g -p PID` from the start edge until the end edge (SIGINT).
// Both end as folded stacks, rendered by inferno-flamegraph into an SVG and
// summarized as the top functions by share of samples.

const fs = require('node:fs');
const path = require('node:path');
const { INFERNO_VERSION } = require('../install/inferno');
const { shareMatching, parseFolded, topFunctions, mergeFolded } = require('./folded');
const { perCpuFile, perCoreBetween, perSecond } = require('./percore');
const { PERF_HZ, nodeHostPid, renderFlamegraph, startPerf, startPprof, tryRead } = require('./profilers');

/**
 * Sets stack.windowHooks once the stack is up: where the per-CPU counter is,
 * and which profiler serves. Kills a profiler still running at teardown.
 */
async function prepareWindowHooks(s, stack, { tools, log }) {
  // NETWORK_NODES: the network's own window hook (src/network/watch.js), passed in by the runtime on the stack
  const hooks = {
    perCore: null,
    profiler: null,
    network: stack.network ? stack.network.watch : null,
    fleet: stack.fleet || null, // REPLICAS: per-replica figures (src/runtime/host-fleet.js)
    windows: [],
    active: new Set(),
  };
  const pid = await nodeHostPid(s, stack);
  // The host runtime's node group, or the compose node container's cgroup (found from its main process).
  let file = null;
  if (stack.nodeCgroup && stack.nodeCgroup.cpuacct) file = path.join(stack.nodeCgroup.cpuacct, 'cpuacct.usage_percpu');
  else if (stack.runtime === 'compose' && pid) file = perCpuFile(pid);
  if (file)
    hooks.perCore = {
      file,
      cpus: stack.node.cpus || null,
      source: `${stack.runtime === 'compose' ? "the node container's cgroup" : "the node's cgroup"} (cgroup v1 cpuacct.usage_percpu, ns)`,
    };
  if (s.NODE_PROFILE === 'cpu') {
    if (stack.node.pprof_url) {
      hooks.profiler = {
        kind: 'pprof',
        url: stack.node.pprof_url,
        tools,
        describe: `geth's own profiler (${stack.node.pprof_url}?seconds=N, Go runtime CPU profile at 100 Hz)`,
      };
    } else {
      if (!pid)
        throw new Error("NODE_PROFILE=cpu: the node's process on this host is unknown, so perf cannot profile it");
      hooks.profiler = { kind: 'perf', pid, tools, describe: `perf record -e cpu-clock -F ${PERF_HZ} -g -p ${pid}` };
    }
    log(
      `NODE_PROFILE=cpu: every measured window is profiled with ${hooks.profiler.describe}; flame graphs by inferno ${INFERNO_VERSION}`,
    );
  }
  const kill = () => {
    for (const child of hooks.active) child.kill('SIGKILL');
    // The JIT map a Node.js node started here wrote for perf (profileEnv): it grows with the run and is of no use after
    // it.
    if (stack.runtime === 'host' && pid) fs.rmSync(`/tmp/perf-${pid}.map`, { force: true });
  };
  if (stack.cleanups) {
    stack.cleanups.push(kill);
  } else {
    const teardown = stack.teardown; // attach: nothing of its own to clean
    stack.teardown = async () => {
      kill();
      await teardown();
    };
  }
  stack.windowHooks = hooks;
  return hooks;
}

/** Stops one window's profiler and writes its files into <report>/profile/. */
async function finishProfile(hooks, prof, { name, reportDir }) {
  const p = hooks.profiler;
  const dir = path.join(reportDir, 'profile');
  const entry = { name, profiler: p.kind };
  try {
    const r = await prof.stop(dir, name);
    fs.writeFileSync(path.join(dir, `${name}.folded`), r.folded);
    const stacks = parseFolded(r.folded);
    const top = topFunctions(stacks, 10);
    // NETWORK_NODES: the share of the window's samples in the client's networking and gossip code
    if (hooks.network && hooks.network.profileFrames)
      entry.networking = shareMatching(stacks, hooks.network.profileFrames);
    Object.assign(entry, {
      start_ms: r.start_ms,
      seconds: r.seconds,
      samples: top.samples,
      native: `profile/${r.native}`,
      folded: `profile/${name}.folded`,
      flamegraph: null,
      top,
    });
    const svg = renderFlamegraph(p.tools, r.folded, path.join(dir, `${name}.svg`), {
      title: `Node CPU, window ${name} (${p.kind})`,
      kind: p.kind,
    });
    if (svg) entry.flamegraph = `profile/${svg}`;
    else entry.error = 'the profile holds no samples';
  } catch (err) {
    entry.error = err.message;
  }
  // a window measured again (its load started late) replaces its first attempt's profile, as its files do
  const again = hooks.windows.findIndex((w) => w.name === name);
  if (again >= 0) hooks.windows[again] = entry;
  else hooks.windows.push(entry);
  return entry;
}

/**
 * Called at the window's start edge (right after the node's CPU was read).
 * @returns {{stop: () => Promise<{per_core?:object, per_core_series?:object[], profile?:object}>, cancel: () => void}}
 */
function startWindowHooks({ stack, name, window, reportDir }) {
  const hooks = stack.windowHooks;
  if (!hooks) return { stop: async () => ({}), cancel() {} };
  const reads = [];
  let timer = null;
  if (hooks.perCore) {
    const first = tryRead(hooks.perCore.file);
    if (first) reads.push(first);
    timer = setInterval(() => {
      const r = tryRead(hooks.perCore.file);
      if (r) reads.push(r);
    }, 1000);
  }
  const net = hooks.network ? hooks.network.windowHook() : null;
  const fleet = hooks.fleet ? hooks.fleet.windowHook(window) : null;
  let prof = null;
  if (hooks.profiler) {
    fs.mkdirSync(path.join(reportDir, 'profile'), { recursive: true });
    const seconds = Math.max(1, Math.round((window.end - window.start) / 1000));
    prof =
      hooks.profiler.kind === 'pprof'
        ? startPprof(hooks.profiler, { seconds })
        : startPerf(hooks.profiler, { dir: path.join(reportDir, 'profile'), name, active: hooks.active });
  }
  return {
    cancel() {
      clearInterval(timer);
      if (prof) prof.cancel();
      if (net) net.cancel();
      if (fleet) fleet.cancel();
    },
    async stop() {
      const last = hooks.perCore ? tryRead(hooks.perCore.file) : null; // first: it belongs to the end edge
      const fleetDone = fleet ? fleet.stop() : null; // its replicas' CPU too, read as it is called
      clearInterval(timer);
      const out = {};
      if (last && reads.length) {
        out.per_core = perCoreBetween(reads[0], last, { cpus: hooks.perCore.cpus, source: hooks.perCore.source });
        out.per_core_series = perSecond([...reads, last]);
      }
      if (prof) out.profile = await finishProfile(hooks, prof, { name, reportDir });
      if (net) out.network = await net.stop();
      if (fleetDone) out.fleet = await fleetDone;
      if (net && out.profile && out.profile.networking) out.network.cpu_share_networking = out.profile.networking;
      return out;
    },
  };
}

/**
 * run.json's `profile`: the profiler, every window's files, and the top
 * functions over the windows the figures come from (one window, or every
 * repetition), with their merged folded stacks and flame graph.
 */
function summarizeProfiles(hooks, reportDir) {
  const p = hooks.profiler;
  const main = hooks.windows.filter((w) => w.name === 'measure' || /^rep\d+$/.test(w.name));
  const used = (main.length ? main : hooks.windows).filter((w) => w.folded);
  const out = {
    mode: 'cpu',
    profiler: p.kind,
    describe: p.describe,
    renderer: `inferno ${INFERNO_VERSION} (inferno-flamegraph)`,
    windows: hooks.windows.map((w) => ({ ...w, top: undefined })),
    folded: null,
    flamegraph: null,
    top: null,
  };
  if (!used.length) return out;
  if (used.length === 1) {
    Object.assign(out, {
      folded: used[0].folded,
      flamegraph: used[0].flamegraph,
      top: used[0].top && topFunctions(parseFolded(fs.readFileSync(path.join(reportDir, used[0].folded), 'utf8')), 15),
    });
    return out;
  }
  const merged = mergeFolded(used.map((w) => fs.readFileSync(path.join(reportDir, w.folded), 'utf8')));
  fs.writeFileSync(path.join(reportDir, 'profile', 'all.folded'), merged);
  out.folded = 'profile/all.folded';
  const svg = renderFlamegraph(p.tools, merged, path.join(reportDir, 'profile', 'all.svg'), {
    title: `Node CPU, ${used.length} windows (${p.kind})`,
    kind: p.kind,
  });
  out.flamegraph = svg ? `profile/${svg}` : null;
  out.top = topFunctions(parseFolded(merged), 15);
  return out;
}

/**
 * NODE_PROFILE=cpu: the summary of every window's profile for a report, and the warnings that go with it
 * (the figures were measured with the profiler running; windows left without a profile).
 */
function profileOutcome(hooks, reportDir) {
  let profile;
  try {
    profile = summarizeProfiles(hooks, reportDir);
  } catch (err) {
    profile = { mode: 'cpu', profiler: hooks.profiler.kind, error: err.message };
  }
  const warnings = [
    `NODE_PROFILE=cpu: the node was profiled (${hooks.profiler.kind}) during every measured window; the profiler's own cost is in these figures`,
  ];
  for (const w of hooks.windows.filter((x) => x.error))
    warnings.push(`NODE_PROFILE=cpu: no profile for window ${w.name}: ${w.error}`);
  return { profile, warnings };
}

module.exports = { profileOutcome, prepareWindowHooks, startWindowHooks, finishProfile };
