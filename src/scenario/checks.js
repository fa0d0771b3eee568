'use strict';
// Rules between a resolved scenario's keys: what one key's value means for
// another, for the chain and client chosen, for the runtime chosen. Every
// problem is collected, with the file and line (or 'default') that set it.

const { closest } = require('../util/strings');
const chains = require('../chains');
const clients = require('../clients');
const { folderNameProblem, isInside, reportsDirProblem } = require('./paths');
const { clientChecks } = require('./client-checks');
const { PROFILES: GETH_PROFILES } = require('../state/profiles');
const { WRITER_GETH } = require('../state/writer');
const runtimes = require('../runtime');
const { safetyChecks } = require('./safety-checks');
const { networkChecks, fleetChecks } = require('./network-checks');
const { isDerived } = require('./companions');
const { WORKLOADS_DIR } = require('../util/paths');
const {
  generatorsChecks,
  loopChecks,
  replayChecks,
  senderChecks,
  shapeChecks,
  writeChecks,
} = require('./workload-checks');

/**
 * The runtime's own checks (its checkScenario hook); the keys another runtime owns are refused, as they would do
 * nothing.
 */
function runtimeChecks(v, ctx, errors) {
  const owners = {};
  for (const r of Object.values(runtimes))
    for (const key of r.ownKeys || []) (owners[key] = owners[key] || []).push(r.name);
  for (const [key, names] of Object.entries(owners))
    if (ctx.given[key] && !names.includes(v.RUNTIME))
      errors.push(`${ctx.at(key)}: ${key} is only used with RUNTIME=${names.join(' or ')} (RUNTIME is ${v.RUNTIME})`);
  const own = runtimes[v.RUNTIME];
  if (own && own.checkScenario) own.checkScenario(v, ctx, errors);
}

/** Rules between keys: what one key's value means for another. */
function crossCheck(v, sources, given, { chain, client, cpuCount }, errors) {
  // where a key's value came from: its file line or environment variable, the companion rule that chose it, a default
  const at = (key) => (given[key] ? given[key].where : isDerived(sources, key) ? sources[key] : 'default');
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
  generatorsChecks(v, at, errors);
  senderChecks(v, at, errors);
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
  runtimeChecks(v, { sources, given, client, at }, errors);
  networkChecks(v, { client, given, at }, errors);
  fleetChecks(v, { given, at }, errors);
  safetyChecks(v, { chain, at, workloadsDir: WORKLOADS_DIR }, errors);
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

/** Why a profile that only statewriter builds (xlarge) cannot be built for the scenario's client, or null. */
function writerOnlyProblem(v) {
  const profile = GETH_PROFILES[v.STATE];
  if (!profile || !profile.writer_only) return null;
  const version = v.CLIENT_VERSION || (clients.geth && clients.geth.defaults.CLIENT_VERSION);
  if (v.CLIENT === 'geth' && version === WRITER_GETH) return null;
  if (v.CLIENT !== 'geth') return `STATE=${v.STATE} is built for geth ${WRITER_GETH} alone (CLIENT is ${v.CLIENT})`;
  return `STATE=${v.STATE} is built by statewriter alone, for geth ${WRITER_GETH} (CLIENT_VERSION=${WRITER_GETH}); for geth ${version} the build through the node would take days`;
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
    const problem = writerOnlyProblem(v);
    if (problem) errors.push(`${at('STATE')}: ${problem}`);
  } else if (given.STATE_DISTRIBUTION) {
    errors.push(
      `${at('STATE_DISTRIBUTION')}: STATE_DISTRIBUTION draws across a STATE profile's state: set STATE=small, medium, large or xlarge`,
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

module.exports = { crossCheck, reportFolderChecks, stateChecks, familyChecks };
