'use strict';
// Where a figure came from: toolkit commit, machine, client, tool versions.

const os = require('node:os');
const { execFileSync } = require('node:child_process');
const { ROOT } = require('../util/paths');

function git(args, cwd = ROOT) {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function packageVersion(name) {
  try {
    return require(`${name}/package.json`).version;
  } catch {
    return null;
  }
}

function toolkitCommit() {
  const commit = git(['rev-parse', 'HEAD']);
  if (!commit) return { commit: null, dirty: null };
  const status = git([
    'status',
    '--porcelain',
    '--untracked-files=no',
    '--',
    'src',
    'workloads',
    'run.sh',
    'package.json',
  ]);
  return { commit, dirty: Boolean(status) };
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu_model: cpus.length ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length,
    memory_bytes: os.totalmem(),
    kernel: `${os.type()} ${os.release()}`,
    arch: os.arch(),
  };
}

function provenance({ scenario, sources, client, runtime, tools = {} }) {
  return {
    toolkit: { name: 'chainperf', version: require('../../package.json').version, ...toolkitCommit() },
    client,
    runtime,
    machine: machine(),
    tools: {
      node: process.version,
      artillery: packageVersion('artillery'),
      ethers: packageVersion('ethers'),
      ...tools,
    },
    scenario,
    scenario_sources: sources,
  };
}

module.exports = { provenance, machine, git };
