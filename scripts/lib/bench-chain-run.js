'use strict';
// npm run bench:chain's runs: ./run.sh with a scenario and keys, its progress
// shown, its report read; a run that fails is said and counted, never the
// end of the bench.

const fs = require('node:fs');
const path = require('node:path');
const { runSh: runShowing, ROOT } = require('./run-sh');

// The run's lines worth showing while the bench waits: a state built once, the network, the pause, the search.
const PROGRESS =
  /STATE=|state (history|fill)|statewriter|network: |FAULT: |saturation( step \d+)?: |pairs? in|chain load|done: |failed|error/i;

/** ./run.sh with args and env, its progress lines shown (unset: keys taken out of the bench's own environment). */
const runSh = (args, env, unset = []) => runShowing(args, env, PROGRESS, unset);

/**
 * One run, tolerated: {ok, dir, doc, error, seconds}. doc is the report's run.json (ab.json for ./run.sh ab); a run
 * whose report says other than ok, or that printed no report, is not ok and is said on stdout with `label`.
 */
async function runOnce(label, args, env, { unset = [], file = 'run.json' } = {}) {
  const t0 = Date.now();
  const seconds = () => Math.round((Date.now() - t0) / 1000);
  try {
    const { dir, code } = await runSh(args, env, unset);
    const docPath = path.join(dir, file);
    const doc = fs.existsSync(docPath) ? JSON.parse(fs.readFileSync(docPath, 'utf8')) : null;
    const ok = Boolean(doc) && doc.status === 'ok';
    if (!ok) {
      const why = doc ? doc.error || `status ${doc.status}` : `no ${file}`;
      process.stdout.write(`${label}: FAILED (exit ${code}): ${why} (${dir})\n`);
    }
    return { ok, dir, doc, error: ok ? null : 'failed', seconds: seconds() };
  } catch (err) {
    process.stdout.write(`${label}: FAILED: ${err.message.split('\n').slice(0, 12).join('\n  ')}\n`);
    return { ok: false, dir: null, doc: null, error: err.message, seconds: seconds() };
  }
}

const scenario = (name) => path.join(ROOT, 'scenarios', name);

module.exports = { runSh, runOnce, scenario, ROOT };
