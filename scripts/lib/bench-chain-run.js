'use strict';
// npm run bench:chain's runs: ./run.sh with a scenario and keys, its progress
// shown, its report read; a run that fails is said and counted, never the
// end of the bench.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');

// The run's lines worth showing while the bench waits: a state built once, the network, the pause, the search.
const PROGRESS =
  /STATE=|state (history|fill)|statewriter|network: |FAULT: |saturation( step \d+)?: |pairs? in|chain load|done: |failed|error/i;

/**
 * ./run.sh with args and env (unset: keys taken out of the bench's own environment); resolves with the report folder
 * (its last stdout line) and the exit status, rejects when no folder was printed.
 */
function runSh(args, env, unset = []) {
  const full = { ...process.env };
  for (const k of unset) delete full[k];
  Object.assign(full, env);
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ROOT, 'run.sh'), args, { cwd: ROOT, env: full, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => {
      err += d;
      for (const l of String(d).split('\n')) if (PROGRESS.test(l)) process.stderr.write(`  ${l.trim()}\n`);
    });
    child.on('close', (code) => {
      const dir = out.trim().split('\n').pop();
      if (!dir || !fs.existsSync(dir))
        return reject(new Error(`./run.sh ${args.join(' ')} exited ${code}:\n${err.slice(-2000)}`));
      resolve({ dir, code });
    });
  });
}

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
