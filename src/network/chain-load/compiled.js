'use strict';
// The compiled contracts chain traffic deploys and calls (src/chains/ethereum/contracts/: the token's ERC-20
// balances in Logger.sol, SlotWriter.sol), in one place for the modules that type-check.

const LOGGER = require('../../chains/ethereum/contracts/Logger.json');
const WRITER = require('../../chains/ethereum/contracts/SlotWriter.json');

module.exports = { LOGGER, WRITER };
