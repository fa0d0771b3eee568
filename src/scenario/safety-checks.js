'use strict';
// A scenario against a node chainperf did not start (RUNTIME=attach) is refused
// before anything is sent when its workload holds anything but read methods
// that ALLOW_WRITES and ALLOW_METHODS do not allow (src/workload/safety.js), or
// when it would create history there (transactions) without ALLOW_WRITES=yes.

const fs = require('node:fs');
const path = require('node:path');
const yaml = require('js-yaml');
const { replayMix } = require('../workload/replay');
const { refusedMethods, describeRefused, allowList } = require('../workload/safety');

const METHOD_NAME = /^[A-Za-z][A-Za-z0-9_.]*$/;

/** The workload's methods: a capture's calls by method, a mix's weights, or one method; null when unreadable. */
function workloadMethods(workload, workloadsDir) {
  try {
    if (workload.startsWith('replay:')) return { counts: replayMix(workload.slice('replay:'.length)), counted: true };
    if (workload.startsWith('method:')) return { counts: { [workload.slice('method:'.length)]: 1 }, counted: false };
    const doc = yaml.load(fs.readFileSync(path.join(workloadsDir, `${workload}.yml`), 'utf8'));
    return { counts: (doc && doc.mix) || {}, counted: false };
  } catch {
    return null; // the workload's own check names the problem
  }
}

/**
 * @param {object} v resolved values
 * @param {{chain: object, at: (key: string) => string, workloadsDir: string}} ctx
 * @param {string[]} errors
 */
function safetyChecks(v, { chain, at, workloadsDir }, errors) {
  const allowMethods = allowList(v.ALLOW_METHODS);
  for (const m of allowMethods) {
    if (!METHOD_NAME.test(m)) errors.push(`${at('ALLOW_METHODS')}: ALLOW_METHODS: "${m}" is not a method name`);
    else if (chain.methodClass(m) === 'admin')
      errors.push(
        `${at('ALLOW_METHODS')}: ALLOW_METHODS: ${m} administers or changes the node: chainperf never sends it to a node it did not start`,
      );
  }
  if (v.RUNTIME !== 'attach') return;
  const allowWrites = v.ALLOW_WRITES === 'yes';
  if (v.CREATE_HISTORY === 'yes' && !allowWrites)
    errors.push(
      `${at('CREATE_HISTORY')}: CREATE_HISTORY=yes sends transactions to the attached node (RUNTIME=attach): set ALLOW_WRITES=yes to allow it`,
    );
  const w = v.WORKLOAD ? workloadMethods(v.WORKLOAD, workloadsDir) : null;
  if (!w) return;
  const refused = refusedMethods(w.counts, chain.methodClass, { allowWrites, allowMethods });
  if (!refused.length) return;
  // One problem a line: the problem printer cuts long lines.
  errors.push(
    `${at('WORKLOAD')}: WORKLOAD: only read methods are sent to a node chainperf did not start (RUNTIME=attach), and nothing was sent; the workload holds:`,
    ...describeRefused(refused, w.counted).map((l) => `${at('WORKLOAD')}: WORKLOAD: ${l}`),
  );
}

module.exports = { safetyChecks, workloadMethods };
