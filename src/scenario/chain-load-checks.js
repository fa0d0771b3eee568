'use strict';
// CHAIN_LOAD in a scenario: a built-in profile or a profile file, read and
// checked before anything starts (its errors name the key, the file and line,
// and what would be accepted); its slot as DEV_BLOCK_TIME_S's default, and no
// NETWORK_TPS transfers beside it unless asked for.

const path = require('node:path');
const { readChainLoad } = require('../network/chain-load/profiles');
const { KEYS } = require('./keys');

const SLOT = KEYS.DEV_BLOCK_TIME_S;
const profileOf = (v) => Boolean(v.CHAIN_LOAD) && v.CHAIN_LOAD !== 'quiet';

/**
 * The profile a scenario names, read at the block time it gives (DEV_BLOCK_TIME_S when given: the profile keeps its
 * gas per second there). A file's path is taken from the scenario file's folder when the file names it, from the
 * current folder when the environment does. {profile, errors}.
 */
function scenarioChainLoad(values, given, file) {
  const fromFile = given.CHAIN_LOAD && !/^environment\b/.test(given.CHAIN_LOAD.where);
  const baseDir = fromFile ? path.dirname(path.resolve(file)) : process.cwd();
  const slotS = given.DEV_BLOCK_TIME_S ? values.DEV_BLOCK_TIME_S : null;
  return readChainLoad(values.CHAIN_LOAD, { slotS, baseDir });
}

/**
 * Before the other defaults: a profile's file as an absolute path (the runtime reads it again from anywhere), its slot
 * as DEV_BLOCK_TIME_S when the scenario leaves that unset, and NETWORK_TPS 0 beside it when unset (the profile's feed
 * is the network's traffic). Errors go to `errors`, each naming CHAIN_LOAD's place.
 */
function chainLoadDefaults(values, sources, given, { file, errors }) {
  if (!profileOf(values)) return;
  const where = sources.CHAIN_LOAD;
  const { profile, errors: problems } = scenarioChainLoad(values, given, file);
  if (!profile) return errors.push(...problems.map((e) => `${where}: ${e}`));
  if (profile.source && profile.source !== 'built-in') values.CHAIN_LOAD = path.resolve(profile.source);
  if (!given.DEV_BLOCK_TIME_S) {
    const slot = profile.slot_s;
    if (!Number.isInteger(slot) || slot < SLOT.min || slot > SLOT.max)
      return errors.push(
        `${where}: CHAIN_LOAD: its slot of ${slot} s is not a block time the network can keep: expected a whole number of seconds from ${SLOT.min} to ${SLOT.max} (or set DEV_BLOCK_TIME_S)`,
      );
    values.DEV_BLOCK_TIME_S = slot;
    sources.DEV_BLOCK_TIME_S = `default (CHAIN_LOAD=${given.CHAIN_LOAD ? given.CHAIN_LOAD.value : values.CHAIN_LOAD}: its slot)`;
  }
  if (values.NETWORK_TPS === null) {
    values.NETWORK_TPS = 0;
    sources.NETWORK_TPS = 'default (CHAIN_LOAD sends the network its traffic)';
  }
}

module.exports = { chainLoadDefaults, scenarioChainLoad };
