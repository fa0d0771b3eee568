#!/usr/bin/env node
'use strict';
// A check of chain traffic (CHAIN_LOAD) on a real network, without a run:
// starts --nodes geth network nodes the way src/network/host-network.js does
// (the first builds the blocks, chainperf's engine-API driver makes a block
// every block time), with the flags the profile needs (chainNeeds), starts
// the feed against them, and after a warm-up (--warmup, at least 3 blocks)
// measures --seconds: the blocks' gas (mean, median, 10th and 90th
// percentiles) against the profile's, transactions a second, sends behind or
// refused, the feed's CPU in cores, and the nodes' CPU. Not part of CI;
// nothing else should measure meanwhile.
//
//   node scripts/chain-load-check.js --profile mainnet --block-time 2 --state small --seconds 60
//
// --profile: a built-in profile or a file (default mainnet); --block-time: the block time in seconds (default the
// profile's slot); --state: dev (geth's dev genesis with the profile's gas limit) or a STATE profile (small, ...: a
// copy of it per node, built into the cache when missing); --distribution: the STATE profile's (default skewed);
// --nodes: network nodes (default 2, the feed sends through each); --feed-cpus, --node-cpus: taskset lists (default
// every core); --cgroup: the feed in a cgroup of its own, as a run gives it; --blocks: each block of the window;
// --geth-args: more flags for every node; --keep: keep the work folder. The last line is key=value pairs.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { parseArgs } = require('node:util');
const geth = require('../src/clients/geth');
const { freePorts } = require('../src/util/net');
const { Cgroup } = require('../src/platform/cgroup');
const { rpcCall } = require('../src/util/rpc');
const { sleep } = require('../src/util/time');
const { startEngineDriver } = require('../src/network/engine-driver');
const { writeJwtSecret } = require('../src/network/engine-api');
const { peerMesh } = require('../src/network/members');
const { ensureScenarioState } = require('../src/state/restore');
const { signerWallets } = require('../src/state/profiles');
const { readChainLoad, chainNeeds } = require('../src/network/chain-load/profiles');
const { startChainLoad, procCpuSeconds } = require('../src/network/chain-load/feed');
const { chainArgs } = require('../src/clients/geth-member');
const { feedWindow, feedVerdict } = require('../src/network/chain-load/rate');

const ALL = `0-${os.cpus().length - 1}`;
const { values: opt } = parseArgs({
  options: {
    profile: { type: 'string', default: 'mainnet' },
    'block-time': { type: 'string' },
    state: { type: 'string', default: 'dev' },
    distribution: { type: 'string', default: 'skewed' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '0' },
    nodes: { type: 'string', default: '2' },
    'feed-cpus': { type: 'string', default: ALL },
    'node-cpus': { type: 'string', default: ALL },
    cgroup: { type: 'boolean', default: false },
    blocks: { type: 'boolean', default: false },
    'geth-args': { type: 'string', default: '' },
    keep: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(opt.seconds);
const WARMUP_S = Number(opt.warmup);
const STATE = opt.state;
const NODES = Number(opt.nodes);
/** Every network node's flags for the profile (chainNeeds, as a run gives them), and --geth-args. */
const networkArgs = (profile) => [...chainArgs(chainNeeds(profile)), ...opt['geth-args'].split(' ').filter(Boolean)];
const log = (m) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${m}\n`);

/** Per node a data folder: the dev genesis with the profile's gas limit, or a copy of the STATE profile. */
async function dataFolders(dir, bin, profile) {
  const s = { CHAIN: 'ethereum', CLIENT: 'geth', STATE, DB_ENGINE: 'pebble' };
  const dirs = Array.from({ length: NODES }, (_, i) => path.join(dir, `node-${i + 1}`));
  if (STATE === 'dev') {
    const file = path.join(dir, 'genesis.json');
    geth.network.writeGenesis(bin, file);
    const g = JSON.parse(fs.readFileSync(file, 'utf8'));
    g.gasLimit = `0x${profile.gas_limit.toString(16)}`;
    fs.writeFileSync(file, JSON.stringify(g));
    for (const d of dirs) geth.network.init(bin, d, file, 'pebble');
    return { dirs, funderKey: geth.network.devKey, state: null };
  }
  const st = await ensureScenarioState(s, { bin, version: '1.16.7', log });
  for (const d of dirs) execFileSync('cp', ['-a', '--reflink=auto', st.dataDir, d]);
  // the feed draws over every account and slot the profile holds, as the workload's draws do (state_space)
  const m = st.manifest;
  const state = { accounts: m.accounts, slots: m.slots, distribution: opt.distribution };
  return { dirs, funderKey: signerWallets().at(-1).privateKey, state };
}

/** Starts the network nodes (node 1 with the producer's flags), peered in a full mesh. */
async function startNodes(dir, bin, dirs, profile) {
  const jwtFile = writeJwtSecret(path.join(dir, 'jwt.hex'));
  const peers = [];
  for (const [i, dataDir] of dirs.entries()) {
    const ports = await freePorts(['rpc', 'metrics', 'p2p', 'auth']);
    const nodeKeyHex = require('node:crypto').randomBytes(32).toString('hex');
    const cmd = geth.network.peerCommand({ DB_ENGINE: 'pebble' }, { dataDir, ports, network: { nodeKeyHex, jwtFile } });
    const args = [...cmd.args, ...networkArgs(profile)];
    const out = fs.openSync(path.join(dir, `node-${i + 1}.log`), 'a');
    const child = spawn('taskset', ['-c', opt['node-cpus'], bin, ...args], { stdio: ['ignore', out, out] });
    peers.push({
      name: `network-${i + 1}`,
      child,
      pid: child.pid,
      rpcUrl: cmd.rpcUrl,
      authUrl: `http://127.0.0.1:${ports.auth}`,
      enode: geth.network.enode(nodeKeyHex, ports.p2p),
    });
  }
  await peerMesh(peers, { net: geth.network, members: [] });
  return { peers, jwtFile };
}

const loadAvg = () => os.loadavg()[0].toFixed(2);

/** The measured window's figures, printed and returned as key=value pairs. */
function report(verdict, w, nodesCpu, before, after) {
  const g = verdict.gas || { mean: 0, median: 0, p10: 0, p90: 0, blocks: 0 };
  const limits = w.blocks.map((b) => b.gas_limit);
  log(
    `blocks ${g.blocks}: gas mean ${g.mean.toFixed(0)}, median ${g.median}, p10 ${g.p10}, p90 ${g.p90} (target ${w.target_gas_per_block}); gas limit ${Math.max(...limits)} to ${Math.min(...limits)}`,
  );
  log(
    `tx/s ${verdict.tx_per_s.toFixed(2)} (aimed ${verdict.aimed_tx_per_s.toFixed(2)}), behind ${w.sends_behind}, refused ${w.failed}, feed ${verdict.cpu_cores.toFixed(3)} cores, nodes ${nodesCpu.map((c) => c.toFixed(3)).join(' ')} cores`,
  );
  log(
    `gas per kind ${JSON.stringify(after.gas_by_kind)}; included ${after.included_total - before.included_total}; not included ${after.watch.not_included}; base fee ${after.base_fee_wei}; last error ${after.last_error}`,
  );
  const real = Object.fromEntries(
    Object.keys(after.included_gas).map((k) => [
      k,
      Math.round(
        (after.included_gas[k] - (before.included_gas[k] || 0)) / (after.included[k] - (before.included[k] || 0)),
      ),
    ]),
  );
  log(`gas per kind in the window's receipts ${JSON.stringify(real)}; drift ${JSON.stringify(after.gas_drift)}`);
  if (opt.blocks)
    for (const b of w.blocks)
      log(`block ${b.number} t=${b.timestamp} seen=${b.seen_ms} gas=${b.gas_used} txs=${b.txs} ours=${b.ours}`);
  log(verdict.ok ? 'held within 5%' : `WARNING: ${verdict.warning}`);
  return {
    blocks: g.blocks,
    gas_mean: Math.round(g.mean),
    gas_median: g.median,
    gas_p10: g.p10,
    gas_p90: g.p90,
    target: w.target_gas_per_block,
    tx_per_s: verdict.tx_per_s.toFixed(2),
    aimed: verdict.aimed_tx_per_s.toFixed(2),
    behind: w.sends_behind,
    refused: w.failed,
    feed_cores: verdict.cpu_cores.toFixed(3),
    nodes_cores: nodesCpu.map((c) => c.toFixed(3)).join('/'),
    ok: verdict.ok,
    load: loadAvg(),
  };
}

/** After the warm-up, the window: its figures on stderr, key=value pairs on stdout. */
async function measure(feed, peers, profile) {
  await sleep(Math.max(WARMUP_S, 3 * profile.block_time_s) * 1000);
  const before = feed.stats();
  const cpu0 = [feed.cpuSeconds(), ...peers.map((p) => procCpuSeconds(p.pid))];
  await sleep(SECONDS * 1000);
  const after = feed.stats();
  const cpu1 = [feed.cpuSeconds(), ...peers.map((p) => procCpuSeconds(p.pid))];
  const w = { ...feedWindow(before, after), cpu_s: cpu1[0] - cpu0[0] };
  const nodesCpu = peers.map((p, i) => (cpu1[i + 1] - cpu0[i + 1]) / w.seconds);
  const kv = report(feedVerdict(w), w, nodesCpu, before, after);
  process.stdout.write(
    `${Object.entries({ profile: profile.name, block_time_s: profile.block_time_s, state: STATE, ...kv })
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}\n`,
  );
}

async function main() {
  const { profile, errors } = readChainLoad(opt.profile, {
    slotS: Number(opt['block-time']) || null,
  });
  if (errors.length) throw new Error(errors.join('\n'));
  const bin = geth.binaryPath({ CLIENT_VERSION: '1.16.7' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chain-load-check-'));
  const stops = [];
  process.once('SIGINT', () => {
    log('interrupted: stopping the feed, the driver and the nodes');
    cleanUp(stops, dir).finally(() => process.exit(130));
  });
  try {
    const { dirs, funderKey, state } = await dataFolders(dir, bin, profile);
    const { peers, jwtFile } = await startNodes(dir, bin, dirs, profile);
    stops.push(() => Promise.all(peers.map((p) => endChild(p.child))));
    const head = await rpcCall(peers[0].rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
    const driver = startEngineDriver({
      nodes: peers.map((p) => ({ name: p.name, authUrl: p.authUrl })),
      secretHex: fs.readFileSync(jwtFile, 'utf8'),
      head: head.hash,
      headTimeS: Number(head.timestamp),
      periodS: profile.block_time_s,
      feeRecipient: `0x${'00'.repeat(19)}01`,
      log,
    });
    stops.unshift(() => driver.stop());
    log(
      `${NODES} nodes on ${STATE}, head ${Number(head.number)} (gas limit ${Number(head.gasLimit)}); ${profile.name} at ${profile.block_time_s} s: ${profile.target_gas_per_block} gas a block; load ${loadAvg()}`,
    );
    // --cgroup: the feed in a cgroup of its own (its CPU read there), as a run's network would give it
    const group = opt.cgroup ? new Cgroup(`chainperf-check-${process.pid}/feed`, { cpus: opt['feed-cpus'] }) : null;
    if (group) stops.push(() => group.destroy());
    const feed = await startChainLoad({
      group,
      profile,
      urls: peers.map((p) => p.rpcUrl),
      funderKey,
      seed: 1,
      state,
      cpus: opt['feed-cpus'],
      log,
    });
    stops.unshift(() => feed.stop());
    await measure(feed, peers, profile);
  } finally {
    await cleanUp(stops, dir);
  }
}

/** Every stop tried (one that fails does not leave the others' processes up), then the work folder removed. */
async function cleanUp(stops, dir) {
  for (const stop of stops.splice(0))
    await Promise.resolve()
      .then(stop)
      .catch((err) => log(`clean-up: ${err.message}`));
  if (!opt.keep) fs.rmSync(dir, { recursive: true, force: true });
}

/** SIGTERM, and SIGKILL after 10 s; resolves once the process has exited. */
function endChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

main().catch((err) => {
  log(err.stack || err.message);
  process.exit(1);
});
