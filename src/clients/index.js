// @ts-check
'use strict';
// Node clients: the registry every other module reads (CLIENT's values,
// DB_ENGINE's, the docs). Each module gives its defaults, the chains it
// serves, how to install it, the command line that starts it for a scenario,
// its metrics, and, for the compose runtime, its compose file and the
// container's command (see "Adding a client" in README.md).
//
// CHAINPERF_CLIENTS (comma-separated paths of client modules) adds clients
// kept outside this repository, through the same door.

const path = require('node:path');

const registry = {
  geth: require('./geth'),
  anvil: require('./anvil'),
  erigon: require('./erigon'),
  reth: require('./reth'),
  nethermind: require('./nethermind'),
  besu: require('./besu'),
  chopsticks: require('./chopsticks'),
  'polkadot-omni-node': require('./polkadot-omni-node'),
  polkadot: require('./polkadot'),
};

for (const file of (process.env.CHAINPERF_CLIENTS || '')
  .split(',')
  .map((f) => f.trim())
  .filter(Boolean)) {
  const mod = require(path.resolve(file));
  if (!mod || typeof mod.name !== 'string' || typeof mod.command !== 'function' || !Array.isArray(mod.chains)) {
    throw new Error(
      `CHAINPERF_CLIENTS: ${file} is not a client module (it needs name, chains and command; see "Adding a client" in README.md)`,
    );
  }
  registry[mod.name] = mod;
}

module.exports = registry;
