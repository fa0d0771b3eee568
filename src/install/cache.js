'use strict';
// Tools chainperf builds or downloads live in a cache outside the repository
// (CHAINPERF_CACHE, default ~/.cache/chainperf), shared by every checkout.
const os = require('node:os');
const path = require('node:path');

function cacheDir(...parts) {
  const base =
    process.env.CHAINPERF_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'chainperf');
  return path.join(base, ...parts);
}

module.exports = { cacheDir };
