'use strict';
// How a report writes numbers, and which chain family's hooks a run's report
// calls.

const chains = require('../chains');

/** The run's chain module, for its report hooks (none for a chain this version does not know). */
const chainOf = (run) => chains[((run.provenance || {}).scenario || {}).CHAIN] || {};

const ms = (v, digits = 3) => (v === null || v === undefined ? 'n/a' : `${Number(v).toFixed(digits)} ms`);

const num = (v, digits = 1) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(digits));

const mib = (x) => (x === null || x === undefined ? 'n/a' : `${num(x / 2 ** 20, 2)} MiB`);

module.exports = { chainOf, ms, num, mib };
