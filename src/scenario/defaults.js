'use strict';
// The layers a scenario's values come from, lowest first: chainperf's built-in
// defaults, the chain's and the client's, an instance profile, the .env file,
// the environment; and RUNTIME=auto decided.

const { KEYS } = require('./keys');
const { closest } = require('../util/strings');
const { engineVersionSync } = require('../platform/docker');
const { addSecretValue } = require('../util/scrub');
const { readInstance } = require('./instances');
const { convert } = require('./values');

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

module.exports = { rawSettings, typedSettings, builtInDefaults, defaultLayers, chooseRuntime };
