'use strict';
// Finds a Prometheus server binary, installing Debian's package when none is there.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { runWithProgress } = require('./progress');

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(':')) {
    const p = `${dir}/${name}`;
    if (dir && fs.existsSync(p)) return p;
  }
  return null;
}

async function ensurePrometheus(log) {
  const given = process.env.PROMETHEUS_BIN;
  if (given) {
    if (!fs.existsSync(given)) throw new Error(`PROMETHEUS_BIN: no such file: ${given}`);
    return given;
  }
  const found = onPath('prometheus');
  if (found) return found;
  const canApt = onPath('apt-get') && process.getuid && process.getuid() === 0;
  if (!canApt) {
    throw new Error('Prometheus is not installed: install it (Debian: apt-get install prometheus) or set PROMETHEUS_BIN');
  }
  await runWithProgress('apt-get', ['update'], { label: 'installing Prometheus (apt-get update)', log });
  await runWithProgress('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus'], {
    label: 'installing Prometheus from Debian',
    expected: 'once; about a minute',
    env: { DEBIAN_FRONTEND: 'noninteractive' },
    log,
  });
  const installed = onPath('prometheus') || '/usr/bin/prometheus';
  if (!fs.existsSync(installed)) throw new Error('apt-get installed prometheus but no prometheus binary was found');
  return installed;
}

function prometheusVersion(bin) {
  try {
    const out = execFileSync(bin, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const m = /version (\S+)/.exec(out);
    return m ? m[1] : 'unknown';
  } catch {
    return 'unknown';
  }
}

module.exports = { ensurePrometheus, prometheusVersion };
