'use strict';
// The benches' way of running chainperf as a user would: ./run.sh with
// arguments and environment overrides, the lines that say how it goes echoed
// (those matching `show`), the report folder taken from the last line of its
// standard output.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');

/**
 * ./run.sh with args and env; resolves with {dir, code}: the report folder (its last stdout line) and the exit status;
 * rejects, with the tail of what it printed, when it printed no folder.
 * @param {string[]} args
 * @param {object} env
 * @param {RegExp} show the stderr lines echoed, indented
 * @param {string[]} [unset] keys taken out of the bench's own environment
 */
function runSh(args, env, show, unset = []) {
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
      for (const l of String(d).split('\n')) if (show.test(l)) process.stderr.write(`  ${l.trim()}\n`);
    });
    child.on('close', (code) => {
      const dir = out.trim().split('\n').pop();
      if (!dir || !fs.existsSync(dir))
        return reject(new Error(`./run.sh ${args.join(' ')} exited ${code}:\n${err.slice(-3000)}`));
      resolve({ dir, code });
    });
  });
}

/** A figure printed with d decimals, or n/a. */
const fmt = (x, d = 1) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : Number(x).toFixed(d));

module.exports = { runSh, fmt, ROOT };
