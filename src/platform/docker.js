'use strict';
// The Docker engine, spoken to directly over its socket (inspect, stats,
// images), and the Compose command line, v2 (`docker compose`) or v1
// (`docker-compose`), whichever is installed.

const http = require('node:http');
const { spawn, spawnSync, execFile } = require('node:child_process');
const { promisify } = require('node:util');

const SOCKET = process.env.DOCKER_SOCKET || '/var/run/docker.sock';

/**
 * One request to the engine's API; resolves {status, body} (body parsed when JSON).
 * @param {string} method
 * @param {string} path
 * @param {{timeoutMs?: number, body?: any}} [opts] body: sent as JSON
 * @returns {Promise<{status: number, body: any}>}
 */
function engine(method, path, { timeoutMs = 10000, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: SOCKET,
        method,
        path,
        timeout: timeoutMs,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed = text;
          if ((res.headers['content-type'] || '').includes('json')) {
            try {
              parsed = JSON.parse(text);
            } catch {
              // keep the text
            }
          }
          resolve({ status: res.statusCode, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`Docker engine: ${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    if (body) req.write(JSON.stringify(body));
    req.end();
  });
}

let engineVersion;
/**
 * The engine's version when one answers on the socket, else null (synchronous:
 * used while resolving a scenario). Asked once per process: a plan resolves
 * every point's scenario.
 */
function engineVersionSync() {
  if (engineVersion !== undefined) return engineVersion;
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      `
    const http = require('node:http');
    const req = http.get({ socketPath: ${JSON.stringify(SOCKET)}, path: '/version', timeout: 3000 }, (res) => {
      let t = ''; res.on('data', (c) => { t += c; }); res.on('end', () => { try { process.stdout.write(JSON.parse(t).Version || ''); } catch {} });
    });
    req.on('timeout', () => req.destroy()); req.on('error', () => {});
  `,
    ],
    { encoding: 'utf8', timeout: 5000 },
  );
  engineVersion = r.status === 0 && r.stdout ? r.stdout.trim() : null;
  return engineVersion;
}

/** Container details (State, Config, Id, HostConfig), or null when there is no such container. */
async function inspectContainer(nameOrId, opts = {}) {
  const r = await engine('GET', `/containers/${encodeURIComponent(nameOrId)}/json`, opts);
  if (r.status === 404) return null;
  if (r.status !== 200)
    throw new Error(`Docker engine: inspect ${nameOrId}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return r.body;
}

/**
 * Looks every everyMs for containers that stopped running and calls onExit(item, info) once for each (info null: the
 * engine no longer knows it); onTick runs before each look. An inspect that fails (a busy engine) is tried again at
 * the next look. Returns the function that stops looking.
 * @template T
 * @param {T[]} items
 * @param {{idOf: (item: T) => string, everyMs: number, onTick?: () => void, onExit: (item: T, info: any) => void}} o
 */
function watchExits(items, { idOf, everyMs, onTick = () => {}, onExit }) {
  const gone = new Set();
  const timer = setInterval(async () => {
    onTick();
    for (const item of items) {
      if (gone.has(item)) continue;
      const info = await inspectContainer(idOf(item)).catch(() => undefined);
      if (info === undefined || (info && info.State.Status === 'running')) continue;
      gone.add(item);
      onExit(item, info);
    }
  }, everyMs);
  return () => clearInterval(timer);
}

/**
 * The engine's own CPU counters for a container, read now (one-shot stats,
 * no waiting for a second sample): user, system and total seconds.
 */
async function containerCpu(id) {
  const r = await engine('GET', `/containers/${id}/stats?stream=false&one-shot=true`);
  if (r.status !== 200) throw new Error(`Docker engine: stats ${id}: HTTP ${r.status}`);
  const u = r.body.cpu_stats.cpu_usage;
  return {
    user_s: u.usage_in_usermode / 1e9,
    system_s: u.usage_in_kernelmode / 1e9,
    total_s: u.total_usage / 1e9,
    at_ms: Date.parse(r.body.read) || Date.now(),
    memory_bytes: r.body.memory_stats && r.body.memory_stats.usage,
  };
}

/** Image details, or null when the image is not here. */
async function inspectImage(ref) {
  const r = await engine('GET', `/images/${encodeURIComponent(ref)}/json`);
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`Docker engine: image ${ref}: HTTP ${r.status}`);
  return r.body;
}

/** Volumes and containers of a compose project still present (labels set by Compose v1 and v2 alike). */
async function projectLeftovers(project) {
  const filter = encodeURIComponent(JSON.stringify({ label: [`com.docker.compose.project=${project}`] }));
  const c = await engine('GET', `/containers/json?all=true&filters=${filter}`);
  const v = await engine('GET', `/volumes?filters=${filter}`);
  const n = await engine('GET', `/networks?filters=${filter}`);
  return {
    containers: c.body.map((x) => x.Names[0].replace(/^\//, '')),
    volumes: (v.body.Volumes || []).map((x) => x.Name),
    networks: n.body.map((x) => x.Name),
  };
}

/**
 * Removes what is left of a compose project through the engine alone (containers forced, then volumes and networks),
 * without its compose files: how a killed run's project is reclaimed. Resolves what was removed.
 */
async function removeProject(project) {
  const left = await projectLeftovers(project);
  const removed = { containers: [], volumes: [], networks: [] };
  const del = async (kind, pathOf, name) => {
    const r = await engine('DELETE', pathOf(encodeURIComponent(name)), { timeoutMs: 60000 });
    if (r.status < 300 || r.status === 404) removed[kind].push(name);
  };
  for (const c of left.containers) await del('containers', (n) => `/containers/${n}?force=true&v=true`, c);
  for (const v of left.volumes) await del('volumes', (n) => `/volumes/${n}?force=true`, v);
  for (const n of left.networks) await del('networks', (x) => `/networks/${x}`, n);
  return removed;
}

/**
 * A container's log through the docker CLI (the engine's raw stream is framed): its standard output and error, the
 * last `tail` lines of each, or all of them. Rejects when the CLI fails (a container that is gone).
 */
async function containerLogs(id, { tail = null, stdoutOnly = false } = {}) {
  const args = ['logs', ...(tail ? ['--tail', String(tail)] : []), id];
  const r = await promisify(execFile)('docker', args, { maxBuffer: 1 << 30 });
  return stdoutOnly ? r.stdout : `${r.stdout}${r.stderr}`;
}

let composeCmd;
/**
 * The Compose command: ['docker', 'compose'] (v2) or ['docker-compose'] (v1),
 * with its version; null when neither is installed. COMPOSE_COMMAND overrides.
 */
function findCompose() {
  if (composeCmd !== undefined) return composeCmd;
  const candidates = process.env.COMPOSE_COMMAND
    ? [process.env.COMPOSE_COMMAND.split(/\s+/)]
    : [['docker', 'compose'], ['docker-compose']];
  composeCmd = null;
  for (const argv of candidates) {
    const r = spawnSync(argv[0], [...argv.slice(1), 'version', '--short'], { encoding: 'utf8', timeout: 15000 });
    if (r.status === 0 && r.stdout.trim()) {
      const version = r.stdout.trim().replace(/^v/, '');
      composeCmd = { argv, version, major: Number(version.split('.')[0]) };
      break;
    }
  }
  return composeCmd;
}

/**
 * Runs a Compose command; resolves {code, out}. Output lines go to onLine as they come.
 * @param {string[]} args after `docker compose`
 * @param {{argv?: string[]}} opts argv: a given Compose command instead of the one found
 */
function compose(args, { env, cwd, onLine = () => {}, timeoutMs = 0, argv } = {}) {
  const c = argv ? { argv } : findCompose();
  if (!c) return Promise.reject(new Error('neither `docker compose` (v2) nor `docker-compose` (v1) is installed'));
  return new Promise((resolve, reject) => {
    const child = spawn(c.argv[0], [...c.argv.slice(1), ...args], {
      env: { ...process.env, ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let partial = '';
    const onData = (buf) => {
      out += buf;
      const lines = (partial + buf.toString()).split('\n');
      partial = lines.pop();
      for (const l of lines) if (l.trim()) onLine(l);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = timeoutMs ? setTimeout(() => child.kill('SIGKILL'), timeoutMs) : null;
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Where the engine keeps its data (its volumes among them): DockerRootDir, /var/lib/docker when it does not say. */
async function dataRoot() {
  const info = await engine('GET', '/info');
  return (info.status === 200 && info.body && info.body.DockerRootDir) || '/var/lib/docker';
}

module.exports = {
  dataRoot,
  watchExits,
  removeProject,
  engine,
  engineVersionSync,
  inspectContainer,
  containerCpu,
  containerLogs,
  inspectImage,
  projectLeftovers,
  findCompose,
  compose,
  SOCKET,
};
