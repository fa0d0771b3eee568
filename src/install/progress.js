'use strict';
// Runs a long install command with its output passed through to the log and
// a heartbeat every 15 s, so a first run never looks stuck.

const { spawn } = require('node:child_process');

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {{label: string, log: (line: string) => void, env?: object, cwd?: string, expected?: string, signal?:
 * AbortSignal}} opts
 * An aborted signal stops the command (SIGTERM) and rejects. Resolves with what the command printed on stdout (its
 * last 64 KiB), which the log has too.
 * @returns {Promise<string>}
 */
function runWithProgress(cmd, args, { label, log, env = {}, cwd = undefined, expected = '', signal = undefined }) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(new Error(`${label}: interrupted before it started`));
    const started = Date.now();
    log(`${label}: ${cmd} ${args.join(' ')}${expected ? ` (${expected})` : ''}`);
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail = [];
    let stdout = '';
    let partial = '';
    const onData = (buf) => {
      const lines = (partial + buf.toString()).split('\n');
      partial = lines.pop();
      for (const l of lines) {
        if (!l.trim()) continue;
        tail.push(l);
        if (tail.length > 20) tail.shift();
        log(`${label}: ${l}`);
      }
    };
    child.stdout.on('data', (buf) => {
      stdout = (stdout + buf.toString()).slice(-65536);
      onData(buf);
    });
    child.stderr.on('data', onData);
    const beat = setInterval(
      () => log(`${label}: still working, ${Math.round((Date.now() - started) / 1000)} s so far`),
      15000,
    );
    const onAbort = () => child.kill('SIGTERM');
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      clearInterval(beat);
      reject(new Error(`${label}: cannot run ${cmd}: ${err.message}`));
    });
    child.on('close', (code) => {
      clearInterval(beat);
      if (signal) signal.removeEventListener('abort', onAbort);
      if (signal && signal.aborted) {
        reject(new Error(`${label}: interrupted`));
      } else if (code === 0) {
        log(`${label}: done in ${Math.round((Date.now() - started) / 1000)} s`);
        resolve(stdout);
      } else {
        reject(new Error(`${label}: ${cmd} exited with status ${code}:\n${tail.join('\n')}`));
      }
    });
  });
}

module.exports = { runWithProgress };
