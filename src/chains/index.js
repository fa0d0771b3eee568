// @ts-check
'use strict';
// Chains chainperf can measure. Each module says which client serves it by
// default, which RPC methods it can parameterize, and how to wait for sync,
// create history on a dev chain and harvest parameters.
const substrate = require('./substrate');

/** @type {Object<string, import('../contracts').Chain>} */
const registry = {
  ethereum: require('./ethereum'),
  polkadot: substrate.polkadot,
  kusama: substrate.kusama,
  substrate: substrate.substrate,
};

module.exports = registry;
