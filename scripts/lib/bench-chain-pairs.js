'use strict';
// npm run bench:chain's paired parts: LevelDB against Pebble under mainnet's
// traffic on a state larger than the node's memory (runs A, B, A, B, ...),
// and the peers pair on the busy chain (./run.sh ab).

const { runOnce, scenario } = require('./bench-chain-run');
const { windowFigures, schedule, armsTable, armsKv, runLine, fmt, fmtRatio } = require('./bench-chain-figures');

const ENGINE_KEYS = [
  'disk_read_bytes_per_block',
  'disk_write_bytes_per_block',
  'disk_read_bytes_per_request',
  'disk_write_bytes_per_request',
  'disk_write_bytes_dirtied_per_block',
  'disk_write_bytes_dirtied_per_request',
  'import_p50_ms',
  'import_p99_ms',
  'client_import_p50_ms',
  'client_import_p99_ms',
  'head_lag_s_worst',
  'head_lag_blocks_worst',
  'share_behind',
  'cpu_ms_per_request',
  'cpu_ms_per_request_net_of_chain',
  'rps',
  'blocks',
  'gas_per_block',
];

// the key=value figures: the table's less the window's own shape (rate, blocks, gas)
const ENGINE_KV = ENGINE_KEYS.filter((k) => !['rps', 'blocks', 'gas_per_block', 'head_lag_blocks_worst'].includes(k));

const ENGINE_LINE = [
  'disk_read_bytes_per_block',
  'disk_write_bytes_per_block',
  'import_p50_ms',
  'client_import_p50_ms',
  'head_lag_s_worst',
  'cpu_ms_per_request',
  'blocks',
];

/**
 * scenarios/leveldb.env (A) against scenarios/pebble.env (B), each run one window of mainnet's traffic on k.state with
 * MEMORY_MB=k.memoryMb, the lean generator at k.enginesRate requests/s; k.pairs pairs, A then B.
 */
async function engines(ctx) {
  const { k, reports, extra } = ctx;
  process.stderr.write(
    `bench:chain engines: leveldb.env against pebble.env, ${k.pairs} pairs (A, B, A, B, ...), one ${k.windowS} s window each: CHAIN_LOAD=mainnet at DEV_BLOCK_TIME_S=${k.blockS}, STATE=${k.state}, MEMORY_MB=${k.memoryMb}, GENERATOR=lean at RATE=${k.enginesRate}. LevelDB's STATE=${k.state} is built on its first use (minutes for large; progress below), then cached.\n`,
  );
  const arms = { leveldb: [], pebble: [] };
  const pairs = Array.from({ length: k.pairs }, () => ({ a: null, b: null }));
  let failed = 0;
  for (const { arm, rep } of schedule(['leveldb', 'pebble'], k.pairs)) {
    const label = `engines ${arm} #${rep}`;
    const env = {
      RUNTIME: 'host',
      REPORTS_DIR: reports,
      CHAIN_LOAD: 'mainnet',
      DEV_BLOCK_TIME_S: String(k.blockS),
      STATE: k.state,
      MEMORY_MB: String(k.memoryMb),
      GENERATOR: 'lean',
      RATE: String(k.enginesRate),
      DURATION_S: String(k.windowS),
      WARMUP_S: String(k.warmupS),
      IDLE_S: String(k.idleS),
      NAME: `chain-engines-${arm}-${rep}`,
      ...extra,
    };
    const r = await runOnce(label, [scenario(`${arm}.env`)], env, { unset: ['CONCURRENCY'] });
    const f = r.ok ? windowFigures(r.doc) : null;
    if (!r.ok) failed++;
    else process.stdout.write(`${runLine(label, f, ENGINE_LINE)} (${r.dir}, ${r.seconds} s)\n`);
    arms[arm].push(f);
    pairs[rep - 1][arm === 'leveldb' ? 'a' : 'b'] = f;
  }
  const named = [
    { name: 'leveldb', records: arms.leveldb },
    { name: 'pebble', records: arms.pebble },
  ];
  process.stdout.write(
    `\nengines: A leveldb, B pebble; ${k.pairs} pairs, ${failed} runs failed (a pair with a failed run is left out of B/A)\n${armsTable(named, ENGINE_KEYS, pairs)}\n\n`,
  );
  return {
    failed,
    kv: { engines_pairs: k.pairs, engines_failed: failed, ...armsKv('engines', named, ENGINE_KV, pairs) },
  };
}

// ab's idle baselines run under the chain's traffic (only a run pauses the feed for a quiet one), so its net figure is
// net of the chain's work; it has no cpu_ms_per_request_net_of_chain.
const PEER_KEYS = [
  'cpu_ms_per_request',
  'cpu_ms_per_request_net',
  'import_p50_ms',
  'import_p99_ms',
  'client_import_p50_ms',
  'head_lag_s_p99',
  'head_lag_s_worst',
  'share_behind',
  'rps',
  'blocks',
];

/**
 * ./run.sh ab scenarios/peers-4.env scenarios/peers-50.env on mainnet's traffic: B/A of CPU per request, and each
 * side's keeping up.
 */
async function peers(ctx) {
  const { k, reports, extra } = ctx;
  process.stderr.write(
    `bench:chain peers: ./run.sh ab peers-4.env peers-50.env with CHAIN_LOAD=mainnet at DEV_BLOCK_TIME_S=${k.blockS}, ${k.abWindowS} s windows, at most ${k.abMin} minutes of pairs\n`,
  );
  const env = {
    REPORTS_DIR: reports,
    CHAIN_LOAD: 'mainnet',
    DEV_BLOCK_TIME_S: String(k.blockS),
    DURATION_S: String(k.abWindowS),
    WARMUP_S: '10',
    IDLE_S: '5',
    AB_MAX_S: String(k.abMin * 60),
    ...extra,
  };
  const r = await runOnce('peers pair', ['ab', scenario('peers-4.env'), scenario('peers-50.env')], env, {
    file: 'ab.json',
  });
  const doc = r.doc;
  if (!doc || !Array.isArray(doc.pairs) || !doc.pairs.length) return { failed: 1, kv: { peers_failed: 1 } };
  const pairs = doc.pairs.map((p) => ({ a: windowFigures(p.a), b: windowFigures(p.b) }));
  const named = [
    { name: 'peers-4', kv: 'a', records: pairs.map((p) => p.a) },
    { name: 'peers-50', kv: 'b', records: pairs.map((p) => p.b) },
  ];
  const cpu = doc.figures && doc.figures.cpu_ms_per_request;
  const nodes = doc.a && doc.a.provenance ? doc.a.provenance.scenario.NETWORK_NODES : 'n/a';
  process.stdout.write(
    `\npeers: A peers-4, B peers-50, each on ${nodes} network nodes; ${doc.pairs.length} pairs (${doc.stop_reason || 'n/a'}) (${r.dir}, ${r.seconds} s)\nab's B/A of CPU per request: ${fmtRatio(cpu)}; net of its idle baselines, which ran under the chain's traffic (net of the chain's work): ${fmtRatio(doc.figures && doc.figures.cpu_ms_per_request_net)}\n${armsTable(named, PEER_KEYS, pairs)}\n\n`,
  );
  return {
    failed: r.ok ? 0 : 1,
    kv: {
      peers_pairs: doc.pairs.length,
      peers_failed: r.ok ? 0 : 1,
      peers_cpu_ratio: fmt(cpu && cpu.ratio, 4),
      peers_cpu_ci_low: cpu && cpu.ci95 ? cpu.ci95[0].toFixed(4) : 'n/a',
      peers_cpu_ci_high: cpu && cpu.ci95 ? cpu.ci95[1].toFixed(4) : 'n/a',
      peers_cpu_verdict: (cpu && cpu.verdict) || 'n/a',
      ...armsKv('peers', named, ['import_p50_ms', 'head_lag_s_p99', 'head_lag_s_worst', 'share_behind']),
    },
  };
}

module.exports = { engines, peers, ENGINE_KEYS, PEER_KEYS };
