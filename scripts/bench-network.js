#!/usr/bin/env node
'use strict';
// npm run bench:network: what a local network (NETWORK_NODES) costs and what
// the peers pair gives on one. Nothing else should run on the machine.
//
// 1. geth-dev.env with NETWORK_NODES=0, 3 and 8 in turn (host runtime, one
//    window of BENCH_NET_WINDOW_S): per size, the node's CPU per request, its
//    peers (median), p2p bytes per request, transactions received by gossip,
//    and the network nodes' own CPU (s/s) and memory at the window's end.
// 2. ./run.sh ab scenarios/peers-4.env scenarios/peers-50.env with windows of
//    BENCH_NET_WINDOW_S and at most BENCH_NET_AB_MIN minutes of pairs: B/A of
//    CPU per request with its 95% interval, and per side the median peers and
//    p2p bytes per request over its windows.
// BENCH_NET_SIZES chooses the sizes of part 1 (empty: none), BENCH_NET_AB_MIN=0 leaves part 2 out.
// BENCH_NET_ENV adds keys to every run (KEY=value ...). The last line is
// key=value pairs for scripts.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { median } = require('../src/stats');
const { parseKv, kvLine } = require('./lib/kv');
const { runSh: runShowing, fmt } = require('./lib/run-sh');

const ROOT = path.join(__dirname, '..');
const WINDOW_S = Number(process.env.BENCH_NET_WINDOW_S || 20);
const AB_MIN = Number(process.env.BENCH_NET_AB_MIN || 8);
// BENCH_NET_SIZES: the network sizes of part 1 (empty: none)
const SIZES = (process.env.BENCH_NET_SIZES ?? '0 3 8').split(/\s+/).filter(Boolean).map(Number);

/** BENCH_NET_ENV's keys, read by main() (a malformed one is said, not thrown from here). */
let extra = {};

const runSh = (args, env) => runShowing(args, env, /network: |pairs? in|done:|failed/);

async function sizes(reports) {
  const out = {};
  for (const n of SIZES) {
    const env = {
      RUNTIME: 'host',
      REPORTS_DIR: reports,
      NETWORK_NODES: String(n),
      PEERS: '50',
      DURATION_S: String(WINDOW_S),
      NAME: `network-${n}`,
      ...extra,
    };
    const { dir } = await runSh([path.join(ROOT, 'scenarios', 'geth-dev.env')], env);
    const run = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
    const net = run.node && run.node.network;
    const seconds = (run.window.end_ms - run.window.start_ms) / 1000;
    const r = {
      status: run.status,
      cpu_ms_per_request: run.figures ? run.figures.cpu_ms_per_request : null,
      peers: net ? net.peers.median : 0,
      p2p_bytes_per_request: net ? net.p2p_in_bytes_per_request + net.p2p_out_bytes_per_request : 0,
      gossip: net ? net.gossip_transactions_in : 0,
      network_cpu_s_per_s: net && net.network_nodes_cpu_s !== undefined ? net.network_nodes_cpu_s / seconds : null,
      network_mib: net && net.network_nodes_memory_bytes ? net.network_nodes_memory_bytes / 2 ** 20 : null,
    };
    out[n] = r;
    process.stdout.write(
      `NETWORK_NODES=${n}: ${r.status}, ${fmt(r.cpu_ms_per_request, 3)} ms CPU/request, peers ${fmt(r.peers, 0)}, p2p ${fmt(r.p2p_bytes_per_request, 2)} bytes/request, ${r.gossip} transactions by gossip; the network nodes: ${fmt(r.network_cpu_s_per_s, 3)} CPU s/s, ${fmt(r.network_mib, 0)} MiB (${dir})\n`,
    );
  }
  return out;
}

/** Median of a per-window figure of one side of an A/B session. */
const sideMedian = (doc, side, get) =>
  median(
    doc.pairs
      .map((p) => p[side])
      .filter((w) => w && w.node && w.node.network)
      .map((w) => get(w.node.network)),
  );

async function peersPair(reports) {
  const env = {
    REPORTS_DIR: reports,
    DURATION_S: String(WINDOW_S),
    WARMUP_S: '10',
    IDLE_S: '5',
    AB_MAX_S: String(AB_MIN * 60),
    ...extra,
  };
  const { dir } = await runSh(
    ['ab', path.join(ROOT, 'scenarios', 'peers-4.env'), path.join(ROOT, 'scenarios', 'peers-50.env')],
    env,
  );
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'ab.json'), 'utf8'));
  const r = doc.figures.cpu_ms_per_request;
  const sides = ['a', 'b'].map((k) => ({
    peers: sideMedian(doc, k, (n) => n.peers.median),
    p2p: sideMedian(doc, k, (n) => n.p2p_in_bytes_per_request + n.p2p_out_bytes_per_request),
  }));
  process.stdout.write(
    `peers-4 against peers-50 on 8 network nodes: ${doc.pairs.length} pairs, B/A of CPU per request ${fmt(r.ratio, 4)} [${r.ci95 ? r.ci95.map((x) => x.toFixed(4)).join(', ') : 'n/a'}] ${r.verdict || ''}; peers ${fmt(sides[0].peers, 0)} against ${fmt(sides[1].peers, 0)}; p2p bytes/request ${fmt(sides[0].p2p, 2)} against ${fmt(sides[1].p2p, 2)} (${dir})\n`,
  );
  return { doc, r, sides };
}

async function main() {
  extra = parseKv(process.env.BENCH_NET_ENV || '', 'BENCH_NET_ENV');
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-network-'));
  process.stderr.write(
    `bench:network: NETWORK_NODES ${SIZES.join(', ')}, then the peers pair; ${WINDOW_S} s windows\n`,
  );
  const bySize = await sizes(reports);
  const pair = AB_MIN > 0 ? await peersPair(reports) : null;
  const figures = {};
  for (const [n, r] of Object.entries(bySize)) {
    figures[`n${n}_cpu_ms_per_request`] = fmt(r.cpu_ms_per_request, 4);
    figures[`n${n}_peers`] = fmt(r.peers, 0);
    figures[`n${n}_network_cpu_s_per_s`] = fmt(r.network_cpu_s_per_s, 3);
    figures[`n${n}_network_mib`] = fmt(r.network_mib, 0);
  }
  if (pair) {
    figures.peers_pair_pairs = pair.doc.pairs.length;
    figures.peers_pair_ratio = fmt(pair.r.ratio, 4);
    figures.peers_pair_ci_low = pair.r.ci95 ? pair.r.ci95[0].toFixed(4) : 'n/a';
    figures.peers_pair_ci_high = pair.r.ci95 ? pair.r.ci95[1].toFixed(4) : 'n/a';
    figures.peers_pair_verdict = pair.r.verdict || 'n/a';
    figures.peers_a = fmt(pair.sides[0].peers, 0);
    figures.peers_b = fmt(pair.sides[1].peers, 0);
  }
  process.stdout.write(`reports: ${reports}\n`);
  process.stdout.write(`${kvLine(figures)}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench:network: ${err.message}\n`);
  process.exit(1);
});
