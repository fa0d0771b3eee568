'use strict';
// Small C programs chainperf ships as source (the native sender, the
// benchmark's references), compiled with the machine's C compiler (gcc,
// installed from Debian when missing and allowed) into chainperf's cache,
// named by a hash of their source: a changed source is built again, an
// unchanged one once.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ensureDebianTool } = require('./debian');
const { cacheDir } = require('./cache');
const { log: defaultLog } = require('../util/log');

/** The binary of the C source `source` (what: how the log names it), built unless the cache has it; its path. */
async function ensureCProgram(source, what, log = defaultLog) {
  const src = fs.readFileSync(source);
  const hash = crypto.createHash('sha256').update(src).digest('hex').slice(0, 12);
  const bin = cacheDir('tools', `${path.basename(source, '.c')}-${hash}`);
  if (fs.existsSync(bin)) return bin;
  const gcc = await ensureDebianTool('gcc', 'gcc', log);
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  const tmp = `${bin}.${process.pid}.tmp`;
  log(`building ${what} (${path.relative(process.cwd(), source)}) with ${gcc}, a few seconds`);
  try {
    execFileSync(gcc, ['-O2', '-Wall', '-o', tmp, source], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    throw new Error(
      `building ${what} failed: ${String(err.stderr || err.message)
        .trim()
        .slice(0, 2000)}`,
    );
  }
  fs.renameSync(tmp, bin); // whole or not at all: a build cut short leaves only its temporary file
  return bin;
}

const NATIVE_SENDER = path.join(
  __dirname,
  '..',
  'workload',
  'engines',
  'artillery-engine-chainperf',
  'native-sender.c',
);

/** LEAN_SENDER=native's program (native-sender.c). */
const ensureNativeSender = (log = defaultLog) => ensureCProgram(NATIVE_SENDER, 'the native sender', log);

module.exports = { ensureCProgram, ensureNativeSender, NATIVE_SENDER };
