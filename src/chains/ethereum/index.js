// @ts-check
'use strict';
// Ethereum and other EVM chains: measured through ethers.

const { METHODS } = require('./params');
const { waitForSync } = require('./sync');
const { createHistory } = require('./history');
const { harvest, missingForMix } = require('./harvest');
const { prepareWrites } = require('./writers');
const { methodClass } = require('./method-classes');

/** @type {import('../../contracts').Chain} */
const chain = {
  name: 'ethereum',
  defaults: { CLIENT: 'geth', WORKLOAD: 'eth-default' },
  methods: METHODS,
  /** What each method or mix entry does to a node (src/workload/safety.js). */
  methodClass,
  /** The artillery processor that sends this chain's requests. */
  processor: require.resolve('../../workload/processors/ethereum'),
  waitForSync,
  createHistory,
  harvest,
  missingForMix,
  /** Funds one signing account per virtual user for the write workloads (mix entries tx.*). */
  prepareWrites,
};

module.exports = chain;
