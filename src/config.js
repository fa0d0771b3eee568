'use strict';
// `./run.sh config <scenario>`: what a run of the scenario would start, without
// starting, installing, pulling or building anything. Prints the resolved
// scenario (secrets redacted, each value's source), then for the host runtime
// the node's command line, for the compose runtime the images and the compose
// configuration as Compose itself renders it (`docker compose config` or
// `docker-compose config`), for attach the endpoint measured. Ports are the
// ones a run picks when it starts; placeholders stand for them here.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const clients = require('./clients');
const runtimes = require('./runtime');
const { resolveScenario, redactScenario, derivedLine } = require('./scenario/resolve');
const {
  composeFiles,
  composeEnv,
  projectName,
  prometheusConfig,
  chainSpecFileOf,
} = require('./runtime/compose-render');
const { imageSpecs } = require('./runtime/images');
const docker = require('./platform/docker');
const { cpuList } = require('./runtime/host');
const { writeNetworkFile } = require('./network/compose-network');
const { planComposeFleet } = require('./runtime/compose-fleet');
const chains = require('./chains');
const { rulesFile } = require('./runtime/prometheus-rules');

/** Stand-ins for the ports and directories a run chooses when it starts. */
const HOST_PORTS = { rpc: 8545, ws: 8546, metrics: 6060, p2p: 30303, auth: 8551 };
const COMPOSE_PORTS = { rpc: 18545, ws: 18546, prometheus: 19090, cadvisor: 18080, grafana: 13000 };
const WORK_DIR = '<run dir>';

/** What the chain would prepare at start (Substrate: a funded copy of the spec), named without writing it. */
function preparedStandIn(s, client, dir) {
  const chain = chains[s.CHAIN];
  return chain.prepareDryRun ? chain.prepareDryRun(s, { client, dir }) : {};
}

/** The cores away from the node's (the network's, the balancer's), as a run chooses them. */
const otherCpus = (s) =>
  s.CORES < os.cpus().length ? cpuList(s.CORES, os.cpus().length) : cpuList(0, os.cpus().length);

/** REPLICAS: the fleet's services and HAProxy's configuration, with stand-in keys and ports. */
async function standInFleet(s, client, dir, images) {
  const plan = await planComposeFleet(s, {
    client,
    workDir: dir,
    imageRef: images.node.ref,
    haproxyRef: images.haproxy.ref,
    nodeCpus: cpuList(0, s.CORES),
    balancerCpus: otherCpus(s),
    network: { dir: path.join(dir, 'network'), member: { nodeKeyHex: '<per run>' } },
  });
  return plan.file;
}

/** NETWORK_NODES: the network's compose file with stand-in keys and ports (each run draws its own). */
function standInNetwork(s, client, dir, imageRef) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'network.yml');
  const peers = Array.from({ length: s.NETWORK_NODES }, (_, k) => ({
    name: `network-${k + 1}`,
    nodeKeyHex: '<per run>',
    ports: { rpc: 28545 + 10 * k, auth: 28551 + 10 * k, metrics: 26060 + 10 * k },
  }));
  const cpus = otherCpus(s);
  const netDir = path.join(dir, 'network'); // a run's is in its work folder
  writeNetworkFile(file, s, { client, dir: netDir, imageRef, cpus, nodePorts: { auth: 18551, metrics: 16060 }, peers });
  return file;
}

/** A shell word for printing: quoted when it has anything but plain characters. */
const word = (a) => (/^[A-Za-z0-9_\-.,:/=@+%<>]+$/.test(a) ? a : `'${String(a).replaceAll("'", "'\\''")}'`);

function scenarioLines(s, sources) {
  const red = redactScenario(s);
  const width = Math.max(...Object.keys(red).map((k) => k.length));
  return Object.entries(red).map(
    ([k, v]) =>
      `${k.padEnd(width)} = ${v === null ? '' : v}${sources[k] && sources[k] !== 'default' ? `   # ${sources[k]}` : ''}`,
  );
}

function hostLines(s) {
  const client = clients[s.CLIENT];
  const bin = client.binaryPath ? client.binaryPath(s) : s.CLIENT_BIN || s.CLIENT;
  const cmd = client.command(s, {
    dataDir: path.join(WORK_DIR, 'node-data'),
    ports: HOST_PORTS,
    ...preparedStandIn(s, client, WORK_DIR),
  });
  return [
    `# node: ${s.CLIENT} (${client.kind}), host runtime, pinned to cpus ${cpuList(0, s.CORES)}; ports are free ones chosen at start`,
    [bin, ...cmd.args].map(word).join(' '),
    `# JSON-RPC ${cmd.rpcUrl}${cmd.wsUrl ? `, WebSocket ${cmd.wsUrl}` : ''}, metrics ${cmd.metrics ? `http://${cmd.metrics.target}${cmd.metrics.path} (scraped by a Prometheus beside it)` : 'none'}`,
  ];
}

/** The image each service would use: named, here already, or what a run would pull or build. */
async function plannedImages(s, engine) {
  const out = {};
  const here = async (ref) => Boolean(engine && ref && (await docker.inspectImage(ref)));
  for (const [service, spec] of Object.entries(imageSpecs(s))) {
    const named = s[`${service.toUpperCase()}_IMAGE`];
    if (named) out[service] = { ref: named, what: 'named by the scenario' };
    else if (await here(spec.upstream)) out[service] = { ref: spec.upstream, what: 'upstream, here' };
    else if (await here(spec.local)) out[service] = { ref: spec.local, what: 'built locally earlier' };
    else if (spec.local)
      out[service] = {
        ref: spec.upstream,
        what: `upstream, pulled at start, else ${spec.local} built locally from package sources`,
      };
    else
      out[service] = {
        ref: spec.upstream,
        what: `upstream, pulled at start; it cannot be built from package sources${spec.optional ? ', skipped when missing' : ''}`,
      };
  }
  return out;
}

async function composeLines(s) {
  const images = await plannedImages(s, docker.engineVersionSync());
  const lines = ['# images', ...Object.entries(images).map(([service, i]) => `${service}: ${i.ref} (${i.what})`)];
  const c = docker.findCompose();
  if (!c)
    throw new Error(
      'rendering the compose configuration needs Docker Compose: neither `docker compose` (v2) nor `docker-compose` (v1) is installed',
    );
  const client = clients[s.CLIENT];
  const dir = path.join(os.tmpdir(), 'chainperf-config');
  let prepared = preparedStandIn(s, client, dir);
  const networkFile = s.NETWORK_NODES > 0 ? standInNetwork(s, client, dir, images.node.ref) : null;
  if (networkFile)
    prepared = { ...prepared, network: { nodeKeyHex: '<per run>', jwtFile: '/chainperf-network/jwt.hex' } };
  const grafana = Boolean(images.grafana);
  const env = composeEnv(s, {
    images,
    ports: { ...COMPOSE_PORTS, grafana: s.GRAFANA_PORT || COMPOSE_PORTS.grafana },
    nodeCpus: cpuList(0, s.CORES),
    promConfig: path.join(dir, 'prometheus.yml'),
    promRules: path.join(dir, 'prometheus-rules.yml'),
    grafanaPassword: '<random per run>',
    prepared,
  });
  const fleetFile = networkFile && s.BALANCER === 'haproxy' ? await standInFleet(s, client, dir, images) : null;
  const extraFiles = [networkFile, fleetFile].filter(Boolean);
  const files = composeFiles(s, { grafana, chainSpecFile: chainSpecFileOf(s, prepared), extraFiles });
  const project = projectName('config');
  const r = await docker.compose(
    [
      '-p',
      project,
      '--project-directory',
      path.join(__dirname, '..', 'compose'),
      ...files.flatMap((f) => ['-f', f]),
      'config',
    ],
    { env },
  );
  if (r.code !== 0) throw new Error(`${c.argv.join(' ')} config exited with status ${r.code}: ${r.out.trim()}`);
  return [
    ...lines,
    `# node command (from the ${s.CLIENT} client module, NODE_COMMAND)`,
    env.NODE_COMMAND,
    `# Prometheus configuration (it scrapes the node's metrics at :${client.compose.metrics.port}${client.compose.metrics.path} and cAdvisor's)`,
    prometheusConfig(s, '<run id>').trimEnd(),
    "# Prometheus recording rules (the client's metrics under the names the Grafana dashboard queries)",
    rulesFile(client).trimEnd(),
    `# compose configuration, rendered by ${c.argv.join(' ')} ${c.version} (host ports are free ones chosen at start)`,
    r.out.trimEnd(),
  ];
}

/**
 * @param {string[]} args [scenario file]
 * @param {{env?: object, write?: (text: string) => void}} [opts]
 * @returns {Promise<number>} exit status: 0, or 2 for an invalid scenario
 */
async function configCommand(args, { env = process.env, write = (t) => process.stdout.write(t) } = {}) {
  const { scenario: s, sources, errors, derived } = resolveScenario(args[0], { env });
  if (errors.length) {
    process.stderr.write(`chainperf: the scenario is not valid.\n${errors.map((e) => `  ${e}`).join('\n')}\n`);
    return 2;
  }
  // first, what chainperf chose that the scenario did not say (src/scenario/companions.js)
  const out = [...derived.map((d) => `# ${derivedLine(d)}`), '# scenario, resolved (secrets redacted)'];
  out.push(...scenarioLines(s, sources), '');
  if (clients[s.CLIENT].warning) out.push(`# ${clients[s.CLIENT].warning}`);
  // What each runtime would start; the compose configuration, rendered, comes last.
  const describe = {
    host: hostLines,
    compose: composeLines,
    attach: (x) => [`# RUNTIME=attach: nothing is started; the node at ${redactScenario(x).RPC_URL} is measured`],
  }[s.RUNTIME];
  out.push(...(describe ? await describe(s) : [`# RUNTIME=${s.RUNTIME}: ${runtimes[s.RUNTIME].summary}`]));
  write(`${out.join('\n')}\n`);
  return 0;
}

module.exports = { configCommand };
