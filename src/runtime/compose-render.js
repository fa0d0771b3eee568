'use strict';
// What a compose run's project is, rendered from the scenario and nothing else:
// the project's name, the compose files it combines, every ${VAR} they read
// (the node's command from its client module, ports, cpuset, images), the
// Prometheus configuration, and the command that stops it. No engine is
// asked: ./run.sh config prints the same.

const fs = require('node:fs');
const path = require('node:path');
const clients = require('../clients');
const chains = require('../chains');

const ROOT = path.resolve(__dirname, '..', '..');

const COMPOSE_DIR = path.join(ROOT, 'compose');

/** Compose project name of a run: lower case, as Compose v1 and v2 both require. */
const projectName = (runId) => `chainperf-${runId}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-');

/** The compose files a scenario combines, in order: the client's node file first. */
function composeFiles(s, { grafana, chainSpecFile = null, limitsFile = null, extraFiles = [] }) {
  const files = ['cadvisor.yml', 'prometheus.yml'];
  if (chainSpecFile) files.push('chain-spec.yml');
  if (grafana) files.push('grafana.yml');
  if (s.NODE_VOLUME) files.push('volume-kept.yml');
  const out = [clients[s.CLIENT].compose.file, ...files.map((f) => path.join(COMPOSE_DIR, f))];
  if (limitsFile) out.push(limitsFile); // the run's MEMORY_MB and DISK_* limits (runtime/limits.js)
  out.push(...extraFiles); // NETWORK_NODES, REPLICAS: the network's and the fleet's services (compose-around.js)
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
  let text = fs.readFileSync(path.join(ROOT, 'prometheus', 'compose.yml'), 'utf8');
  // REPLICAS: every replica scraped, each series labelled with its replica (the node service is replica-1)
  if (s.BALANCER === 'haproxy') {
    const target = (i) =>
      `      - targets: ['${i === 1 ? 'node' : `replica-${i}`}:__NODE_METRICS_PORT__']\n        labels:\n          run_id: '__RUN_ID__'\n          replica: 'replica-${i}'\n`;
    const one = "      - targets: ['node:__NODE_METRICS_PORT__']\n        labels:\n          run_id: '__RUN_ID__'\n";
    if (!text.includes(one))
      throw new Error('prometheus/compose.yml: the node target is not where chainperf expects it');
    text = text.replace(one, Array.from({ length: s.REPLICAS }, (_, k) => target(k + 1)).join(''));
  }
  return text
    .replaceAll('__NODE_METRICS_PATH__', m.path)
    .replaceAll('__NODE_METRICS_PORT__', String(m.port))
    .replaceAll('__RUN_ID__', runId);
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

module.exports = {
  ROOT,
  COMPOSE_DIR,
  projectName,
  composeFiles,
  composeEnv,
  chainSpecFileOf,
  shellJoin,
  prometheusConfig,
  stopCommand,
};
