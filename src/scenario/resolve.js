'use strict';
// Resolves a scenario: built-in defaults, then the chain's and the client's
// defaults, then the .env file, then environment variables named like keys;
// then the companions those values need and the scenario leaves unset.
// Every problem is collected so the user sees them all at once.

const os = require('node:os');
const path = require('node:path');
const { KEYS } = require('./keys');
const { parseEnvFile } = require('./parse');
const chains = require('../chains');
const clients = require('../clients');
const { redactUrl, REDACTED } = require('../util/scrub');
const { limitProblems, probeKernel, memoryWarning: limitWarning } = require('../runtime/limits');
const { capInstanceCores, memoryWarning } = require('./instances');
const { ROOT, WORKLOADS_DIR } = require('../util/paths');
const { listWorkloads } = require('./values');
const { builtInDefaults, chooseRuntime, defaultLayers, rawSettings, typedSettings } = require('./defaults');
const { crossCheck } = require('./checks');
const { networkDefaults, networkWarning, faultWarning } = require('./network-checks');
const { deriveCompanions, derivedLine } = require('./companions');
const { chainLoadDefaults } = require('./chain-load-checks');

/**
 * @param {string} file scenario path
 * @param {{env?: object, cpuCount?: number}} [opts]
 * @returns {{scenario: object|null, sources: object, errors: string[], warnings: string[], derived: object[]}} derived:
 *   the companions chosen (src/scenario/companions.js), in order
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
  chooseRuntime(values, sources, client, opts);
  // Companions the scenario leaves unset that its values need (REPLICAS=3: a network), then the defaults that follow.
  const derived = deriveCompanions(values, sources, given);
  chainLoadDefaults(values, sources, given, { file, errors }); // CHAIN_LOAD's slot and file, before NETWORK_TPS's
  networkDefaults(values, sources);
  const warnings = [
    capInstanceCores(values, sources, cpuCount),
    memoryWarning(values, sources, opts.totalMemoryBytes),
    networkWarning(values, sources, given),
    faultWarning(values),
  ].filter(Boolean);
  if (!values.NAME) values.NAME = path.basename(file).replace(/\.env$/, '');
  crossCheck(values, sources, given, { chain, client, cpuCount }, errors);
  // Limits the kernel here cannot enforce are refused (opts.kernel: a probe's result, for tests).
  errors.push(
    ...limitProblems(values, opts.kernel || probeKernel(), (key) => (given[key] ? given[key].where : 'default')),
  );
  if (limitWarning(values)) warnings.push(limitWarning(values));
  return { scenario: errors.length ? null : values, sources, errors, warnings, derived };
}

/** A secret key's value as reports show it: a URL's secret parts replaced, any other value whole. */
function storedSecret(spec, value) {
  if (spec.type === 'url') return redactUrl(value);
  if (spec.type === 'urls')
    return String(value)
      .split(',')
      .map((u) => redactUrl(u))
      .join(',');
  return REDACTED;
}

/** The scenario as stored in reports: secrets in URLs replaced. */
function redactScenario(values) {
  const out = {};
  for (const [key, value] of Object.entries(values)) {
    const spec = KEYS[key];
    out[key] = spec && spec.secret && value ? storedSecret(spec, value) : value;
  }
  return out;
}

module.exports = { resolveScenario, redactScenario, redactUrl, derivedLine, listWorkloads, WORKLOADS_DIR, ROOT };
