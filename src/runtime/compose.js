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
const { ensureImages } = require('./images');
const { freePorts } = require('../util/net');
const { sleep } = require('../util/time');
const { rpcCall } = require('../util/rpc');
const { cpuList, blockTicker } = require('./host');
const { rulesFile } = require('./prometheus-rules');
const { attachTeardown } = require('./teardown');
const { engineAnswers, engineLostError, downFailedError } = require('./engine-lost');
const {
  COMPOSE_DIR,
  ROOT,
  composeEnv,
  composeFiles,
  projectName,
  prometheusConfig,
  stopCommand,
} = require('./compose-render');
const { composeLimits, prepareComposeNode } = require('./compose-data');
const { describeNode, watchNodeContainer } = require('./compose-node');
const { planAround, initAround, startAround, otherCpusOf } = require('./compose-around');

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

/** Each cAdvisor target Prometheus scrapes, its health and last scrape error: why a node's series may be missing. */
async function cadvisorTargetsState(promUrl) {
  const url = `${promUrl}/api/v1/targets?state=active`;
  const body = await (await fetch(url, { signal: AbortSignal.timeout(3000) })).json();
  const targets = ((body.data && body.data.activeTargets) || []).filter((t) => t.labels.job === 'cadvisor');
  if (!targets.length) return 'Prometheus has found no cAdvisor target yet';
  const each = targets.map((t) => `${t.scrapeUrl} ${t.health}${t.lastError ? ` (${t.lastError})` : ''}`);
  return `cAdvisor targets: ${each.join('; ')}`;
}

/** Compose and an engine that answers, and a compose service for the client; what they are. */
function composeTools(s) {
  const c = docker.findCompose();
  if (!c)
    throw new Error(
      'RUNTIME=compose needs Docker Compose: neither `docker compose` (v2) nor `docker-compose` (v1) is installed',
    );
  const engineVersion = docker.engineVersionSync();
  if (!engineVersion) throw new Error(`RUNTIME=compose needs a Docker engine, and none answers on ${docker.SOCKET}`);
  const client = clients[s.CLIENT];
  if (!client.compose) throw new Error(`CLIENT=${s.CLIENT} has no compose service yet; use RUNTIME=host`);
  return { c, engineVersion, client };
}

/** Prometheus' configuration and recording rules for the run, written into its work folder. */
function writePrometheusFiles(s, client, { runId, workDir }) {
  const promConfig = path.join(workDir, 'prometheus.yml');
  fs.writeFileSync(promConfig, prometheusConfig(s, runId));
  const promRules = path.join(workDir, 'prometheus-rules.yml');
  fs.writeFileSync(promRules, rulesFile(client));
  return { promConfig, promRules };
}

/** Everything decided before anything starts: compose command, images, ports, files, environment. */
async function planCompose(s, { runId, workDir, log }) {
  const { c, engineVersion, client } = composeTools(s);
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
  const { promConfig, promRules } = writePrometheusFiles(s, client, { runId, workDir });
  // A chain may prepare what its node starts from (Substrate: the chain spec, with dev accounts funded).
  const chain = chains[s.CHAIN];
  let prepared = chain.prepare ? await chain.prepare(s, { workDir, log, client }) : {};
  // NETWORK_NODES, REPLICAS: the network's services and the fleet's, the node a member of the network
  const around = await planAround(s, {
    client,
    images,
    workDir,
    log,
    nodeCpus,
    otherCpus: otherCpusOf(generatorCpus, ncpu),
  });
  prepared = { ...prepared, ...around.prepared };
  const grafanaPassword = crypto.randomBytes(18).toString('base64url');
  const env = composeEnv(s, { images, ports, nodeCpus, promConfig, promRules, grafanaPassword, prepared });
  const limits = await composeLimits(s, workDir, log);
  const chainSpecFile = env.CHAIN_SPEC_FILE || null;
  const files = composeFiles(s, {
    grafana,
    chainSpecFile,
    limitsFile: limits && limits.file,
    extraFiles: around.files,
  });
  const fileArgs = ['-p', project, '--project-directory', COMPOSE_DIR, ...files.flatMap((f) => ['-f', f])];
  const run = (args, opts = {}) => docker.compose([...fileArgs, ...args], { env, ...opts });
  const plan = { s, c, engineVersion, client, images, grafana, project, stateVolume, ncpu, nodeCpus, generatorCpus };
  return { ...plan, ports, chain, env, limits, files, fileArgs, run, around, network: around.network };
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

/** A service's container and its log, as the network (network/compose-network.js) asks for them. */
const composeServices = (p) => ({
  containerOf: async (name) => (await p.run(['ps', '-q', name])).out.trim().split('\n').pop() || null,
  logsOf: async (name) => (await p.run(['logs', '--no-color', '--tail', '2000', name])).out,
});

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

/** Waits for Prometheus, cAdvisor, the node's series, the node's JSON-RPC and Grafana, each within STACK_TIMEOUT_S. */
async function waitForServices(stack, p, containers, { host, promUrl, log, signal, nodeGone: remoteGone = null }) {
  const { s, ports, chain } = p;
  const localGone = async () => {
    const info = await docker.inspectContainer(containers.node.id);
    if (!info || info.State.Status !== 'running')
      return `the node container exited while the stack was starting (status ${info ? info.State.ExitCode : 'removed'}); see node.log`;
    return null;
  };
  const nodeGone = remoteGone || localGone; // SWARM_NODE: the swarm's word on its task
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
      if (body.data && body.data.result.length > 0) return true;
      throw new Error(await cadvisorTargetsState(promUrl)); // what the timeout's message then says
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
    await prepareComposeNode(stack, p, { runId, workDir, log, signal });
    // Down first in teardown order means: registered before up, so a failed up is cleaned too.
    registerDown(stack, p, { workDir, log });
    await initAround(s, p.around, { client, run: p.run, log, state: stack.state, workDir });
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
    const services = composeServices(p);
    await startAround(s, stack, p.around, { client, containers, services, log, signal });
    log(`Prometheus at ${promUrl}, cAdvisor at http://${host}:${ports.cadvisor}, node RPC at ${stack.rpcUrl}`);
    return stack;
  } catch (err) {
    await stack.teardown();
    throw err;
  }
}

module.exports = { startCompose, planCompose, waitForServices };
