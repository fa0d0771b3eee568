'use strict';
// ./run.sh record --listen HOST:PORT --to URL --out FILE [--to-ws URL]
// ./run.sh mix FILE [--name NAME]
// Bad arguments: a message and exit status 2, nothing started.

const fs = require('node:fs');
const path = require('node:path');
const { startProxy } = require('./proxy');
const { publicOrigin, formatTally } = require('./capture');
const { deriveMix, readCapture, mixYaml, leftOut } = require('./mix');

const RECORD_USAGE =
  'usage: ./run.sh record [--listen [HOST:]PORT] --to URL --out FILE [--to-ws URL]\n  default --listen 127.0.0.1:8645';
const MIX_USAGE =
  "usage: ./run.sh mix FILE [--name NAME] [--replace yes] [--writes yes]   writes workloads/<NAME>.yml (NAME: the file name without its extension; an existing one only with --replace yes; the capture's transactions become tx.transfer only with --writes yes)";

/** --flag value pairs; returns {opts} or {error}. */
function parseFlags(args, allowed) {
  const opts = {};
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const [flag, inline] = a.split(/=(.*)/s);
    const name = flag.slice(2);
    if (!allowed.includes(name)) return { error: `unknown option ${flag}` };
    const value = inline !== undefined ? inline : args[++i];
    if (value === undefined || value === '') return { error: `${flag} needs a value` };
    opts[name] = value;
  }
  return { opts, positional };
}

/** [HOST:]PORT -> {host, port}; the host defaults to 127.0.0.1. */
function parseListen(raw) {
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d+)$/.exec(raw);
  if (!m || Number(m[2]) > 65535) return null;
  return { host: m[1] ? m[1].replace(/^\[|\]$/g, '') : '127.0.0.1', port: Number(m[2]) };
}

function checkUrl(raw, flag) {
  try {
    const u = new URL(raw);
    if (!['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol))
      return `${flag}: expected an http(s):// or ws(s):// URL`;
    return null;
  } catch {
    return `${flag}: expected an http(s):// or ws(s):// URL`; // the value itself may hold a secret: not echoed
  }
}

function usageError(usage, message) {
  process.stderr.write(`chainperf: ${message}\n${usage}\n`);
  return 2;
}

/**
 * ./run.sh record: runs until SIGINT or SIGTERM, then prints the counts per method; the capture's path last on stdout.
 */
async function record(args) {
  const { opts, positional, error } = parseFlags(args, ['listen', 'to', 'to-ws', 'out']);
  if (error) return usageError(RECORD_USAGE, error);
  if (positional.length) return usageError(RECORD_USAGE, `unexpected argument ${positional[0]}`);
  if (!opts.to) return usageError(RECORD_USAGE, '--to URL (the node) is required');
  if (!opts.out) return usageError(RECORD_USAGE, '--out FILE is required');
  const listen = parseListen(opts.listen || '127.0.0.1:8645');
  if (!listen) return usageError(RECORD_USAGE, `--listen: expected [HOST:]PORT, got "${opts.listen}"`);
  const bad = checkUrl(opts.to, '--to') || (opts['to-ws'] && checkUrl(opts['to-ws'], '--to-ws'));
  if (bad) return usageError(RECORD_USAGE, bad);
  if (!fs.existsSync(path.dirname(path.resolve(opts.out))))
    return usageError(RECORD_USAGE, `--out: no such folder: ${path.dirname(opts.out)}`);

  let proxy;
  try {
    proxy = await startProxy({ listen, to: opts.to, toWs: opts['to-ws'], out: opts.out });
  } catch (err) {
    return usageError(RECORD_USAGE, `cannot listen on ${listen.host}:${listen.port}: ${err.code || err.message}`);
  }
  const { host, port } = proxy.address;
  process.stderr.write(
    `chainperf record: http://${host}:${port} and ws://${host}:${port} -> ${publicOrigin(opts.to)}; appending to ${opts.out}; Ctrl-C to stop\n`,
  );
  const summary = await new Promise((resolve) => {
    const stop = (sig) => {
      process.stderr.write(`chainperf record: ${sig}: stopping\n`);
      proxy.close().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  process.stderr.write(`${formatTally(summary).join('\n')}\n`);
  process.stdout.write(`${opts.out}\n`);
  return 0;
}

/** ./run.sh mix: the workload file's path last on stdout. */
function mix(args, { workloadsDir }) {
  const { opts, positional, error } = parseFlags(args, ['name', 'replace', 'writes']);
  if (error) return usageError(MIX_USAGE, error);
  if (positional.length !== 1) return usageError(MIX_USAGE, 'one capture FILE expected');
  const file = positional[0];
  if (!fs.existsSync(file)) return usageError(MIX_USAGE, `no such file: ${file}`);
  const name = opts.name || path.basename(file).replace(/\.[^.]*$/, '');
  if (!/^[A-Za-z0-9_.-]+$/.test(name))
    return usageError(MIX_USAGE, `--name: expected letters, digits, _ . or -, got "${name}"`);
  if (opts.writes && opts.writes !== 'yes')
    return usageError(MIX_USAGE, `--writes: expected yes, got "${opts.writes}"`);
  let derived;
  try {
    derived = deriveMix(readCapture(file), { writes: opts.writes === 'yes' });
  } catch (err) {
    return usageError(MIX_USAGE, `${file}: ${err.message}`);
  }
  const out = path.join(workloadsDir, `${name}.yml`);
  if (fs.existsSync(out) && !opts.replace)
    return usageError(MIX_USAGE, `workloads/${name}.yml exists: choose another --name, or add --replace yes`);
  fs.writeFileSync(out, mixYaml(derived, { source: path.basename(file) }));
  process.stderr.write(
    `chainperf mix: ${derived.requests} requests, ${Object.keys(derived.mix).length} methods in the mix${derived.not_in_mix.length ? ` (left out: ${leftOut(derived)})` : ''}\n`,
  );
  process.stdout.write(`${out}\n`);
  return 0;
}

module.exports = { record, mix, parseListen, parseFlags };
