'use strict';
// Instance profiles: instances/<name>.env fragments that a scenario includes
// with INSTANCE=<name>. A fragment sets what an instance type is here: the
// node's cores, memory limit, disk limits and price per hour. Its values sit
// between the client's defaults and the scenario file, so the file and the
// environment still override them. CORES is capped to what this machine can
// give the node while the load generator keeps a core of its own.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseEnvFile } = require('./parse');
const { closest } = require('../util/strings');

const INSTANCES_DIR = path.resolve(__dirname, '..', '..', 'instances');
const INSTANCE_KEYS = [
  'CORES',
  'MEMORY_MB',
  'DISK_READ_IOPS',
  'DISK_WRITE_IOPS',
  'DISK_READ_MBPS',
  'DISK_WRITE_MBPS',
  'HOURLY_PRICE',
];

function listInstances(dir = INSTANCES_DIR) {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.env'))
        .map((f) => f.slice(0, -4))
        .sort()
    : [];
}

/**
 * The settings of instances/<name>.env, each with its file and line.
 * @returns {{settings: {key, value, where}[], errors: string[]}} errors name the fragment's file and line
 */
function readInstance(name, dir = INSTANCES_DIR) {
  const file = path.join(dir, `${name}.env`);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name) || !fs.existsSync(file)) {
    const names = listInstances(dir);
    const near = closest(name, names);
    return {
      settings: [],
      errors: [
        `no instance profile "${name}" in instances/ (shipped: ${names.join(', ')})${near ? `; did you mean ${near}?` : ''}`,
      ],
    };
  }
  const rel = path.relative(process.cwd(), file);
  const parsed = parseEnvFile(file);
  const errors = [...parsed.errors];
  const settings = [];
  for (const x of parsed.settings) {
    const where = `${rel}:${x.line}`;
    if (!INSTANCE_KEYS.includes(x.key))
      errors.push(`${where}: ${x.key}: an instance profile sets only ${INSTANCE_KEYS.join(', ')}`);
    else settings.push({ key: x.key, value: x.value, where });
  }
  return { settings, errors };
}

/** Whether key's value came from the INSTANCE fragment (not overridden by the file or the environment). */
const fromInstance = (values, sources, key) =>
  Boolean(values.INSTANCE) && String(sources[key]).includes(path.join('instances', `${values.INSTANCE}.env:`));

/**
 * Caps CORES from an instance profile to this machine's cores less one (the load generator's), and says so.
 * @returns {string|null} the warning, when capped
 */
function capInstanceCores(values, sources, cpuCount) {
  const max = Math.max(1, cpuCount - 1);
  if (!fromInstance(values, sources, 'CORES') || values.CORES <= max) return null;
  const msg = `INSTANCE=${values.INSTANCE} has ${values.CORES} cores; the node gets ${max} here (this machine has ${cpuCount}, and the load generator keeps one): CPU-bound figures are not the instance's`;
  sources.CORES = `${sources.CORES} (${values.CORES}, capped to ${max})`;
  values.CORES = max;
  return msg;
}

/** A warning when MEMORY_MB from an instance is above this machine's memory: that limit cannot bite. */
function memoryWarning(values, sources, totalBytes = os.totalmem()) {
  if (!values.MEMORY_MB || !fromInstance(values, sources, 'MEMORY_MB')) return null;
  if (values.MEMORY_MB * 1024 * 1024 <= totalBytes) return null;
  return `INSTANCE=${values.INSTANCE} sets MEMORY_MB=${values.MEMORY_MB}, above this machine's ${Math.round(totalBytes / 2 ** 20)} MB: the node's memory is bounded by the machine, not the instance`;
}

module.exports = { readInstance, listInstances, capInstanceCores, memoryWarning, INSTANCE_KEYS, INSTANCES_DIR };
