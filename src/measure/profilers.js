'use strict';
// The profilers a measured window runs over the node (NODE_PROFILE=cpu): the
// tools installed on first use (perf from Debian, inferno from crates.io),
// geth's own pprof endpoint, perf record on the node's process, and a flame
// graph rendered from a profile's folded stacks.

const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { ensureInferno, runInferno } = require('../install/inferno');
const { ensureDebianTool } = require('../install/debian');
const { pprofToFolded } = require('./folded');
const { readPerCpu } = require('./percore');

const execFileP = promisify(execFile);

const PERF_HZ = 99;

/** perf from PERF_BIN, PATH, or Debian's linux-perf (installed as Prometheus is). */
function ensurePerf(log) {
  return ensureDebianTool('perf', 'linux-perf', log, process.env.PERF_BIN);
}

/** Installs what NODE_PROFILE needs before anything starts: inferno always, perf unless geth's own profiler serves. */
async function ensureProfileTools(s, clientModule, log) {
  if (s.NODE_PROFILE !== 'cpu') return null;
  const tools = { inferno: await ensureInferno(log) };
  if (!(clientModule.profiler === 'pprof' && s.RUNTIME === 'host')) tools.perf = await ensurePerf(log);
  return tools;
}

/**
 * The node's process id on this host: the host runtime's child, the compose node container's main process, or NODE_PID.
 */
async function nodeHostPid(s, stack) {
  if (stack.runtime === 'host') return stack.node.pid;
  if (stack.runtime === 'compose') {
    const { inspectContainer } = require('../platform/docker');
    const info = await inspectContainer(stack.node.container_id);
    return info && info.State && info.State.Pid ? info.State.Pid : null;
  }
  return s.NODE_PID || null;
}

const tryRead = (file) => {
  try {
    return readPerCpu(file);
  } catch {
    return null;
  }
};

/** Starts geth's profiler for the window: one request that answers when the window ends. */
function startPprof(p, { seconds }) {
  const started = Date.now();
  const body = fetch(`${p.url}?seconds=${seconds}`, { signal: AbortSignal.timeout((seconds + 60) * 1000) }).then(
    async (res) => {
      if (!res.ok) throw new Error(`${p.url}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
      return Buffer.from(await res.arrayBuffer());
    },
  );
  body.catch(() => {}); // awaited in stop()
  return {
    cancel() {},
    async stop(dir, name) {
      const buf = await body;
      const native = `${name}.pb.gz`;
      fs.writeFileSync(path.join(dir, native), buf);
      const f = pprofToFolded(buf);
      return { native, folded: f.text, start_ms: started, seconds: f.duration_s };
    },
  };
}

/** Starts perf on the node's process; stop() ends it with SIGINT (perf then writes its file) and folds its samples. */
function startPerf(p, { dir, name, active }) {
  const native = `${name}.perf.data`;
  const file = path.join(dir, native);
  const started = Date.now();
  const child = spawn(
    p.tools.perf,
    ['record', '-e', 'cpu-clock', '-F', String(PERF_HZ), '-g', '-p', String(p.pid), '-o', file],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  active.add(child);
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-2000);
  });
  const exited = new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: null, err }));
    child.on('exit', (code, sig) => resolve({ code, sig }));
  });
  return {
    cancel() {
      child.kill('SIGKILL');
    },
    async stop() {
      const stopped = Date.now();
      child.kill('SIGINT');
      const ex = await exited;
      active.delete(child);
      if (ex.err) throw new Error(`perf could not start: ${ex.err.message}`);
      if (!fs.existsSync(file)) throw new Error(`perf record wrote nothing (status ${ex.code}): ${stderr.trim()}`);
      // Without the period field, so that inferno counts samples (with it, it adds up periods in ns).
      const script = await execFileP(p.tools.perf, ['script', '-F', 'comm,pid,tid,time,event,ip,sym,dso', '-i', file], {
        maxBuffer: 1024 * 2 ** 20,
        encoding: 'utf8',
      });
      const folded = runInferno(p.tools.inferno, 'inferno-collapse-perf', [], script.stdout);
      return { native, folded, start_ms: started, seconds: (stopped - started) / 1000 };
    },
  };
}

/** Renders folded stacks as a flame graph SVG; returns the file name, or null when there is nothing to draw. */
function renderFlamegraph(tools, folded, file, { title, kind }) {
  if (!folded.trim()) return null;
  const svg = runInferno(
    tools.inferno,
    'inferno-flamegraph',
    [
      '--title',
      title,
      '--countname',
      'samples',
      '--colors',
      'hot',
      '--subtitle',
      kind === 'pprof' ? 'geth pprof CPU profile' : `perf cpu-clock at ${PERF_HZ} Hz`,
    ],
    folded,
  );
  fs.writeFileSync(file, svg);
  return path.basename(file);
}

module.exports = {
  execFileP,
  PERF_HZ,
  ensurePerf,
  ensureProfileTools,
  nodeHostPid,
  tryRead,
  startPprof,
  startPerf,
  renderFlamegraph,
};
