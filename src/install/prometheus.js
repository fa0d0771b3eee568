'use strict';
// Finds a Prometheus server binary (PROMETHEUS_BIN, PATH), installing Debian's package when none is there.

const { execFileSync } = require('node:child_process');
const { ensureDebianTool } = require('./debian');

function ensurePrometheus(log) {
  return ensureDebianTool('prometheus', 'prometheus', log, process.env.PROMETHEUS_BIN);
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
