'use strict';
// A capacity run's input: the scenario (every key checked as for a run), its
// target, headroom, redundancy and bounds, the instance profiles to compare,
// the environment of each instance's saturation searches and of the
// verification fleet. Everything is checked before anything starts: a problem
// is named with its key and the run exits 2.

const fs = require('node:fs');
const path = require('node:path');
const { resolveScenario } = require('../scenario/resolve');
const { readInstance, listInstances, INSTANCES_DIR } = require('../scenario/instances');
const { convert } = require('../scenario/values');
const { KEYS } = require('../scenario/keys');
const { BOUNDS } = require('../verdict');
const { DEFAULT_BOUNDS } = require('../saturation');
const { verifyValues } = require('./verify');

/**
 * The bound keys a capacity run checks for contradictions: validate's, the saturation search's by name
 * (max_p99_ms -> MAX_P99_MS), and any MAX_<figure>_MS or _S key (a new bound comes along with its key).
 */
function boundKeys() {
  const named = Object.keys(DEFAULT_BOUNDS).map((b) => b.toUpperCase());
  const timed = Object.keys(KEYS).filter((k) => /^MAX_[A-Z0-9_]+_(MS|S)$/.test(k));
  return [...new Set([...BOUNDS.map((b) => b.key), ...named, ...timed])].filter((k) => KEYS[k]);
}

/** Bounds that can never hold with the target: one at or below 0 (an error rate may be 0), MIN_RPS above it. */
function boundProblems(s, where) {
  const errors = [];
  for (const key of boundKeys()) {
    const v = s[key];
    if (v === null || v === undefined || !key.startsWith('MAX_') || key === 'MAX_ERROR_RATE') continue;
    if (v <= 0) errors.push(`${where(key)}: ${key}=${v}: a bound at or below 0 can never hold; set it above 0`);
  }
  if (s.MIN_RPS !== null && s.TARGET_RPS > 0 && s.MIN_RPS > s.TARGET_RPS)
    errors.push(
      `${where('MIN_RPS')}: MIN_RPS=${s.MIN_RPS} is above TARGET_RPS=${s.TARGET_RPS}: a fleet serving the target answers at most the target; lower MIN_RPS or raise TARGET_RPS`,
    );
  return errors;
}

/** One profile's values (CORES, MEMORY_MB, the DISK_* limits, HOURLY_PRICE) converted, or the problems. */
function readProfile(name, dir, shipped, at) {
  const { settings, errors } = readInstance(name, dir);
  if (errors.length) return { errors: errors.map((e) => `${at}: INSTANCES: ${e}`) };
  const values = {};
  const problems = [];
  for (const x of settings) {
    const r = convert(x.key, x.value);
    if (r.error) problems.push(`${x.where}: ${x.key}: ${r.error}`);
    else values[x.key] = { raw: x.value, value: r.value };
  }
  for (const key of ['CORES', 'HOURLY_PRICE'])
    if (!values[key] && !problems.length)
      problems.push(
        `${at}: INSTANCES: the profile ${name} (${path.join(dir, `${name}.env`)}) sets no ${key}: a capacity run needs each instance's cores and price`,
      );
  if (problems.length) return { errors: problems };
  const profile = {
    name,
    file: path.join(dir, `${name}.env`),
    shipped,
    cores: values.CORES.value,
    memory_mb: values.MEMORY_MB ? values.MEMORY_MB.value : null,
    hourly_price: values.HOURLY_PRICE.value,
    settings: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v.raw])),
  };
  return { profile, errors: [] };
}

/** INSTANCES: names in instances/ separated by commas, or a folder of profiles. */
function readProfiles(s, sources, file, errors) {
  const at = sources.INSTANCES;
  const raw = String(s.INSTANCES || '').trim();
  if (!raw) {
    errors.push(
      `${at === 'default' ? file : at}: INSTANCES: no instance given: name instance profiles of instances/ separated by commas (shipped: ${listInstances().join(', ')}), or a folder of them`,
    );
    return [];
  }
  const base = String(at).startsWith('environment') ? process.cwd() : path.dirname(path.resolve(file));
  const folder = path.resolve(base, raw);
  const isFolder = raw.includes('/') || (fs.existsSync(folder) && fs.statSync(folder).isDirectory());
  if (isFolder && !(fs.existsSync(folder) && fs.statSync(folder).isDirectory())) {
    errors.push(`${at}: INSTANCES: ${raw} is not a folder (${folder})`);
    return [];
  }
  const dir = isFolder ? folder : INSTANCES_DIR;
  const names = isFolder
    ? listInstances(dir)
    : raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
  if (!names.length) errors.push(`${at}: INSTANCES: the folder ${folder} holds no instance profile (<name>.env)`);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) errors.push(`${at}: INSTANCES: ${dup} is named twice`);
  const profiles = [];
  for (const name of names) {
    const r = readProfile(name, dir, !isFolder, at);
    errors.push(...r.errors);
    if (r.profile) profiles.push(r.profile);
  }
  return profiles;
}

/** The capacity keys' own checks: INSTANCE beside INSTANCES, the target, the bounds. */
function capacityProblems(s, sources, file) {
  const where = (key) => (sources[key] && sources[key] !== 'default' ? sources[key] : file);
  const errors = [];
  if (s.INSTANCE)
    errors.push(
      `${where('INSTANCE')}: INSTANCE=${s.INSTANCE}: a capacity run sets each instance of INSTANCES itself; remove INSTANCE (or name it in INSTANCES)`,
    );
  if (s.TARGET_RPS === null)
    errors.push(
      `${where('TARGET_RPS')}: TARGET_RPS: not set: the request rate the fleet must serve (requests/s, above 0)`,
    );
  else if (!(s.TARGET_RPS > 0))
    errors.push(`${where('TARGET_RPS')}: TARGET_RPS: expected a positive number of requests/s, got ${s.TARGET_RPS}`);
  errors.push(...boundProblems(s, where));
  return errors;
}

/** Where each profile runs: its cores, or the node's cores on this machine (extrapolated), or not at all. */
function placeProfiles(profiles, s, cpuCount) {
  const room = Math.max(1, cpuCount - 1); // the load generator keeps a core
  return profiles.map((p) => {
    if (p.cores <= room) return { ...p, run_cores: p.cores, fits: true };
    const extrapolate = s.CAPACITY_EXTRAPOLATE === 'linear';
    return { ...p, run_cores: extrapolate ? room : null, fits: false, machine_cores_needed: p.cores + 1 };
  });
}

/** The environment of an instance's saturation searches: one replica with the profile's limits and price. */
function searchValues(p) {
  return {
    SATURATE: 'yes',
    REPEAT: '', // one window per step
    REPLICAS: '', // one replica, as the scenario's node
    FAULT: '',
    INSTANCE: p.shipped ? p.name : '',
    ...p.settings,
    CORES: String(p.run_cores),
  };
}

/**
 * @param {string} file the scenario
 * @param {{env?: object, cpuCount: number, resolveOpts?: object}} opts resolveOpts: resolveScenario's (tests: a
 *   kernel probe's result)
 * @returns {{inputs: object|null, errors: string[]}}
 */
function capacityInputs(file, { env = process.env, cpuCount, resolveOpts = {} }) {
  const resolve = (e) => resolveScenario(file, { ...resolveOpts, env: e, cpuCount });
  const { scenario: s, sources, errors } = resolve(env);
  if (errors.length) return { inputs: null, errors };
  errors.push(...capacityProblems(s, sources, file));
  const profiles = placeProfiles(readProfiles(s, sources, file, errors), s, cpuCount);
  if (errors.length) return { inputs: null, errors };
  const points = profiles
    .filter((p) => p.run_cores !== null)
    .map((p) => ({
      name: `${s.NAME}-${p.name}`.replace(/[^A-Za-z0-9_.-]/g, '_'),
      instance: p.name,
      values: searchValues(p),
    }));
  // every run resolved now: a bad value fails before the first search, not after an hour
  for (const p of points)
    for (const e of resolve({ ...env, ...p.values, NAME: p.name }).errors)
      errors.push(`instance ${p.instance}'s saturation search: ${e}`);
  const probe = profiles.find((p) => p.run_cores !== null);
  if (probe) {
    const values = verifyValues(s, probe, {
      mode: 'share',
      replicas: 2,
      replicas_run: 2,
      cores: probe.run_cores,
      rate_rps: 1,
      share: 1,
    });
    for (const e of resolve({ ...env, ...values }).errors)
      errors.push(`the verification fleet (REPLICAS behind HAProxy): ${e}`);
  }
  if (errors.length) return { inputs: null, errors };
  return { inputs: { file: path.resolve(file), scenario: s, sources, profiles, points, cpuCount }, errors: [] };
}

module.exports = { capacityInputs, boundKeys, searchValues };
