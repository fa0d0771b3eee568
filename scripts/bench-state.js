#!/usr/bin/env node
'use strict';
// npm run bench:state [-- small medium ...]: builds each STATE profile (all
// when none is named) for geth into the cache, unless already there, and
// prints its size and build time. medium and large need about 11.4 GB of
// memory at geth init: do not build them on a machine others are measuring on.

const geth = require('../src/clients/geth');
const { ensureState } = require('../src/state/build');
const { PROFILES } = require('../src/state/profiles');

async function main() {
  const args = process.argv.slice(2);
  const engine = process.env.DB_ENGINE || 'pebble';
  const names = args.length ? args : Object.keys(PROFILES);
  const unknown = names.filter((n) => !PROFILES[n]);
  if (unknown.length) {
    process.stderr.write(`bench:state: no profile ${unknown.join(', ')} (profiles: ${Object.keys(PROFILES).join(', ')})\n`);
    process.exit(2);
  }
  const version = geth.defaults.CLIENT_VERSION;
  const log = (m) => process.stderr.write(`[bench:state] ${m}\n`);
  const bin = await geth.ensureBinary({ CLIENT_VERSION: version, CLIENT_BIN: '' }, log);
  // Ctrl-C or SIGTERM stops the build: geth stopped, the half-built folder removed (a second signal exits at once).
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      if (stop.signal.aborted) process.exit(130);
      log(`${sig}: stopping the build (geth, then the half-built folder)`);
      stop.abort();
    });
  }
  const rows = [];
  for (const name of names) {
    const st = await ensureState({ profile: name, bin, version, engine, log, signal: stop.signal });
    const m = st.manifest;
    rows.push({
      profile: name, engine, accounts: m.accounts, slots: m.slots, transactions: m.history.transactions, blocks: m.history.last_block,
      size_mib: Number((m.size_bytes / 2 ** 20).toFixed(1)), build_s: m.build_seconds, built_now: st.built, dir: st.dir,
    });
  }
  process.stdout.write(`${['profile', 'engine', 'accounts', 'slots', 'transactions', 'blocks', 'size MiB', 'build s', 'built now'].join('\t')}\n`);
  for (const r of rows) process.stdout.write(`${[r.profile, r.engine, r.accounts, r.slots, r.transactions, r.blocks, r.size_mib, r.build_s, r.built_now ? 'yes' : 'no (cached)'].join('\t')}\n`);
  process.stdout.write(`${JSON.stringify(rows)}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench:state: ${err.message}\n`);
  process.exit(1);
});
