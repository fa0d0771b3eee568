// @ts-check
'use strict';
// FAULT's values: what a scenario may inject on purpose, parsed once.
//   kill-replica@<at>s          the last replica killed <at> s into the window
//   pause-node@<at>s:<for>s     the node under test cut from the chain for <for> s

/**
 * @typedef {{kind: 'kill-replica', at_s: number} | {kind: 'pause-node', at_s: number, for_s: number}} Fault
 */

const FORMS = 'kill-replica@<seconds>s, pause-node@<at>s:<for>s';

/**
 * The fault a FAULT value names, null for none, or {error} for a value that is no fault chainperf knows.
 * @returns {Fault | null | {error: string}}
 */
function parseFault(text) {
  if (!text) return null;
  let m = /^kill-replica@(\d+)s$/.exec(text);
  if (m) return { kind: 'kill-replica', at_s: Number(m[1]) };
  m = /^pause-node@(\d+)s:(\d+)s$/.exec(text);
  if (m) return { kind: 'pause-node', at_s: Number(m[1]), for_s: Number(m[2]) };
  return { error: `"${text}" is not a fault chainperf knows (${FORMS})` };
}

module.exports = { parseFault, FORMS };
