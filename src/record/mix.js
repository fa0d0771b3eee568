'use strict';
// A workload from recorded traffic (./run.sh mix FILE): the share of each
// method becomes its weight in `mix:`, and what the capture says about the
// parameters goes beside it under `traffic:` (block ranges of eth_getLogs, how
// far behind the head blocks are asked for, batch sizes). loadMix reads only
// `mix:`; the `traffic:` table documents the capture the mix came from.

const fs = require('node:fs');
const yaml = require('js-yaml');
const { METHODS } = require('../chains/ethereum/params');
const { percentile } = require('../workload/samples');
const { methodClass } = require('../chains/ethereum/method-classes');

const WRITES = ['eth_sendRawTransaction', 'eth_sendTransaction'];

/** Methods whose last parameter (or params[0] for eth_getBlockByNumber) is a block number or tag. */
const BLOCK_PARAM = {
  eth_getBlockByNumber: (p) => p[0],
  eth_getBlockTransactionCountByNumber: (p) => p[0],
  eth_getBalance: (p) => p[1],
  eth_getCode: (p) => p[1],
  eth_getTransactionCount: (p) => p[1],
  eth_getStorageAt: (p) => p[2],
  eth_call: (p) => p[1],
  eth_estimateGas: (p) => p[1],
};

/** The capture's lines, parsed; a line that is not JSON is an error naming it. */
function readCapture(file) {
  const lines = [];
  const text = fs.readFileSync(file, 'utf8');
  let n = 0;
  for (const raw of text.split('\n')) {
    n++;
    if (!raw.trim()) continue;
    let l;
    try {
      l = JSON.parse(raw);
    } catch {
      throw new Error(`line ${n} is not JSON`);
    }
    if (typeof l.t !== 'number') throw new Error(`line ${n} has no arrival time "t": not a chainperf capture`);
    lines.push(l);
  }
  if (!lines.length) throw new Error('the capture holds no requests');
  return lines;
}

const isHexNumber = (x) => typeof x === 'string' && /^0x[0-9a-fA-F]+$/.test(x);

function distribution(values) {
  if (!values.length) return null;
  const s = Float64Array.from(values).sort();
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return {
    samples: values.length,
    mean: Number(mean.toFixed(3)),
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    max: s[s.length - 1],
  };
}

/** Blocks asked for: depth behind the head the proxy had seen, and named tags. */
function blockParams(lines) {
  const depth = [];
  const tags = {};
  const ranges = [];
  const note = (x, head) => {
    if (isHexNumber(x)) {
      if (head !== null && head !== undefined) depth.push(Math.max(0, head - Number.parseInt(x, 16)));
    } else if (typeof x === 'string') tags[x] = (tags[x] || 0) + 1;
  };
  for (const l of lines) {
    const p = Array.isArray(l.params) ? l.params : [];
    if (l.method === 'eth_getLogs' && p[0] && typeof p[0] === 'object') {
      const { fromBlock, toBlock } = p[0];
      if (isHexNumber(fromBlock) && isHexNumber(toBlock))
        ranges.push(Number.parseInt(toBlock, 16) - Number.parseInt(fromBlock, 16) + 1);
      note(fromBlock === undefined ? 'latest' : fromBlock, l.head);
    } else if (BLOCK_PARAM[l.method]) {
      const x = BLOCK_PARAM[l.method](p);
      note(x === undefined ? 'latest' : x, l.head);
    }
  }
  return { depth, tags, ranges };
}

/**
 * The mix a capture stands for.
 * @param {object[]} lines capture lines (capture.js)
 * @returns {{requests:number, mix:object, not_in_mix:string[], traffic:object}}
 */
function deriveMix(lines, { writes = false } = {}) {
  const counts = {};
  for (const l of lines) if (l.method) counts[l.method] = (counts[l.method] || 0) + 1;
  // A capture's transactions become signed transfers of chainperf's own (tx.transfer) only when asked for.
  const sent = writes ? (counts.eth_sendRawTransaction || 0) + (counts.eth_sendTransaction || 0) : 0;
  const inMixCounts = Object.fromEntries(Object.entries(counts).filter(([m]) => METHODS.includes(m)));
  if (sent) inMixCounts['tx.transfer'] = sent;
  const known = Object.keys(inMixCounts);
  if (!known.length)
    throw new Error(
      `none of the methods seen (${Object.keys(counts).join(', ') || 'none'}) is one chainperf can parameterize (${METHODS.join(', ')})`,
    );
  const inMix = known.reduce((n, m) => n + inMixCounts[m], 0);
  const mix = {};
  for (const m of known.sort((a, b) => inMixCounts[b] - inMixCounts[a] || a.localeCompare(b))) {
    mix[m] = Math.max(0.01, Number(((100 * inMixCounts[m]) / inMix).toFixed(2)));
  }
  const ts = lines.map((l) => l.t);
  const span = (Math.max(...ts) - Math.min(...ts)) / 1000;
  const batches = new Map();
  for (const l of lines) if (l.batch) batches.set(`${l.conn || 0}:${l.batch.seq}`, l.batch.size);
  const { depth, tags, ranges } = blockParams(lines);
  const sorted = (o) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1]));
  return {
    requests: lines.length,
    mix,
    not_in_mix: Object.keys(counts)
      .filter((m) => !METHODS.includes(m) && !(sent && WRITES.includes(m)))
      .sort(),
    traffic: {
      requests: lines.length,
      seconds: Number(span.toFixed(3)),
      rps: span > 0 ? Number((lines.length / span).toFixed(3)) : null,
      methods: sorted(counts),
      errors: lines.filter((l) => l.error).length,
      batches: {
        count: batches.size,
        requests_in_batches: lines.filter((l) => l.batch).length,
        size: distribution([...batches.values()]),
      },
      get_logs_block_range: distribution(ranges),
      block_depth: distribution(depth),
      block_tags: sorted(tags),
    },
  };
}

/**
 * The methods left out of the mix, with why: a write (--writes yes turns transactions into tx.transfer), an
 * administrative or debug method (never in a mix), or a read chainperf has no parameters for.
 */
function leftOut(d) {
  return d.not_in_mix
    .map((m) => {
      const cls = methodClass(m);
      if (cls === 'read') return `${m}: no parameter builder`;
      if (cls === 'write' && WRITES.includes(m)) return `${m}: write, --writes yes sends tx.transfer instead`;
      return `${m}: ${cls}`;
    })
    .join(', ');
}

/** The workload file's text. */
function mixYaml(d, { source }) {
  const header = [
    `# Derived by ./run.sh mix from the capture ${source}: ${d.requests} requests.`,
    '# mix: the share of each method chainperf can parameterize, in percent (its parameters are drawn from the',
    '# harvested pool of the chain measured, as for any mix). traffic: what the capture showed, for the record;',
    '# chainperf reads only mix: (see docs/workloads.md). methods lists every method seen, including any left out',
    `# of the mix${d.not_in_mix.length ? ` (${leftOut(d)})` : ''}; block_depth is how far behind the head`,
    '# seen by the proxy a numbered block was asked for; get_logs_block_range the blocks one eth_getLogs spans.',
  ];
  return `${header.join('\n')}\n${yaml.dump({ mix: d.mix, traffic: d.traffic }, { lineWidth: 120 })}`;
}

module.exports = { deriveMix, readCapture, mixYaml, leftOut };
