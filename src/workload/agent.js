'use strict';
// The generator agent: what runs in a generator's container on a swarm node
// (SWARM_GENERATOR_NODES), where chainperf reaches no file and no engine. It
// gives chainperf, over HTTP with the run's token, the files of the run's
// work folder as its generator reads and writes them (the same absolute
// paths as on chainperf's machine), artillery passes started and stopped on
// request, and its container's CPU at given instants: its cgroup's counter,
// read when chainperf asks (at a window's edge) and once a second, and
// interpolated between the readings around an instant. Reading it every few
// milliseconds would cost the container more than the reading is worth (a
// 10 ms timer alone took 1.8% of a core on a 2-core VM). chainperf's side is
// src/workload/agent-client.js.
//
//   GET    /health            {now_ms, hostname, cpus, cpu_source}
//   GET    /list?name=N       every file under the work folder: {files: [{path, size}], run: pass N's state}
//   GET    /file?path=P       a file's bytes;  PUT: written whole;  DELETE: removed
//   POST   /run?name=N        {spec, script, output, log}: an artillery pass
//   GET    /run?name=N        {running, code, signal};  POST /kill?name=N
//   POST   /cpu               a reading now;  GET /cpu?at=T1,T2: the CPU seconds at those instants (null: no
//                              reading after it yet, or it is older than the readings kept)
//
// Run: node src/workload/agent.js (CHAINPERF_AGENT_ROOT, CHAINPERF_AGENT_PORT, CHAINPERF_AGENT_TOKEN_FILE).

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { passCommand } = require('./pass-command');

const SAMPLE_MS = 1000;
const KEEP_SAMPLES = 4 * 3600; // four hours of once-a-second readings (fewer with those asked for)

/** This container's CPU counter in seconds (cgroup v2 or v1), or null where neither is readable. */
function cgroupCpuReader(base = '/sys/fs/cgroup') {
  const v2 = path.join(base, 'cpu.stat');
  const v1 = path.join(base, 'cpuacct', 'cpuacct.usage');
  if (fs.existsSync(v2))
    return {
      source: `${v2} usage_usec`,
      read: () => Number(/usage_usec (\d+)/.exec(fs.readFileSync(v2, 'utf8'))[1]) / 1e6,
    };
  if (fs.existsSync(v1)) return { source: v1, read: () => Number(fs.readFileSync(v1, 'utf8')) / 1e9 };
  return null;
}

/** The cores this container may run on, as a cpu list. */
function allowedCpus(base = '/sys/fs/cgroup') {
  for (const f of ['cpuset.cpus.effective', 'cpuset/cpuset.effective_cpus'])
    try {
      const v = fs.readFileSync(path.join(base, f), 'utf8').trim();
      if (v) return v;
    } catch {
      // not this cgroup version
    }
  return `0-${os.cpus().length - 1}`;
}

/** A counter read every SAMPLE_MS and on demand: its value at a past instant, interpolated between the readings. */
class CpuSamples {
  constructor(reader) {
    this.reader = reader;
    this.t = [];
    this.v = [];
    if (!reader) return;
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
    this.sample();
  }
  /** Reads the counter now; [instant, value]. */
  sample() {
    if (!this.reader) return null;
    this.t.push(Date.now());
    this.v.push(this.reader.read());
    if (this.t.length > KEEP_SAMPLES) {
      this.t.splice(0, this.t.length - KEEP_SAMPLES);
      this.v.splice(0, this.v.length - KEEP_SAMPLES);
    }
    return [this.t[this.t.length - 1], this.v[this.v.length - 1]];
  }
  at(ms) {
    const { t, v } = this;
    if (!t.length || ms < t[0] || ms > t[t.length - 1]) return null;
    let lo = 0;
    let hi = t.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (t[mid] <= ms) lo = mid;
      else hi = mid;
    }
    if (t[hi] === t[lo]) return v[lo];
    return v[lo] + ((v[hi] - v[lo]) * (ms - t[lo])) / (t[hi] - t[lo]);
  }
}

/** A file being written, not yet whole: a leading dot, .tmp, .part (both sides write beside and rename). */
const beingWritten = (name) => name.startsWith('.') || /\.(tmp|part)$/.test(name);

/** Every file under dir (relative paths), but those being written. */
function listFiles(dir, rel = '') {
  let entries;
  try {
    entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
  } catch {
    return [];
  }
  const out = [];
  for (const e of entries) {
    if (beingWritten(e.name)) continue;
    const p = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...listFiles(dir, p));
    else if (e.isFile()) out.push({ path: p, size: fs.statSync(path.join(dir, p)).size });
  }
  return out;
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });

/** A generator pass as chainperf's own (workload/artillery.js) runs it, in its own process group. */
function startPass({ spec, script, output, log }) {
  const fd = fs.openSync(log, 'a');
  const { argv, env } = passCommand(script, output, spec);
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  const pass = { child, running: true, code: null, signal: null };
  child.on('exit', (code, sig) => {
    Object.assign(pass, { running: false, code, signal: sig });
    try {
      process.kill(-child.pid, 'SIGKILL'); // workers its main process left behind
    } catch {
      // already gone
    }
  });
  return pass;
}

/** A path under the agent's work folder (below `prefix`, where a test keeps it apart), or a 403. */
function inRoot({ root, prefix }, p) {
  const abs = path.resolve(String(p || ''));
  if (abs !== root && !abs.startsWith(`${root}${path.sep}`)) throw Object.assign(new Error('outside'), { code: 403 });
  return path.join(prefix, abs);
}

/** A file's route: its bytes (GET), written whole (PUT: beside it, then renamed), removed (DELETE). */
async function fileRoute(req, file) {
  if (req.method === 'GET') return fs.existsSync(file) ? fs.readFileSync(file) : null;
  if (req.method === 'DELETE') return fs.rmSync(file, { force: true }) || {};
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.part`, await readBody(req), { mode: 0o600 });
  fs.renameSync(`${file}.part`, file); // whole, as the generator's workers expect a file to appear
  return {};
}

/** One request's answer: an object (JSON), a Buffer, or null (404). */
async function handle(agent, req, url) {
  const { root, prefix, cpu, samples, passes } = agent;
  const q = url.searchParams;
  const route = `${req.method} ${url.pathname}`;
  if (route === 'GET /health')
    return { now_ms: agent.now(), hostname: os.hostname(), cpus: allowedCpus(), cpu_source: cpu ? cpu.source : null };
  const pass = passes.get(q.get('name'));
  const state = pass ? { running: pass.running, code: pass.code, signal: pass.signal } : null;
  if (route === 'GET /list') return { files: listFiles(path.join(prefix, root)), run: state };
  if (route === 'POST /cpu') return { read: samples.sample() };
  if (route === 'GET /cpu') return (q.get('at') || '').split(',').map((t) => samples.at(Number(t)));
  if (url.pathname === '/file' && ['GET', 'PUT', 'DELETE'].includes(req.method))
    return fileRoute(req, inRoot(agent, q.get('path')));
  if (route === 'POST /run') {
    const o = JSON.parse(String(await readBody(req)));
    for (const k of ['spec', 'script', 'output', 'log']) o[k] = inRoot(agent, o[k]);
    fs.mkdirSync(path.dirname(o.log), { recursive: true });
    passes.set(q.get('name'), startPass(o));
    return { pid: passes.get(q.get('name')).child.pid };
  }
  if (route === 'GET /run') return state;
  if (route === 'POST /kill') {
    if (pass && pass.running) process.kill(-pass.child.pid, 'SIGKILL');
    return {};
  }
  throw Object.assign(new Error(`no such route: ${route}`), { code: 404 });
}

/** The agent's HTTP server: every request needs the token; every path is under root (now: its clock). */
function createAgent({ root, token, cpu = cgroupCpuReader(), prefix = '', now = Date.now }) {
  const agent = { root: path.resolve(root), prefix, now, cpu, samples: new CpuSamples(cpu), passes: new Map() };
  const server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end('a token is needed');
      return;
    }
    handle(agent, req, new URL(req.url, 'http://agent')).then(
      (out) => {
        if (out === null) res.writeHead(404).end();
        else if (Buffer.isBuffer(out)) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(out);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      },
      (err) => res.writeHead(err.code === 403 || err.code === 404 ? err.code : 500).end(String(err.message)),
    );
  });
  server.on('close', () => {
    clearInterval(agent.samples.timer);
    for (const p of agent.passes.values()) if (p.running) process.kill(-p.child.pid, 'SIGKILL');
  });
  return server;
}

if (require.main === module) {
  const root = path.resolve(process.env.CHAINPERF_AGENT_ROOT || '/tmp/chainperf-agent');
  const token = fs
    .readFileSync(process.env.CHAINPERF_AGENT_TOKEN_FILE || '/run/secrets/generator-token', 'utf8')
    .trim();
  const port = Number(process.env.CHAINPERF_AGENT_PORT || 8099);
  fs.mkdirSync(root, { recursive: true });
  const server = createAgent({ root, token });
  server.listen(port, () => console.log(`chainperf generator agent on port ${port}, work folder ${root}`));
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

module.exports = { createAgent, CpuSamples, cgroupCpuReader, listFiles, beingWritten };
