'use strict';
// Runs a long install or build step quietly: one line when it starts (what it
// is, its usual time, the log file that gets its whole output), a heartbeat
// every 15 s (CHAINPERF_HEARTBEAT_S: how long so far, of the usual, and its
// last line of output), one line when it is done. Its output goes to the log
// file only (step-log.js), and is shown only when it fails: the log's tail,
// the file named in the error.

const { spawn } = require('node:child_process');
const { scrub } = require('../util/scrub');
const S = require('./step-log');

/** Lines shown whole on failure up to this many; beyond, the last TAIL_LINES. */
const WHOLE_LINES = 40;
const TAIL_LINES = 30;
/** The heartbeat's interval: 15 s, or CHAINPERF_HEARTBEAT_S. */
const beatMsDefault = () => (Number(process.env.CHAINPERF_HEARTBEAT_S) || 15) * 1000;

/** The step's output: into its log file (or passed to log where none can be written), its last lines kept. */
function stepOutput(step, header, { label, log }) {
  const file = S.openStepLog(step, header);
  const ring = [];
  let count = 0;
  let last = '';
  const line = (l) => {
    const clean = scrub(l.replace(/\r/g, ''));
    if (file) file.write(`${clean}\n`);
    if (!clean.trim()) return;
    count += 1;
    last = clean.trim();
    ring.push(clean);
    if (ring.length > WHOLE_LINES) ring.shift();
    if (!file) log(`${label}: ${clean}`);
  };
  const stream = () => {
    let partial = '';
    return {
      data: (buf) => {
        const lines = (partial + buf.toString()).split('\n');
        partial = lines.pop();
        lines.forEach(line);
      },
      end: () => partial && line(partial),
    };
  };
  return {
    file: file && file.file,
    stream,
    last: () => last,
    /** The lines to show on failure, and what they are. */
    tail: () => ({ lines: count <= WHOLE_LINES ? ring : ring.slice(-TAIL_LINES), count }),
    close: (footer) => {
      if (file) file.write(`${footer}\n`);
      if (file) file.close();
      if (file) S.keepInReport(file.file);
    },
  };
}

const startLine = (label, note, usual, file) =>
  `${label}${note ? ` (${note})` : ''}: ${
    usual ? `usually about ${S.fmtDuration(usual.seconds)} (${usual.from})` : 'no usual time known yet'
  }; ${file ? `its output goes to ${file}` : `its output follows (${S.logsDir()} cannot be written)`}`;

function beatLine(label, elapsed, usual, last) {
  let of = '';
  if (usual) of = elapsed <= usual.seconds + 0.5 ? ', of about ' : ', longer than the usual ';
  const lastOut = last ? `; last output: ${last.length > 100 ? `${last.slice(0, 100)}...` : last}` : '';
  return `${label}: ${S.fmtDuration(elapsed)} so far${usual ? `${of}${S.fmtDuration(usual.seconds)}` : ''}${lastOut}`;
}

function failure(label, cmd, code, out) {
  const { lines, count } = out.tail();
  if (!out.file) return `${label}: ${cmd} exited with status ${code}:\n${lines.join('\n')}`;
  const which = count > lines.length ? `its last ${lines.length} of ${count} lines` : 'its output';
  return `${label}: ${cmd} exited with status ${code}; its whole output is in ${out.file}; ${which}:\n${lines.join('\n')}`;
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {{label: string, log: (line: string) => void, step?: string, usual?: number, note?: string, env?: object,
 * cwd?: string, signal?: AbortSignal, beatMs?: number}} opts
 * step: the short name of its log files and of the time it last took (default: from label, up to " into ");
 * usual: the seconds it typically takes on 2 cores, said until it has taken a time on this machine; note: what else
 * to say of it ("from the Go module proxy, once"). An aborted signal stops the command (SIGTERM) and rejects.
 * Resolves with what the command printed on stdout (its last 64 KiB), which the log file has too.
 * @returns {Promise<string>}
 */
function runWithProgress(cmd, args, opts) {
  const { label, log, env = {}, cwd = undefined, signal = undefined, beatMs = beatMsDefault() } = opts;
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(new Error(`${label}: interrupted before it started`));
    const started = Date.now();
    const elapsed = () => (Date.now() - started) / 1000;
    const step = S.stepName(opts.step || label.replace(/ into .*$/, ''));
    const usual = S.usualOf(step, opts.usual);
    const header = scrub(`# ${label}\n# ${[cmd, ...args].join(' ')}\n# started ${new Date().toISOString()}\n`);
    const out = stepOutput(step, header, { label, log });
    log(startLine(label, opts.note, usual, out.file));
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const [o, e] = [out.stream(), out.stream()];
    child.stdout.on('data', (buf) => {
      stdout = (stdout + buf.toString()).slice(-65536);
      o.data(buf);
    });
    child.stderr.on('data', e.data);
    const beat = setInterval(() => log(beatLine(label, elapsed(), usual, out.last())), beatMs);
    const onAbort = () => child.kill('SIGTERM');
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    let ended = false;
    const end = (footer) => {
      clearInterval(beat);
      if (ended) return; // 'close' may follow 'error'
      ended = true;
      if (signal) signal.removeEventListener('abort', onAbort);
      o.end();
      e.end();
      out.close(`# ${footer} after ${S.fmtDuration(elapsed())}`);
    };
    child.on('error', (err) => {
      end(`cannot run ${cmd}: ${err.message}`);
      reject(new Error(`${label}: cannot run ${cmd}: ${err.message}`));
    });
    child.on('close', (code) => {
      if (signal && signal.aborted) {
        end('interrupted');
        reject(new Error(`${label}: interrupted`));
      } else if (code === 0) {
        end('done');
        S.recordSeconds(step, elapsed());
        log(`${label}: done in ${S.fmtDuration(elapsed())}`);
        resolve(stdout);
      } else {
        end(`exited with status ${code}`);
        reject(new Error(failure(label, cmd, code, out)));
      }
    });
  });
}

module.exports = { runWithProgress };
