// @ts-check
'use strict';
// The class of a method whatever its chain family, for what does not know the
// chain (the recording proxy): the first family that knows the method says.
const registry = require('./index');

/** @typedef {import('./ethereum/method-classes').MethodClass} MethodClass */

/**
 * @param {string} method
 * @returns {MethodClass}
 */
function classifyAnyChain(method) {
  for (const chain of new Set(Object.values(registry))) {
    const cls = chain.methodClass(method);
    if (cls !== 'unknown') return cls;
  }
  return 'unknown';
}

module.exports = { classifyAnyChain };
