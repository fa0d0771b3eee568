'use strict';
// The compose runtime: the node, cAdvisor and Prometheus (and Grafana when its
// image is here) as services of one Docker Compose project per run, combined
// from the files in compose/ with every value set from the scenario. The node
// container gets CORES as a cpuset; the load generator runs on this host in
// its own cgroup on the other cores. Node CPU comes from cAdvisor through
// Prometheus (measure/cadvisor.js), cross-checked against the Docker engine's
// own counters for the container.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const clients = require('../clients');
const chains = require('../chains');
const docker = require('../platform/docker');
const { Cgroup, cgroupsUsable, groupsLeftover } = require('../platform/cgroup');
const { cadvisorSource } = require('../measure/cadvisor');
const { ensureImages } = require('./images');
const { freePorts } = require('../util/net');
const { sleep } = require('../util/time');
const { rpcCall } = require('../util/rpc');
const { cpuList, blockTicker } = require('./host');
const { queryClient } = require('./prometheus');
const { rulesFile } = require('./prometheus-rules');
const { attachTeardown } = require('./teardown');
const { limitsOf, blockDeviceOf, composeOverride, describeLimits } = require('./limits');
const { cgroupDirsOfPid, enableIoCounting, cgroupIoSource } = require('../measure/io');
const { restoreComposeState } = require('../state/restore');
const { engineAnswers, engineLostError, downFailedError } = require('./engine-lost');

/** Failed looks at the node container in a row (1 s apart) before an engine that does not answer ends the run. */
const ENGINE_MISSES = 5;

const ROOT = path.resolve(__dirname, '..', '..');
const COMPOSE_DIR = path.join(ROOT, 'compose');

/** Compose project name of a run: lower case, as Compose v1 and v2 both require. */
const projectName = (runId) => `chainperf-${runId}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-');

/** The compose files a scenario combines, in order: the client's node file first. */
function composeFiles(s, { grafana, chainSpecFile = null, limitsFile = null }) {
  const files = ['cadvisor.yml', 'prometheus.yml'];
  if (chainSpecFile) files.push('chain-spec.yml');
  if (grafana) files.push('grafana.yml');
  if (s.NODE_VOLUME) files.push('volume-kept.yml');
  const out = [clients[s.CLIENT].compose.file, ...files.map((f) => path.join(COMPOSE_DIR, f))];
  if (limitsFile) out.push(limitsFile); // the run's MEMORY_MB and DISK_* limits (runtime/limits.js)
  for (const extra of s.COMPOSE_FILES ? s.COMPOSE_FILES.split(',') : []) out.push(path.resolve(extra.trim()));
  return out;
}

/** The variables the compose files read, from the scenario and the run. */
function composeEnv(s, { images, ports, nodeCpus, promConfig, promRules, grafanaPassword, prepared = {} }) {
  const client = clients[s.CLIENT];
  const env = {
    ...(client.compose.env ? client.compose.env(s, prepared) : {}),
    NODE_COMMAND: shellJoin(client.compose.args(s, prepared)),
    NODE_IMAGE: images.node.ref,
    PROMETHEUS_IMAGE: images.prometheus.ref,
    CADVISOR_IMAGE: images.cadvisor.ref,
    NODE_CPUSET: nodeCpus,
    DB_CACHE_MB: String(s.DB_CACHE_MB),
    PEERS: String(s.PEERS),
    DB_ENGINE: s.DB_ENGINE,
    DEV_BLOCK_TIME_S: String(s.DEV_BLOCK_TIME_S),
    BIND_ADDR: s.BIND_ADDR,
    NODE_RPC_PORT: String(ports.rpc),
    NODE_WS_PORT: String(ports.ws),
    PROMETHEUS_PORT: String(ports.prometheus),
    CADVISOR_PORT: String(ports.cadvisor),
    PROMETHEUS_CONFIG: promConfig,
    ...(promRules ? { PROMETHEUS_RULES: promRules } : {}),
    GRAFANA_DIR: path.join(ROOT, 'grafana'),
  };
  if (images.grafana && images.grafana.ref) {
    env.GRAFANA_IMAGE = images.grafana.ref;
    env.GRAFANA_PORT = String(ports.grafana);
    env.GRAFANA_ADMIN_PASSWORD = grafanaPassword;
  }
  if (s.NODE_VOLUME) env.NODE_VOLUME = s.NODE_VOLUME;
  const specFile = chainSpecFileOf(s, prepared);
  if (specFile) env.CHAIN_SPEC_FILE = specFile;
  return env;
}

/** The chain spec file the node container mounts (chain-spec.yml), when the chain prepared one. */
function chainSpecFileOf(s, prepared) {
  const chain = chains[s.CHAIN];
  return chain.chainSpecFile ? chain.chainSpecFile(prepared) : null;
}

/**
 * An argument list as one command string, quoted where a shell would split or
 * expand it: Compose (v2 with shellwords, v1 with shlex) splits it back into
 * the same list.
 */
function shellJoin(args) {
  return args
    .map((a) => (/^[A-Za-z0-9_\-.,:/=@+%]+$/.test(a) ? a : `'${String(a).replaceAll("'", "'\\''")}'`))
    .join(' ');
}

/** prometheus/compose.yml with the run's values. */
function prometheusConfig(s, runId) {
  /** @type {import('../contracts').ComposeService} */
  const service = clients[s.CLIENT].compose;
  const m = service.metrics;
  return fs
    .readFileSync(path.join(ROOT, 'prometheus', 'compose.yml'), 'utf8')
    .replaceAll('__NODE_METRICS_PATH__', m.path)
    .replaceAll('__NODE_METRICS_PORT__', String(m.port))
    .replaceAll('__RUN_ID__', runId);
}

/** Polls check() until it returns true; throws `what` after timeoutS. */
async function waitUntil(check, { timeoutS, what, signal, onExit }) {
  const deadline = Date.now() + timeoutS * 1000;
  let last = null;
  for (;;) {
    const gone = onExit && (await onExit());
    if (gone) throw new Error(gone);
    try {
      if (await check()) return;
    } catch (err) {
      last = err.message;
    }
    if (Date.now() > deadline) throw new Error(`${what} in ${timeoutS} s${last ? ` (last error: ${last})` : ''}`);
    await sleep(500, signal);
  }
}

const httpOk = async (url) => (await fetch(url, { signal: AbortSignal.timeout(3000) })).ok;

/** Everything decided before anything starts: compose command, images, ports, files, environment. */
async function planCompose(s, { runId, workDir, log }) {
  const c = docker.findCompose();
  if (!c)
    throw new Error(
      'RUNTIME=compose needs Docker Compose: neither `docker compose` (v2) nor `docker-compose` (v1) is installed',
    );
  const engineVersion = docker.engineVersionSync();
  if (!engineVersion) throw new Error(`RUNTIME=compose needs a Docker engine, and none answers on ${docker.SOCKET}`);
  const client = clients[s.CLIENT];
  if (!client.compose) throw new Error(`CLIENT=${s.CLIENT} has no compose service yet; use RUNTIME=host`);

  const images = await ensureImages(s, log);
  const grafana = Boolean(images.grafana && images.grafana.ref);
  const project = projectName(runId);
  // A STATE profile is copied into a volume of the run, mounted like NODE_VOLUME (volume-kept.yml).
  const stateVolume = s.STATE !== 'dev' ? `${project}-state` : null;
  if (stateVolume) s = { ...s, NODE_VOLUME: stateVolume };
  const ncpu = os.cpus().length;
  const nodeCpus = cpuList(0, s.CORES);
  const generatorCpus = s.CORES < ncpu ? cpuList(s.CORES, ncpu) : null;
  const ports = await freePorts(['rpc', 'ws', 'prometheus', 'cadvisor', 'grafana']);
  if (s.GRAFANA_PORT) ports.grafana = s.GRAFANA_PORT;
  const promConfig = path.join(workDir, 'prometheus.yml');
  fs.writeFileSync(promConfig, prometheusConfig(s, runId));
  const promRules = path.join(workDir, 'prometheus-rules.yml');
  fs.writeFileSync(promRules, rulesFile(client));
  // A chain may prepare what its node starts from (Substrate: the chain spec, with dev accounts funded).
  const chain = chains[s.CHAIN];
  const prepared = chain.prepare ? await chain.prepare(s, { workDir, log, client }) : {};
  const env = composeEnv(s, {
    images,
    ports,
    nodeCpus,
    promConfig,
    promRules,
    grafanaPassword: crypto.randomBytes(18).toString('base64url'),
    prepared,
  });
  const limits = await composeLimits(s, workDir, log);
  const files = composeFiles(s, {
    grafana,
    chainSpecFile: env.CHAIN_SPEC_FILE || null,
    limitsFile: limits && limits.file,
  });
  const fileArgs = ['-p', project, '--project-directory', COMPOSE_DIR, ...files.flatMap((f) => ['-f', f])];
  const run = (args, opts = {}) => docker.compose([...fileArgs, ...args], { env, ...opts });
  return {
    s,
    c,
    engineVersion,
    client,
    images,
    grafana,
    project,
    stateVolume,
    ncpu,
    nodeCpus,
    generatorCpus,
    ports,
    chain,
    env,
    limits,
    files,
    fileArgs,
    run,
  };
}

/** The generator's cgroup, and a STATE profile restored into the run's volume. */
async function prepareComposeNode(stack, p, { runId, log, signal }) {
  const { s, client, stateVolume } = p;
  if (cgroupsUsable()) {
    stack.generatorGroup = new Cgroup(`chainperf/${runId}/generator`, { cpus: p.generatorCpus || cpuList(0, p.ncpu) });
    stack.cleanups.push(() => stack.generatorGroup.destroy());
    stack.leftovers.push(() => groupsLeftover([stack.generatorGroup]));
  }
  // A dev chain is fresh (history is created on it) unless it comes from a kept volume.
  if (stateVolume) {
    const { ensureBase } = require('./images');
    const bin = await client.ensureBinary(s, log); // the state is built with the same geth version on this host
    const restored = await restoreComposeState(s, {
      bin,
      version: s.CLIENT_VERSION || client.binaryVersion(bin),
      volume: stateVolume,
      docker,
      baseRef: await ensureBase(log),
      log,
      signal,
    });
    stack.state = restored.state;
    stack.cleanups.push(() =>
      s.KEEP === 'none' ? restored.remove() : log(`KEEP=${s.KEEP}: volume ${stateVolume} kept`),
    );
  }
  stack.freshChain = s.NODE_VOLUME ? !(await ensureVolume(s, log)) : true;
}

/**
 * `compose down` (after saving the node's logs) as a cleanup, registered before up so that a failed up is cleaned too.
 */
function registerDown(stack, p, { workDir, log }) {
  const { s, c, project, fileArgs, env, run } = p;
  const nodeLog = path.join(workDir, 'node.log');
  stack.nodeLog = nodeLog;
  let down = false;
  stack.leftovers.unshift(() =>
    down
      ? null
      : {
          what: `compose project ${project} (containers, volumes, network)`,
          command: stopCommand(c, fileArgs, env),
          compose: { project },
        },
  );
  stack.cleanups.push(async () => {
    if (!(await engineAnswers())) throw engineLostError(project, stopCommand(c, fileArgs, env));
    const logs = await run(['logs', '--no-color', '--tail', '2000', 'node']);
    fs.writeFileSync(nodeLog, logs.out);
    if (s.KEEP === 'stack') {
      log(`KEEP=stack: leaving compose project ${project} running; stop it with: ${stopCommand(c, fileArgs, env)}`);
      return;
    }
    const args = ['down', '--remove-orphans', '--timeout', '30', ...(s.KEEP === 'volume' ? [] : ['--volumes'])];
    const r = await run(args, { onLine: (l) => /^(Traceback|\s|\[\d+\] Failed)/.test(l) || log(`compose down: ${l}`) });
    if (r.code !== 0) throw await downFailedError(project, r, stopCommand(c, fileArgs, env));
    down = true;
    log(
      `compose project ${project} is down${s.KEEP === 'volume' ? ' (volumes kept: KEEP=volume)' : ' with its volumes'}`,
    );
  });
}

/** `compose up`, then the id and name of each service's container. */
async function composeUp(p, log) {
  const { c, project, engineVersion, files, nodeCpus, run } = p;
  log(
    `starting compose project ${project} (${c.argv.join(' ')} ${c.version}, engine ${engineVersion}): ${files.map((f) => path.basename(f)).join(', ')}; node on cpus ${nodeCpus}`,
  );
  const up = await run(['up', '-d', '--no-build'], { onLine: (l) => log(`compose up: ${l}`) });
  if (up.code !== 0)
    throw new Error(`compose up exited with status ${up.code}: ${up.out.trim().split('\n').slice(-3).join(' / ')}`);

  const containers = {};
  for (const svc of ['node', 'cadvisor', 'prometheus', ...(p.grafana ? ['grafana'] : [])]) {
    const ps = await run(['ps', '-q', svc]);
    const id = ps.out.trim().split('\n').pop();
    const info = id && (await docker.inspectContainer(id));
    if (!info) throw new Error(`compose started no ${svc} container`);
    containers[svc] = { id: info.Id, name: info.Name.replace(/^\//, '') };
  }
  return containers;
}

/** What an inspection of the node container says: null while it runs as it did, else how it exited or restarted. */
function nodeExitOf(info, startedAt) {
  const st = info && info.State;
  const restarted = Boolean(st && (info.RestartCount > 0 || st.StartedAt !== startedAt));
  if (st && st.Status === 'running' && !restarted) return null;
  return st
    ? { code: st.ExitCode, signal: st.OOMKilled ? 'OOM' : null, restarted, status: st.Status }
    : { code: null, signal: null, status: 'removed' };
}

/**
 * A node container that exits or restarts ends the run: stack.onNodeExit, and stack.restartNode for COLD=yes.
 * A restart is seen by the container's start time changing (a restart policy also counts RestartCount).
 */
async function watchNodeContainer(stack, containers) {
  let exitInfo = null;
  const exitListeners = [];
  let startedAt = (await docker.inspectContainer(containers.node.id)).State.StartedAt;
  let polling = false;
  let engineMisses = 0;
  let restarting = false; // COLD=yes stops and starts the node between windows: not an exit
  const report = (x) => {
    exitInfo = x;
    for (const fn of exitListeners) fn(exitInfo);
  };
  const poll = async () => {
    let info = await docker.inspectContainer(containers.node.id);
    if (info && info.State.Status !== 'running') {
      await sleep(1500); // a restart passes through "exited": look again before calling it an exit
      info = (await docker.inspectContainer(containers.node.id)) || info;
    }
    if (restarting) return;
    const gone = nodeExitOf(info, startedAt);
    if (gone) report(gone);
    engineMisses = 0;
  };
  const watch = setInterval(async () => {
    if (exitInfo || polling || restarting) return;
    polling = true;
    try {
      await poll();
    } catch {
      // the engine is busy; try again, unless it stopped answering altogether
      engineMisses++;
      if (engineMisses >= ENGINE_MISSES && !exitInfo && !(await engineAnswers()))
        report({ message: `the Docker engine stopped answering (${docker.SOCKET})` });
    } finally {
      polling = false;
    }
  }, 1000);
  stack.cleanups.push(() => clearInterval(watch)); // runs before down: leaving a container is not the node exiting
  stack.onNodeExit = (fn) => (exitInfo ? fn(exitInfo) : exitListeners.push(fn));
  /** Stops the node container, runs between() (COLD=yes: drop the page cache), starts it again. */
  stack.restartNode = async (between) => {
    restarting = true;
    try {
      const id = containers.node.id;
      const stop = await docker.engine('POST', `/containers/${id}/stop?t=30`, { timeoutMs: 60000 });
      if (![204, 304].includes(stop.status)) throw new Error(`cannot stop the node container: HTTP ${stop.status}`);
      await between();
      const start = await docker.engine('POST', `/containers/${id}/start`, { timeoutMs: 60000 });
      if (![204, 304].includes(start.status))
        throw new Error(`cannot start the node container again: HTTP ${start.status}`);
      startedAt = (await docker.inspectContainer(id)).State.StartedAt;
      await nodeIoCounters(stack, id); // a new process in a new cgroup
    } finally {
      restarting = false;
    }
  };
}

/** Waits for Prometheus, cAdvisor, the node's series, the node's JSON-RPC and Grafana, each within STACK_TIMEOUT_S. */
async function waitForServices(stack, p, containers, { host, promUrl, log, signal }) {
  const { s, ports, chain } = p;
  const nodeGone = async () => {
    const info = await docker.inspectContainer(containers.node.id);
    if (!info || info.State.Status !== 'running')
      return `the node container exited while the stack was starting (status ${info ? info.State.ExitCode : 'removed'}); see node.log`;
    return null;
  };
  const timeoutS = s.STACK_TIMEOUT_S;
  const opts = (what) => ({ timeoutS, what, signal, onExit: nodeGone });
  log(`waiting for the services to be ready (STACK_TIMEOUT_S=${timeoutS})`);
  await waitUntil(() => httpOk(`${promUrl}/-/ready`), opts('service prometheus did not become ready'));
  await waitUntil(
    () => httpOk(`http://${host}:${ports.cadvisor}/healthz`),
    opts('service cadvisor did not become ready'),
  );
  await waitUntil(
    async () => {
      const q = new URLSearchParams({ query: `container_cpu_usage_seconds_total{name="${containers.node.name}"}` });
      const body = await (await fetch(`${promUrl}/api/v1/query?${q}`, { signal: AbortSignal.timeout(3000) })).json();
      return body.data && body.data.result.length > 0;
    },
    opts(`Prometheus has no cAdvisor series for the node container ${containers.node.name}`),
  );
  await waitUntil(async () => {
    stack.client.version = chain.clientVersion
      ? await chain.clientVersion(stack.rpcUrl, { signal })
      : await rpcCall(stack.rpcUrl, 'web3_clientVersion', [], { timeoutMs: 3000 });
    return true;
  }, opts('the node did not answer JSON-RPC'));
  if (p.client.metrics && p.client.metrics.requests) stack.requestsMetric = p.client.metrics;
  if (p.grafana) {
    await waitUntil(
      () => httpOk(`http://${host}:${ports.grafana}/api/health`),
      opts('service grafana did not become ready'),
    );
    stack.grafanaUrl = `http://${host}:${ports.grafana}`;
    log(`Grafana (live dashboards, anonymous view) at ${stack.grafanaUrl}/dashboards`);
  }
}

/** The node's record, its I/O counters, its data folder and the CPU sources of the ready stack. */
async function describeNode(stack, p, containers, promUrl) {
  if (p.limits) stack.limits = p.limits.record;
  stack.node = {
    container: containers.node.name,
    container_id: containers.node.id,
    cpus: p.nodeCpus,
    rpc_url: stack.rpcUrl,
  };
  await nodeIoCounters(stack, containers.node.id);
  const nodeInfo = await docker.inspectContainer(containers.node.id);
  const dataMount = (nodeInfo.Mounts || []).find((x) => x.Destination === '/data');
  // the node's volume on this host: COLD=yes evicts it from the page cache
  if (dataMount) stack.nodeDataDir = dataMount.Source;
  stack.cpu = cadvisorSource(promUrl, containers.node.name);
  stack.cpuCheck = dockerStatsSource(containers.node.id);
  stack.prometheus = {
    url: promUrl,
    version: p.images.prometheus.ref,
    ...queryClient(promUrl),
  };
}

/**
 * Starts the stack; resolves once every service is ready.
 * @param {import('../contracts').Scenario} scenario
 * @param {import('../contracts').RuntimeContext} ctx
 * @returns {Promise<any>} the stack (a Stack: src/contracts.js)
 */
async function startCompose(scenario, { runId, workDir, log, signal, onStack }) {
  const p = await planCompose(scenario, { runId, workDir, log });
  const { s, c, client, images, project, ports } = p;
  const stack = {
    cleanups: [],
    leftovers: [],
    runtime: 'compose',
    generatorCpus: p.generatorCpus,
    project,
    compose: {
      command: c.argv.join(' '),
      version: c.version,
      engine: p.engineVersion,
      project,
      files: p.files.map((f) => path.relative(ROOT, f)),
    },
    images,
    client: { name: s.CLIENT, version: null, image: images.node.ref, image_id: images.node.id },
  };
  attachTeardown(stack, log);
  if (onStack) onStack(stack); // what it has started so far, should the run be forced to exit

  try {
    await prepareComposeNode(stack, p, { runId, log, signal });
    // Down first in teardown order means: registered before up, so a failed up is cleaned too.
    registerDown(stack, p, { workDir, log });
    const containers = await composeUp(p, log);
    stack.containers = containers;
    await watchNodeContainer(stack, containers);

    const host = s.BIND_ADDR === '0.0.0.0' ? '127.0.0.1' : s.BIND_ADDR;
    stack.rpcUrl = `${client.compose.rpc.scheme}://${host}:${ports.rpc}`;
    stack.wsUrl = stack.rpcUrl.startsWith('ws') ? stack.rpcUrl : `ws://${host}:${ports.ws}`;
    // A client that builds blocks only when asked (nethermind's spaceneth) is asked every DEV_BLOCK_TIME_S.
    if (client.newBlockMethod)
      stack.cleanups.push(blockTicker(stack.rpcUrl, client.newBlockMethod, s.DEV_BLOCK_TIME_S, log));
    const promUrl = `http://${host}:${ports.prometheus}`;
    await waitForServices(stack, p, containers, { host, promUrl, log, signal });
    await describeNode(stack, p, containers, promUrl);
    log(`Prometheus at ${promUrl}, cAdvisor at http://${host}:${ports.cadvisor}, node RPC at ${stack.rpcUrl}`);
    return stack;
  } catch (err) {
    await stack.teardown();
    throw err;
  }
}

/**
 * MEMORY_MB and DISK_* as a compose file for the node service, written into the work folder;
 * disk limits on the device that holds the Docker engine's data (its volumes). Null without limits.
 */
async function composeLimits(s, workDir, log) {
  const limits = limitsOf(s);
  if (!limits) return null;
  let device = null;
  if (Object.keys(limits.disk).length) {
    const { root, device: found } = await dockerDataDevice();
    device = found;
    if (device.error) throw new Error(`the Docker engine's data (${root}): ${device.error}`);
  }
  const file = path.join(workDir, 'limits.yml');
  const text = composeOverride(limits, device);
  fs.writeFileSync(file, text);
  log(`node limits: ${describeLimits(s, device)}`);
  return {
    file,
    record: {
      memory_bytes: limits.memoryBytes,
      device: device ? device.dev : null,
      compose: JSON.parse(text).services.node,
    },
  };
}

/** The Docker engine's data root and the disk it is on (its volumes hold the node's data). */
async function dockerDataDevice() {
  const info = await docker.engine('GET', '/info');
  const root = (info.status === 200 && info.body && info.body.DockerRootDir) || '/var/lib/docker';
  return { root, device: blockDeviceOf(root) };
}

/**
 * The node container's cgroup counters of disk I/O and major faults (measure/io.js), read on this host; left unset when
 * its cgroup is not found.
 */
async function nodeIoCounters(stack, id) {
  const info = await docker.inspectContainer(id);
  const dirs = info && info.State.Pid ? cgroupDirsOfPid(info.State.Pid) : null;
  if (!dirs) return;
  if (!stack.dataDevice) stack.dataDevice = (await dockerDataDevice()).device;
  const counting = enableIoCounting(dirs.blkio, stack.dataDevice);
  stack.ioCounters = cgroupIoSource(
    { memory: dirs.memory, blkio: counting ? dirs.blkio : null },
    `cgroup of the node container (blkio.throttle.io_service_bytes/io_serviced, memory.stat total_pgmajfault)`,
  );
}

/**
 * The command that brings a kept project down. Compose v2 finds a project by
 * its name; v1 needs the files and the variables they require (the Grafana
 * password is not printed: `down` does not use it).
 */
function stopCommand(c, fileArgs, env) {
  if (c.argv.length === 2) return `docker compose -p ${fileArgs[1]} down -v`;
  const required = ['NODE_VOLUME', 'CHAIN_SPEC_FILE'].filter((k) => env[k]).map((k) => `${k}=${env[k]}`);
  if (env.GRAFANA_ADMIN_PASSWORD) required.push('GRAFANA_ADMIN_PASSWORD=unused');
  return [...required, ...c.argv, ...fileArgs, 'down', '-v'].join(' ');
}

/** The Docker engine's own CPU counters for the node container: the cross-check of cAdvisor's. */
function dockerStatsSource(id) {
  return {
    kind: 'docker',
    describe: `Docker engine stats of container ${id.slice(0, 12)} (cpu_usage: total, usermode, kernelmode; ns)`,
    split: true,
    read: () => docker.containerCpu(id),
  };
}

/**
 * NODE_VOLUME: created when missing, restored from SNAPSHOT when that is given and the volume is new. Resolves whether
 * it holds a chain already.
 */
async function ensureVolume(s, log) {
  const existing = await docker.engine('GET', `/volumes/${encodeURIComponent(s.NODE_VOLUME)}`);
  if (existing.status === 200) {
    log(
      `node data: volume ${s.NODE_VOLUME} (kept from an earlier run)${s.SNAPSHOT ? '; SNAPSHOT not restored over it' : ''}`,
    );
    return true;
  }
  const made = await docker.engine('POST', '/volumes/create', {
    body: { Name: s.NODE_VOLUME, Labels: { 'io.chainperf.volume': 'node-data' } },
  });
  if (made.status !== 201) throw new Error(`cannot create volume ${s.NODE_VOLUME}: HTTP ${made.status}`);
  if (!s.SNAPSHOT) {
    log(`node data: new volume ${s.NODE_VOLUME}`);
    return false;
  }
  const snap = path.resolve(s.SNAPSHOT);
  log(`node data: restoring ${snap} into new volume ${s.NODE_VOLUME}`);
  const { BASE_REF, ensureBase } = require('./images');
  await ensureBase(log);
  const { runWithProgress } = require('../install/progress');
  await runWithProgress(
    'docker',
    [
      'run',
      '--rm',
      '-v',
      `${s.NODE_VOLUME}:/data`,
      '-v',
      `${path.dirname(snap)}:/snapshot:ro`,
      BASE_REF,
      'tar',
      '-xf',
      `/snapshot/${path.basename(snap)}`,
      '-C',
      '/data',
    ],
    { label: `restoring ${path.basename(snap)}`, log },
  );
  return true;
}

module.exports = { startCompose, composeFiles, composeEnv, prometheusConfig, projectName, shellJoin, chainSpecFileOf };
