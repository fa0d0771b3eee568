'use strict';
// Chain hook: what a Substrate chain means for the other scenario keys,
// called by src/scenario/resolve.js with the keys resolved so far.

const fs = require('node:fs');
const path = require('node:path');
const { closest } = require('../../util/strings');
const { SHIPPED, isPath } = require('./specs');

/** CHAIN_SPEC on the host: a spec the node binary knows, a file that exists, or a shipped spec of this chain. */
function chainSpecChecks(v, client, at, errors) {
  const specName = v.CHAIN_SPEC;
  if (client.builtinSpecs && client.builtinSpecs.includes(specName)) {
    // a network the node binary knows by name
  } else if (isPath(specName)) {
    if (!fs.existsSync(path.resolve(specName)))
      errors.push(`${at('CHAIN_SPEC')}: CHAIN_SPEC: no such file: ${specName}`);
  } else if (!SHIPPED[specName]) {
    const names = [...Object.keys(SHIPPED), ...(client.builtinSpecs || [])];
    const near = closest(specName, names);
    errors.push(
      `${at('CHAIN_SPEC')}: CHAIN_SPEC: expected a path to a raw chain spec .json or one of ${names.join(', ')}, got "${specName}"${near ? ` (did you mean ${near}?)` : ''}`,
    );
  } else if (v.CHAIN !== 'substrate' && SHIPPED[specName] !== v.CHAIN) {
    const want = SHIPPED[specName] === 'polkadot' || SHIPPED[specName] === 'kusama' ? SHIPPED[specName] : 'substrate';
    errors.push(
      `${at('CHAIN_SPEC')}: CHAIN_SPEC: ${specName} is a ${SHIPPED[specName]} chain, not ${v.CHAIN}; set CHAIN=${want}`,
    );
  }
}

/**
 * @param {object} v the scenario's values
 * @param {{client: object, at: (key: string) => string}} ctx where each key was set
 * @param {string[]} errors validation messages, appended to
 */
function checkScenario(v, { client, at }, errors) {
  if (v.GENERATOR === 'lean') {
    errors.push(
      `${at('GENERATOR')}: GENERATOR=lean sends Ethereum JSON-RPC over HTTP and does not serve CHAIN=${v.CHAIN} yet; Substrate chains are measured through @polkadot/api over WebSocket (leave GENERATOR unset)`,
    );
  }
  if (v.RUNTIME === 'host' && v.CHAIN_SPEC) chainSpecChecks(v, client, at, errors);
}

module.exports = { checkScenario };
