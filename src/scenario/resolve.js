'use strict';
// Resolves a scenario: built-in defaults, then the chain's and the client's
// defaults, then the .env file, then environment variables named like keys.
// Every problem is collected so the user sees them all at once.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KEYS } = require('./keys');
const { parseEnvFile } = require('./parse');
const { closest } = require('../util/strings');
const chains = require('../chains');
const clients = require('../clients');
const { engineVersionSync } = require('../platform/docker');
const { addSecretValue, redactUrl, REDACTED } = require('../util/scrub');
const { folderNameProblem, isInside, reportsDirProblem } = require('./paths');
const net = require('node:net');
const { clientChecks } = require('./client-checks');
const { safetyChecks } = require('./safety-checks');
const { replayMix } = require('../workload/replay');
const yaml = require('js-yaml');
const { limitProblems, probeKernel, memoryWarning: limitWarning } = require('../runtime/limits');
const { readInstance, capInstanceCores, memoryWarning } = require('./instances');

const { ROOT, WORKLOADS_DIR } = require('../util/paths');

function convertNumber(spec, raw) {
  const ok = spec.type === 'int' ? /^-?\d+$/.test(raw) : /^-?(\d+\.?\d*|\.\d+)$/.test(raw);
  const n = Number(raw);
  if (!ok || n < spec.min || n > spec.max)
    return {
      error: `expected ${spec.type === 'int' ? 'an integer' : 'a number'} from ${spec.min} to ${spec.max}, got "${raw}"`,
    };
  return { value: n };
}

function convertEnum(spec, raw) {
  if (!spec.values.includes(raw)) {
    const near = closest(raw, spec.values);
    return {
      error: `expected one of ${spec.values.join(' | ')}, got "${raw}"${near ? ` (did you mean ${near}?)` : ''}`,
    };
  }
  return { value: raw };
}

function convertUrl(spec, raw) {
  const schemes = spec.schemes || ['http', 'https'];
  try {
    const u = new URL(raw);
    if (!schemes.includes(u.protocol.slice(0, -1))) throw new Error('scheme');
  } catch {
    return {
      error: `expected ${schemes
        .map((x) => `${x}://`)
        .join(', ')
        .replace(/, ([^,]*)$/, ' or $1')} URL, got "${raw}"`,
    };
  }
  return { value: raw };
}

/** One converter per key type: (spec, raw) -> {value} or {error}. */
const CONVERTERS = {
  int: convertNumber,
  number: convertNumber,
  enum: convertEnum,
  bool: (_spec, raw) =>
    ['true', 'false', '1', '0'].includes(raw)
      ? { value: raw === 'true' || raw === '1' }
      : { error: `expected true or false, got "${raw}"` },
  version: (_spec, raw) =>
    /^\d+\.\d+\.\d+$/.test(raw) ? { value: raw } : { error: `expected a version like 1.16.7, got "${raw}"` },
  url: convertUrl,
  workload: (_spec, raw) => checkWorkload(raw),
  // IPv4 only: compose's short port syntax and the URLs built from it take no bare IPv6 address.
  ip: (_spec, raw) =>
    net.isIPv4(raw) ? { value: raw } : { error: `expected an IPv4 address such as 127.0.0.1 or 0.0.0.0, got "${raw}"` },
  name: (_spec, raw) =>
    /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(raw)
      ? { value: raw }
      : { error: `expected a Docker volume name (letters, digits, _ . -), got "${raw}"` },
};

/** Converts a raw string to the key's type; returns {value} or {error: what is allowed}. */
function convert(key, raw) {
  const spec = KEYS[key];
  const converter = CONVERTERS[spec.type];
  return converter ? converter(spec, raw) : { value: raw };
}

function checkWorkload(raw) {
  if (raw.startsWith('replay:')) {
    const file = raw.slice('replay:'.length);
    if (!file) return { error: 'expected replay:<capture file>, e.g. replay:captures/mainnet.jsonl' };
    if (!fs.existsSync(file)) return { error: `replay: no such capture file: ${file}` };
    try {
      replayMix(file);
    } catch (err) {
      return { error: `replay: ${file} is not a capture of ./run.sh record: ${err.message.replace(`${file}: `, '')}` };
    }
    return { value: raw };
  }
  if (raw.startsWith('method:')) {
    const method = raw.slice('method:'.length);
    if (!method) return { error: 'expected method:<rpc method>, e.g. method:eth_getBalance' };
    return { value: raw, method };
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(raw)) return { error: `expected a workload name or method:<rpc method>, got "${raw}"` };
  if (!fs.existsSync(path.join(WORKLOADS_DIR, `${raw}.yml`))) {
    const names = listWorkloads();
    const near = closest(raw, names);
    return {
      error: `no workload "${raw}" in workloads/ (shipped: ${names.join(', ')})${near ? `; did you mean ${near}?` : ''}`,
    };
  }
  return { value: raw };
}

function listWorkloads() {
  return fs
    .readdirSync(WORKLOADS_DIR)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => f.slice(0, -4))
    .sort();
}

/** The file's settings and the environment's keys, raw: key -> {value, where}; unknown and doubled keys are errors. */
function rawSettings(file, settings, env, errors) {
  const raw = {};
  const seen = new Map();
  for (const s of settings) {
    const where = `${file}:${s.line}`;
    if (!KEYS[s.key]) {
      const near = closest(s.key, Object.keys(KEYS));
      errors.push(`${where}: unknown key ${s.key}${near ? ` (did you mean ${near}?)` : ''}`);
      continue;
    }
    if (seen.has(s.key)) errors.push(`${where}: ${s.key} is set twice (first on line ${seen.get(s.key)})`);
    seen.set(s.key, s.line);
    raw[s.key] = { value: s.value, where };
  }
  for (const key of Object.keys(KEYS)) {
    if (env[key] !== undefined) raw[key] = { value: env[key], where: `environment ${key}` };
  }
  // Secrets are known to the output boundary before any message could show them.
  for (const s of settings) addSecretValue(KEYS[s.key], s.value);
  for (const [key, { value }] of Object.entries(raw)) addSecretValue(KEYS[key], value);
  return raw;
}

/** Typed values from the file and the environment; an empty value means "default". */
function typedSettings(raw, errors) {
  const given = {};
  for (const [key, { value, where }] of Object.entries(raw)) {
    if (value === '') continue;
    const r = convert(key, value);
    if (r.error) errors.push(`${where}: ${key}: ${r.error}`);
    else given[key] = { value: r.value, where };
  }
  return given;
}

function builtInDefaults() {
  const values = {};
  const sources = {};
  for (const [key, spec] of Object.entries(KEYS)) {
    values[key] = typeof spec.default === 'function' ? spec.default() : spec.default;
    sources[key] = 'default';
  }
  return { values, sources };
}

/**
 * The layers between the built-in defaults and the file: the chain's and the client's defaults, then an instance
 * profile.
 */
function defaultLayers(values, sources, given, { chain, client }, errors) {
  // Chain and client defaults sit between built-ins and the file.
  for (const [layer, defaults] of [
    ['chain', chain.defaults],
    ['client', client.defaults],
  ]) {
    for (const [key, value] of Object.entries(defaults)) {
      values[key] = value;
      sources[key] = `${layer} default`;
    }
  }
  // An instance profile (INSTANCE=<name>: instances/<name>.env) sits between those defaults and the file.
  if (given.INSTANCE) {
    const inst = readInstance(given.INSTANCE.value);
    errors.push(
      ...inst.errors.map((e) => (e.startsWith('no instance') ? `${given.INSTANCE.where}: INSTANCE: ${e}` : e)),
    );
    for (const x of inst.settings) {
      const r = convert(x.key, x.value);
      if (r.error) errors.push(`${x.where}: ${x.key}: ${r.error}`);
      values[x.key] = r.value;
      sources[x.key] = x.where;
    }
  }
}

/** RUNTIME=auto: compose where a Docker engine answers and the client has a compose service; the host otherwise. */
function chooseRuntime(values, sources, client, opts) {
  if (values.RUNTIME !== 'auto') return;
  const engine = client.compose ? (opts.dockerEngine !== undefined ? opts.dockerEngine : engineVersionSync()) : null;
  values.RUNTIME = engine ? 'compose' : 'host';
  const why = !client.compose
    ? `CLIENT=${values.CLIENT} has no compose service`
    : engine
      ? `a Docker engine ${engine} answers`
      : 'no Docker engine answers';
  sources.RUNTIME = `${sources.RUNTIME || 'default'} (auto: ${why})`;
}

/**
 * @param {string} file scenario path
 * @param {{env?: object, cpuCount?: number}} [opts]
 * @returns {{scenario: object|null, sources: object, errors: string[]}}
 */
function resolveScenario(file, opts = {}) {
  const env = opts.env || process.env;
  const cpuCount = opts.cpuCount || os.cpus().length;
  const { settings, errors } = parseEnvFile(file);
  const raw = rawSettings(file, settings, env, errors);
  const given = typedSettings(raw, errors);
  const { values, sources } = builtInDefaults();
  const chain = chains[(given.CHAIN || {}).value || values.CHAIN];
  const client = clients[(given.CLIENT || {}).value || chain.defaults.CLIENT || values.CLIENT];
  defaultLayers(values, sources, given, { chain, client }, errors);
  for (const [key, { value, where }] of Object.entries(given)) {
    values[key] = value;
    sources[key] = where;
  }
  const warnings = [
    capInstanceCores(values, sources, cpuCount),
    memoryWarning(values, sources, opts.totalMemoryBytes),
  ].filter(Boolean);
  if (!values.NAME) values.NAME = path.basename(file).replace(/\.env$/, '');
  chooseRuntime(values, sources, client, opts);
  crossCheck(values, sources, given, { chain, client, cpuCount }, errors);
  // Limits the kernel here cannot enforce are refused (opts.kernel: a probe's result, for tests).
  errors.push(
    ...limitProblems(values, opts.kernel || probeKernel(), (key) => (given[key] ? given[key].where : 'default')),
  );
  if (limitWarning(values)) warnings.push(limitWarning(values));
  return { scenario: errors.length ? null : values, sources, errors, warnings };
}

const COMPOSE_ONLY = [
  'KEEP',
  'NODE_VOLUME',
  'SNAPSHOT',
  'BIND_ADDR',
  'STACK_TIMEOUT_S',
  'GRAFANA',
  'GRAFANA_PORT',
  'COMPOSE_FILES',
  'NODE_IMAGE',
  'PROMETHEUS_IMAGE',
  'CADVISOR_IMAGE',
  'GRAFANA_IMAGE',
];

/** Rules between keys: what one key's value means for another. */
function crossCheck(v, sources, given, { chain, client, cpuCount }, errors) {
  const at = (key) => (given[key] ? given[key].where : 'default');
  if (!client.chains.includes(v.CHAIN)) {
    errors.push(`${at('CLIENT')}: CLIENT: ${v.CLIENT} does not serve CHAIN=${v.CHAIN}`);
  }
  familyChecks(v, given, { chain, client, at }, errors);
  clientChecks(v, given, { chain, client, at }, errors);
  if (v.RUNTIME !== 'attach' && v.CORES > cpuCount) {
    errors.push(`${at('CORES')}: CORES: ${v.CORES} cores asked but this machine has ${cpuCount}`);
  }
  loopChecks(v, sources, given, at, errors);
  shapeChecks(v, at, errors);
  replayChecks(v, at, errors);
  if (v.SATURATE === 'yes' && v.REPEAT > 1) {
    errors.push(
      `${at('REPEAT')}: REPEAT: a saturation search (SATURATE=yes) measures one window per step; set REPEAT=1`,
    );
  }
  reportFolderChecks(v, at, errors);
  stateChecks(v, given, at, errors);
  const method = v.WORKLOAD && v.WORKLOAD.startsWith('method:') ? v.WORKLOAD.slice(7) : null;
  if (method && !chain.methods.includes(method)) {
    const near = closest(method, chain.methods);
    errors.push(
      `${at('WORKLOAD')}: WORKLOAD: ${method} is not a method chainperf can parameterize on ${v.CHAIN}${near ? ` (did you mean method:${near}?)` : ''}; known: ${chain.methods.join(', ')}`,
    );
  }
  attachChecks(v, sources, given, at, errors);
  safetyChecks(v, { chain, at, workloadsDir: WORKLOADS_DIR }, errors);
  composeChecks(v, given, client, at, errors);
  writeChecks(v, at, errors); // after TRANSPORT has followed an attached RPC_URL
}

/** RATE (open loop) or CONCURRENCY (closed loop): one of them, the environment's over the file's. */
function loopChecks(v, sources, given, at, errors) {
  if (!given.RATE || !given.CONCURRENCY) return;
  const fromEnv = (key) => given[key].where.startsWith('environment');
  if (fromEnv('RATE') === fromEnv('CONCURRENCY')) {
    errors.push(
      `${at('RATE')}: RATE and CONCURRENCY are both set (${at('CONCURRENCY')}): set RATE for an open loop or CONCURRENCY for a closed loop, not both`,
    );
  } else if (fromEnv('RATE')) {
    // The environment chose the open loop over the file's closed loop.
    v.CONCURRENCY = KEYS.CONCURRENCY.default;
    sources.CONCURRENCY = `default (RATE from the environment replaces ${given.CONCURRENCY.where})`;
  } else {
    v.RATE = null;
    sources.RATE = `default (CONCURRENCY from the environment replaces ${given.RATE.where})`;
  }
}

/** NAME and REPORTS_DIR make a report folder inside REPORTS_DIR. */
function reportFolderChecks(v, at, errors) {
  const nameProblem = folderNameProblem(v.NAME);
  if (nameProblem) errors.push(`${at('NAME')}: NAME: ${nameProblem}`);
  else if (!isInside(v.REPORTS_DIR, v.NAME)) errors.push(`${at('NAME')}: NAME: "${v.NAME}" leads out of REPORTS_DIR`);
  const dirProblem = reportsDirProblem(v.REPORTS_DIR);
  if (dirProblem) errors.push(`${at('REPORTS_DIR')}: REPORTS_DIR: ${dirProblem}`);
}

/**
 * A STATE profile: a client that builds one (its stateRuntimes), a node chainperf starts, no NODE_VOLUME;
 * STATE_DISTRIBUTION only with one.
 */
function stateChecks(v, given, at, errors) {
  if (v.STATE !== 'dev') {
    const client = clients[v.CLIENT];
    const runtimes = (client && client.stateRuntimes) || [];
    const builders = Object.values(clients)
      .filter((c) => c.stateRuntimes)
      .map((c) => c.name);
    if (!runtimes.length)
      errors.push(`${at('STATE')}: STATE=${v.STATE} is built for ${builders.join(' and ')} (CLIENT is ${v.CLIENT})`);
    else if (!runtimes.includes(v.RUNTIME))
      errors.push(
        `${at('STATE')}: STATE=${v.STATE} is restored into a node chainperf starts: with ${v.CLIENT}, RUNTIME=${runtimes.join(' or ')} (RUNTIME is ${v.RUNTIME})`,
      );
    if (v.NODE_VOLUME)
      errors.push(`${at('NODE_VOLUME')}: NODE_VOLUME and STATE=${v.STATE} both give the node its data: set one`);
  } else if (given.STATE_DISTRIBUTION) {
    errors.push(
      `${at('STATE_DISTRIBUTION')}: STATE_DISTRIBUTION draws across a STATE profile's state: set STATE=small, medium or large`,
    );
  }
}

/** RUNTIME=attach needs RPC_URL and a CPU source; its keys mean nothing with another runtime. */
function attachChecks(v, sources, given, at, errors) {
  if (v.RUNTIME !== 'attach') {
    for (const key of ['RPC_URL', 'METRICS_URL', 'NODE_PID']) {
      if (given[key]) errors.push(`${at(key)}: ${key} is only used with RUNTIME=attach (RUNTIME is ${v.RUNTIME})`);
    }
    return;
  }
  if (!v.RPC_URL) errors.push(`${at('RUNTIME')}: RUNTIME=attach needs RPC_URL, the node's JSON-RPC endpoint`);
  else checkTransport(v, sources, given, at, errors);
  const cpu = v.CPU_SOURCE;
  if (cpu === 'cgroup')
    errors.push(`${at('CPU_SOURCE')}: CPU_SOURCE=cgroup needs RUNTIME=host (attach reads a PID or a metrics endpoint)`);
  if (cpu === 'pid' && !v.NODE_PID) errors.push(`${at('CPU_SOURCE')}: CPU_SOURCE=pid needs NODE_PID`);
  if (v.NODE_PROFILE === 'cpu' && !v.NODE_PID)
    errors.push(
      `${at('NODE_PROFILE')}: NODE_PROFILE=cpu with RUNTIME=attach needs NODE_PID, the node's process on this host, for perf to profile`,
    );
  if ((cpu === 'metrics' || (cpu === 'auto' && !v.NODE_PID)) && !v.METRICS_URL) {
    errors.push(
      `${at('RUNTIME')}: RUNTIME=attach needs a CPU source: NODE_PID (a process on this host) or METRICS_URL (the node's metrics endpoint)`,
    );
  }
}

/**
 * RUNTIME=compose: windows long enough for cAdvisor, a compose service, files that exist; its keys mean nothing
 * elsewhere.
 */
function composeChecks(v, given, client, at, errors) {
  if (v.RUNTIME !== 'compose') {
    for (const key of COMPOSE_ONLY) {
      if (given[key]) errors.push(`${at(key)}: ${key} is only used with RUNTIME=compose (RUNTIME is ${v.RUNTIME})`);
    }
    return;
  }
  // cAdvisor samples every 1 to 2 s: a window needs room for two samples inside it.
  for (const [key, min] of [
    ['DURATION_S', 5],
    ['SATURATE_STEP_S', 5],
    ['PROFILE_DURATION_S', 5],
    ['IDLE_S', 4],
  ]) {
    if (v[key] > 0 && v[key] < min)
      errors.push(
        `${at(key)}: ${key}: at least ${min} s with RUNTIME=compose (cAdvisor samples every 1 to 2 s and a window needs two samples inside it)${key === 'IDLE_S' ? ', or 0 for no idle baseline' : ''}`,
      );
  }
  if (!client.compose)
    errors.push(`${at('RUNTIME')}: RUNTIME=compose: CLIENT=${v.CLIENT} has no compose service; use RUNTIME=host`);
  if (v.SNAPSHOT && !v.NODE_VOLUME)
    errors.push(`${at('SNAPSHOT')}: SNAPSHOT is unpacked into NODE_VOLUME: set NODE_VOLUME too`);
  if (v.SNAPSHOT && !fs.existsSync(v.SNAPSHOT)) errors.push(`${at('SNAPSHOT')}: SNAPSHOT: no such file: ${v.SNAPSHOT}`);
  for (const f of v.COMPOSE_FILES ? v.COMPOSE_FILES.split(',') : []) {
    if (!fs.existsSync(f.trim())) errors.push(`${at('COMPOSE_FILES')}: COMPOSE_FILES: no such file: ${f.trim()}`);
  }
}

/**
 * The write workloads (mix entries tx.*) sign in a closed loop through ethers; the subscription workloads (sub.*) hold
 * WebSocket subscriptions.
 */
function writeChecks(v, at, errors) {
  if (!v.WORKLOAD || v.WORKLOAD.includes(':')) return;
  let mix = {};
  try {
    mix = (yaml.load(fs.readFileSync(path.join(WORKLOADS_DIR, `${v.WORKLOAD}.yml`), 'utf8')) || {}).mix || {};
  } catch {
    return; // the workload's own check names the problem
  }
  if (Object.keys(mix).some((m) => m.startsWith('sub.'))) {
    if (v.TRANSPORT !== 'ws')
      errors.push(
        `${at('TRANSPORT')}: TRANSPORT=${v.TRANSPORT}: WORKLOAD=${v.WORKLOAD} holds eth_subscribe subscriptions over WebSocket; set TRANSPORT=ws`,
      );
    if (v.RATE || v.GENERATOR !== 'ethers')
      errors.push(
        `${at('WORKLOAD')}: WORKLOAD=${v.WORKLOAD}: each of CONCURRENCY users holds a subscription (a closed loop with GENERATOR=ethers); leave RATE and GENERATOR unset`,
      );
  }
  if (!Object.keys(mix).some((m) => m.startsWith('tx.'))) return;
  if (v.CHAIN !== 'ethereum')
    errors.push(`${at('WORKLOAD')}: WORKLOAD=${v.WORKLOAD} sends Ethereum transactions; CHAIN is ${v.CHAIN}`);
  if (v.RATE)
    errors.push(
      `${at('RATE')}: RATE: WORKLOAD=${v.WORKLOAD} gives each of CONCURRENCY users its own account and waits for inclusion (a closed loop); set CONCURRENCY, not RATE`,
    );
  if (v.GENERATOR !== 'ethers')
    errors.push(
      `${at('GENERATOR')}: GENERATOR=${v.GENERATOR}: WORKLOAD=${v.WORKLOAD} signs through ethers; leave GENERATOR=ethers`,
    );
  if (v.PROFILE === 'methods' || v.SATURATE === 'yes')
    errors.push(`${at('WORKLOAD')}: WORKLOAD=${v.WORKLOAD}: PROFILE=methods and SATURATE=yes measure read mixes`);
}

/** A replay brings its own timing and parameters. */
function replayChecks(v, at, errors) {
  if (!v.WORKLOAD || !v.WORKLOAD.startsWith('replay:')) return;
  if (v.CHAIN !== 'ethereum')
    errors.push(`${at('WORKLOAD')}: WORKLOAD=replay: replays Ethereum JSON-RPC captures; CHAIN is ${v.CHAIN}`);
  if (v.RATE)
    errors.push(
      `${at('RATE')}: RATE: a replay keeps the capture's timing (REPLAY_SPEED scales it; 0 is a closed loop of CONCURRENCY users); leave RATE unset`,
    );
  if (v.SATURATE === 'yes')
    errors.push(`${at('SATURATE')}: SATURATE=yes sets its own rates; it does not replay a capture`);
  if (v.PROFILE === 'methods')
    errors.push(`${at('PROFILE')}: PROFILE=methods measures the methods of a mix; a replay sends the capture as it is`);
}

/** SHAPE shapes an open loop's rate inside the window: it needs RATE, room in the window, and no saturation search. */
function shapeChecks(v, at, errors) {
  if (v.SHAPE === 'steady') return;
  if (!v.RATE) errors.push(`${at('SHAPE')}: SHAPE=${v.SHAPE} shapes an open loop's rate: set RATE (requests/s)`);
  if (v.SATURATE === 'yes')
    errors.push(
      `${at('SHAPE')}: SHAPE=${v.SHAPE}: a saturation search (SATURATE=yes) sets its own rates; leave SHAPE=steady`,
    );
  if (v.SHAPE === 'spike' && v.SPIKE_S >= v.DURATION_S)
    errors.push(
      `${at('SPIKE_S')}: SPIKE_S: the spike (${v.SPIKE_S} s) must be shorter than the window (DURATION_S=${v.DURATION_S})`,
    );
  if (v.SHAPE === 'step' && v.DURATION_S < v.SHAPE_STEPS)
    errors.push(
      `${at('SHAPE_STEPS')}: SHAPE_STEPS: ${v.SHAPE_STEPS} steps need DURATION_S of at least ${v.SHAPE_STEPS} s`,
    );
}

/** In attach, RPC_URL's scheme is the transport: TRANSPORT follows it, or must agree with it. */
function checkTransport(v, sources, given, at, errors) {
  const scheme = v.RPC_URL.slice(0, v.RPC_URL.indexOf(':')).toLowerCase();
  const urlTransport = scheme === 'ws' || scheme === 'wss' ? 'ws' : 'http';
  if (!given.TRANSPORT) {
    v.TRANSPORT = urlTransport;
    sources.TRANSPORT = `RPC_URL (${scheme}://, ${at('RPC_URL')})`;
  } else if (v.TRANSPORT !== urlTransport) {
    const want = v.TRANSPORT === 'ws' ? 'a ws:// or wss://' : 'an http:// or https://';
    errors.push(
      `${at('TRANSPORT')}: TRANSPORT=${v.TRANSPORT} contradicts RPC_URL (${scheme}://, ${at('RPC_URL')}): with RUNTIME=attach the transport is RPC_URL's; give ${want} RPC_URL, or leave TRANSPORT unset`,
    );
  }
}

/**
 * What the chain family means for the other keys, through its hooks: keys
 * another family owns are refused (CHAIN_SPEC on an EVM chain), then the
 * family's own checks (chain.checkScenario).
 */
function familyChecks(v, given, { chain, client, at }, errors) {
  if (client.dbEngines && !client.dbEngines.includes(v.DB_ENGINE)) {
    errors.push(`${at('DB_ENGINE')}: DB_ENGINE: ${v.CLIENT} takes ${client.dbEngines.join(' | ')}, not ${v.DB_ENGINE}`);
  }
  const mine = chain.ownKeys || [];
  const owner = {}; // key -> the family that owns it (several chains share a family)
  for (const other of Object.values(chains)) {
    for (const key of other.ownKeys || []) if (!mine.includes(key)) owner[key] = other.familyLabel || other.name;
  }
  for (const [key, label] of Object.entries(owner)) {
    if (given[key]) errors.push(`${at(key)}: ${key} is only used with ${label} chains (CHAIN is ${v.CHAIN})`);
  }
  if (chain.checkScenario) chain.checkScenario(v, { client, at }, errors);
}

/** The scenario as stored in reports: secrets in URLs replaced. */
function redactScenario(values) {
  const out = {};
  for (const [key, value] of Object.entries(values)) {
    const spec = KEYS[key];
    out[key] = spec && spec.secret && value ? (spec.type === 'url' ? redactUrl(value) : REDACTED) : value;
  }
  return out;
}

module.exports = { resolveScenario, redactScenario, redactUrl, listWorkloads, WORKLOADS_DIR, ROOT };
