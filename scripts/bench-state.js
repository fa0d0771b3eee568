#!/usr/bin/env node
'use strict';
// npm run bench:state [-- small medium ...]: builds each STATE profile (all
// when none is named) for geth into the cache, unless already there, and
// prints its size and build time. For geth 1.16.7 statewriter writes large in
// about a minute with about 1.6 GB of memory, xlarge (geth 1.16.7 only) in
// about 34 minutes with 2.1 GiB and 34 GiB of free disk; other geth versions
// need about 11.4 GB at geth init for medium and large: do not build them on
// a machine others are measuring on.
// CLIENT=polkadot-omni-node builds the Substrate profiles instead (on
// CHAIN_SPEC, bridge-hub-polkadot unless set; the binary must be built) and
// prints the builder node's peak memory too.

const clients = require('../src/clients');
const { ensureState } = require('../src/state/build');
const { PROFILES: GETH_PROFILES } = require('../src/state/profiles');
const substrate = require('../src/chains/substrate/state');
const { ensureChainSpec } = require('../src/chains/substrate/specs');
const { plainVersion } = require('../src/state/restore');

const CLIENT = process.env.CLIENT || 'geth';
const PROFILES = CLIENT === 'geth' ? GETH_PROFILES : substrate.PROFILES;

/** One row of the table for a built state. */
function row(name, engine, st) {
  const m = st.manifest;
  if (CLIENT === 'geth') {
    return {
      profile: name,
      engine,
      accounts: m.accounts,
      slots: m.slots,
      transactions: m.history.transactions,
      blocks: m.history.last_block,
      size_mib: Number((m.size_bytes / 2 ** 20).toFixed(1)),
      build_s: m.build_seconds,
      built_now: st.built,
      dir: st.dir,
    };
  }
  return {
    profile: name,
    engine,
    accounts: m.accounts,
    slots: 0,
    transactions: 0,
    blocks: m.blocks,
    size_mib: Number((m.size_bytes / 2 ** 20).toFixed(1)),
    build_s: m.build_seconds,
    built_now: st.built,
    dir: st.dir,
    spec_mib: Number((m.build_spec.bytes / 2 ** 20).toFixed(1)),
    peak_rss_gib: Number((m.builder_peak_rss_bytes / 2 ** 30).toFixed(2)),
  };
}

async function main() {
  const args = process.argv.slice(2);
  const client = clients[CLIENT];
  if (!client || !client.stateRuntimes) {
    process.stderr.write(`bench:state: CLIENT=${CLIENT} builds no STATE profile (geth or polkadot-omni-node)\n`);
    process.exit(2);
  }
  const engine = process.env.DB_ENGINE || client.dbEngines[0];
  const names = args.length ? args : Object.keys(PROFILES);
  const unknown = names.filter((n) => !PROFILES[n]);
  if (unknown.length) {
    process.stderr.write(
      `bench:state: no profile ${unknown.join(', ')} (profiles: ${Object.keys(PROFILES).join(', ')})\n`,
    );
    process.exit(2);
  }
  const log = (m) => process.stderr.write(`[bench:state] ${m}\n`);
  const s = { CLIENT_VERSION: client.defaults.CLIENT_VERSION, CLIENT_BIN: process.env.CLIENT_BIN || '' };
  const bin = await client.ensureBinary(s, log);
  const version = CLIENT === 'geth' ? s.CLIENT_VERSION : plainVersion(client.binaryVersion(bin));
  const specSource =
    CLIENT === 'geth' ? null : await ensureChainSpec(process.env.CHAIN_SPEC || 'bridge-hub-polkadot', log);
  // Ctrl-C or SIGTERM stops the build: geth stopped, the half-built folder removed (a second signal exits at once).
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      if (stop.signal.aborted) process.exit(130);
      log(`${sig}: stopping the build (the node, then the half-built folder)`);
      stop.abort();
    });
  }
  const rows = [];
  for (const name of names) {
    const st =
      CLIENT === 'geth'
        ? await ensureState({ profile: name, bin, version, engine, log, signal: stop.signal, copy: false }) // no run
        : await substrate.ensureSubstrateState({
            profile: name,
            client: CLIENT,
            bin,
            version,
            engine,
            specSource,
            log,
            signal: stop.signal,
          });
    rows.push(row(name, engine, st));
  }
  const extra = CLIENT === 'geth' ? [] : ['client', 'spec MiB', 'builder peak GiB'];
  process.stdout.write(
    `${['profile', 'engine', 'accounts', 'slots', 'transactions', 'blocks', 'size MiB', 'build s', 'built now', ...extra].join('\t')}\n`,
  );
  for (const r of rows) {
    const more = CLIENT === 'geth' ? [] : [CLIENT, r.spec_mib, r.peak_rss_gib];
    process.stdout.write(
      `${[r.profile, r.engine, r.accounts, r.slots, r.transactions, r.blocks, r.size_mib, r.build_s, r.built_now ? 'yes' : 'no (cached)', ...more].join('\t')}\n`,
    );
  }
  process.stdout.write(`${JSON.stringify(rows)}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench:state: ${err.message}\n`);
  process.exit(1);
});
