'use strict';
// Rules between a resolved scenario's keys: what one key's value means for
// another, for the chain and client chosen, for the runtime chosen. Every
// problem is collected, with the file and line (or 'default') that set it.

const fs = require('node:fs');
const { closest } = require('../util/strings');
const chains = require('../chains');
const clients = require('../clients');
const { folderNameProblem, isInside, reportsDirProblem } = require('./paths');
const { clientChecks } = require('./client-checks');
const { safetyChecks } = require('./safety-checks');
const { WORKLOADS_DIR } = require('../util/paths');
const { loopChecks, replayChecks, shapeChecks, writeChecks } = require('./workload-checks');

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

module.exports = {
  COMPOSE_ONLY,
  crossCheck,
  reportFolderChecks,
  stateChecks,
  attachChecks,
  composeChecks,
  checkTransport,
  familyChecks,
};
