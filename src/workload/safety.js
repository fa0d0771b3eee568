// @ts-check
'use strict';
// What chainperf may send to a node it did not start (RUNTIME=attach: a
// staging or production node). Read methods only, unless the user says more in
// so many words: ALLOW_WRITES=yes for transactions, ALLOW_METHODS=<names> for
// a method that is only a read but one chainperf does not know, or reads node
// internals (tracing, debug_*). Administration (admin_*, debug_setHead,
// miner_*, personal_*, engine_*, Substrate's unsafe RPCs that change the
// node) is never sent to a node chainperf did not start. A node chainperf
// started is its own, on a chain of its own: anything goes there.

/** @typedef {import('../chains/ethereum/method-classes').MethodClass} MethodClass */

/** What each class is, and the key that allows it against an attached node (null: nothing does). */
const CLASSES = {
  write: { what: 'sends transactions', allow: 'ALLOW_WRITES=yes' },
  debug: { what: 'reads node internals or traces', allow: 'ALLOW_METHODS=<the method>' },
  unknown: { what: 'is not a method chainperf knows', allow: 'ALLOW_METHODS=<the method>, if it only reads' },
  admin: { what: 'administers or changes the node', allow: null },
};

/**
 * The methods of a workload that chainperf must not send to a node it did not start, with their counts.
 * @param {Object<string, number>} counts method (or mix entry) -> how many (a capture's calls) or its weight
 * @param {(method: string) => MethodClass} classify the chain family's classes
 * @param {{allowWrites: boolean, allowMethods: string[]}} allowed
 * @returns {{method: string, count: number, cls: MethodClass}[]}
 */
function refusedMethods(counts, classify, { allowWrites, allowMethods }) {
  const out = [];
  for (const [method, count] of Object.entries(counts)) {
    const cls = classify(method);
    if (cls === 'read') continue;
    if (cls === 'write' && allowWrites) continue;
    if ((cls === 'debug' || cls === 'unknown') && allowMethods.includes(method)) continue;
    out.push({ method, count, cls });
  }
  return out.sort((a, b) => order(a.cls) - order(b.cls) || b.count - a.count || a.method.localeCompare(b.method));
}

const order = (cls) => ['admin', 'write', 'debug', 'unknown'].indexOf(cls);

/**
 * One line per refused method: its count, its class and what would allow it.
 * @param {{method: string, count: number, cls: MethodClass}[]} refused
 * @param {boolean} counted whether counts are calls (a capture) or weights (a mix)
 */
function describeRefused(refused, counted) {
  return refused.map(({ method, count, cls }) => {
    const c = CLASSES[cls];
    const times = counted ? ` x${count}` : '';
    const allow = c.allow ? `allowed with ${c.allow}` : 'never sent to a node chainperf did not start';
    return `${method}${times} (${cls}: ${c.what}; ${allow})`;
  });
}

/** ALLOW_METHODS as a list of names. */
const allowList = (raw) =>
  String(raw || '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);

module.exports = { refusedMethods, describeRefused, allowList, CLASSES };
