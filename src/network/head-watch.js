// @ts-check
'use strict';
// Does the node keep up: its head, looked at HEAD_EVERY_MS (4 times a second)
// through its own eth_blockNumber, against the network's head as the engine-API
// driver made it (the producer's imports, and when); the node's block imports
// as the driver handed them over; geth's own import timer where the node has
// one. Each measured window gets its record (head lag, import times, the
// chart's series); a fault's catch-up is read from the same looks. The
// arithmetic is measure/keep-up.js's.

const fs = require('node:fs');
const { rpcCall } = require('../util/rpc');
const { percentile } = require('../stats');
const { lagAt, lagFigures, lagSeries, importFigures, staleAnswers, catchUp } = require('../measure/keep-up');

const HEAD_EVERY_MS = 250;
const SAMPLES_MAX = 400000; // a day of looks at 4 a second per node; the oldest go first

/** One look at a node's head, unless its last is still unanswered; a node that does not answer gives no sample. */
async function lookAt(m) {
  if (m.busy) return;
  m.busy = true;
  const at = Date.now();
  try {
    const head = Number(await rpcCall(m.rpcUrl, 'eth_blockNumber', [], { timeoutMs: 2000 }));
    m.samples.push({ at_ms: at, head });
    if (m.samples.length > SAMPLES_MAX) m.samples.shift();
  } catch {
    // unanswered: no sample
  } finally {
    m.busy = false;
  }
}

/**
 * Looks at each measured node's head every everyMs; a look still unanswered when the next is due is not doubled (the
 * record's samples are the looks answered, so a node too busy to answer shows as fewer samples than 4 a second).
 * @param {{driver: {chain: () => import('../measure/keep-up').Chain, stats: {imports: Record<string, any[]>}},
 *   members: {name: string, rpcUrl: string, logFile?: string}[], everyMs?: number,
 *   importLog?: {parse: (text: string) => [number, number][], describe: string}|null}} o importLog: the client's
 *   own import times, read from each member's log where it has a file being written
 */
function startHeadWatch({ driver, members, importLog = null, everyMs = HEAD_EVERY_MS }) {
  const byName = new Map(
    members.map((m) => [m.name, { ...m, samples: [], busy: false, own: ownImports(m.logFile, importLog) }]),
  );
  const timer = setInterval(() => {
    for (const m of byName.values()) lookAt(m);
  }, everyMs);
  const first = members[0].name;
  const source = `eth_blockNumber of the node every ${everyMs} ms (the look's sending time), against the network's head as chainperf's engine-API driver made it (the producer's imports)`;

  /** A window's record for one node: head lag, the share of looks behind, import times as the driver saw them. */
  const nodeRecord = (name, fromMs, toMs) => {
    const m = byName.get(name);
    const chain = driver.chain();
    const handed = driver.stats.imports[name] || [];
    return {
      head_lag: { ...lagFigures(chain, m.samples, fromMs, toMs), period_ms: everyMs, source },
      import_ms: {
        ...importFigures(handed, fromMs, toMs),
        source:
          "from engine_newPayloadV4 sent to the node to its engine_forkchoiceUpdatedV3 answered VALID (the node's head is then the block), as the driver saw it",
        ...(m.own ? { client: m.own.figures(handed, fromMs, toMs) } : {}),
      },
    };
  };
  return {
    /** The window's keep-up record: the node under test's, each replica's with several. */
    windowRecord(fromMs, toMs) {
      const own = nodeRecord(first, fromMs, toMs);
      const replicas =
        members.length > 1 ? members.map((m) => ({ replica: m.name, ...nodeRecord(m.name, fromMs, toMs) })) : null;
      return { ...own, ...(replicas ? { by_replica: replicas } : {}) };
    },
    /** The window's head lag per second (the most behind in each), for the chart. */
    series: (fromMs, toMs) => lagSeries(driver.chain(), byName.get(first).samples, fromMs, toMs),
    /** Of the answers naming a block ([arrived_ms, block]), those older than the network's head then. */
    staleAnswers: (answers, fromMs, toMs) => ({
      ...staleAnswers(driver.chain(), answers, fromMs, toMs),
      source:
        "answers to eth_blockNumber and to eth_getBlockByNumber('latest') whose block is older than the network's head when the answer arrived",
    }),
    /** A node handed blocks again at restoreMs: how fast it reached the network's head. */
    catchUp: (name, restoreMs) => catchUp(driver.chain(), byName.get(name).samples, restoreMs),
    /** The latest look at a node's head ({at_ms, head}, or undefined). */
    lastLook: (name) => byName.get(name).samples.at(-1),
    /** A node's lag at its latest look ({blocks, seconds, at_ms}), or null before its first answered look. */
    lagNow(name) {
      const look = byName.get(name).samples.at(-1);
      const lag = look ? lagAt(driver.chain(), look.at_ms, look.head) : null;
      return lag ? { ...lag, at_ms: look.at_ms } : null;
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * The client's own time for each block it imported, read from its log as it grows (a node whose log is a file being
 * written: the host runtime's); null without one. figures(): over the blocks handed to it in a window.
 */
function ownImports(logFile, importLog) {
  if (!logFile || !importLog) return null;
  const byNumber = new Map();
  let offset = 0;
  let partial = '';
  const readNew = () => {
    let fd = null;
    try {
      fd = fs.openSync(logFile, 'r');
      const size = fs.fstatSync(fd).size;
      if (size <= offset) return;
      const buf = Buffer.alloc(size - offset);
      fs.readSync(fd, buf, 0, buf.length, offset);
      offset = size;
      const text = partial + buf.toString('utf8');
      const cut = text.lastIndexOf('\n') + 1;
      partial = text.slice(cut);
      for (const [n, ms] of importLog.parse(text.slice(0, cut))) byNumber.set(n, ms);
    } catch {
      // no log yet, or gone: nothing new
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
  };
  return {
    figures(handed, fromMs, toMs) {
      readNew();
      const numbers = handed.filter((x) => x.sent_ms >= fromMs && x.sent_ms < toMs).map((x) => x.number);
      const ms = numbers.filter((n) => byNumber.has(n)).map((n) => byNumber.get(n));
      const sorted = [...ms].sort((a, b) => a - b);
      const r = (x) => (x === null ? null : Number(x.toFixed(3)));
      return {
        blocks: ms.length,
        p50_ms: r(percentile(sorted, 50)),
        p99_ms: r(percentile(sorted, 99)),
        max_ms: sorted.length ? r(sorted.at(-1)) : null,
        source: `${importLog.describe}, for the blocks handed to the node in the window`,
      };
    },
  };
}

module.exports = { startHeadWatch, HEAD_EVERY_MS };
