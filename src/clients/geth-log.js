// @ts-check
'use strict';
// What geth's log says that its metrics page cannot: its own time for each
// block it imported. Its chain/inserts timer is a resetting one (every read of
// the metrics page, Prometheus's too, empties it), so a window's imports are
// read from the log lines instead, one per block.

/** A Go duration as geth logs it (29.624ms, 512.3µs, 1.2s, 1m2.5s), in milliseconds; null when it is not one. */
function goDurationMs(text) {
  const unit = { h: 3600000, m: 60000, s: 1000, ms: 1, µs: 0.001, us: 0.001, ns: 0.000001 };
  let ms = 0;
  let rest = text;
  for (;;) {
    const m = /^(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)/.exec(rest);
    if (!m) break;
    ms += Number(m[1]) * unit[m[2]];
    rest = rest.slice(m[0].length);
  }
  return rest === '' && text !== '' ? ms : null;
}

/**
 * geth's own time for each block it imports: its log's "Imported new potential chain segment" line (one per block
 * handed over the engine API), whose elapsed is insertChain's, what its chain/inserts timer measures. Returns
 * [number, ms] for every such line of one block in text.
 * @returns {[number, number][]}
 */
function importsInLog(text) {
  /** @type {[number, number][]} */
  const out = [];
  const re = /Imported new potential chain segment\s+number=(\d+)\s.*?\bblocks=1\b.*?\belapsed=(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const ms = goDurationMs(m[2]);
    if (ms !== null) out.push([Number(m[1]), ms]);
  }
  return out;
}

/** The NetworkPeer's importLog: the parser, and what it reads. */
const IMPORT_LOG = {
  parse: importsInLog,
  describe:
    'the elapsed time geth logs for each block it imports ("Imported new potential chain segment", its insertChain: what its chain/inserts timer measures)',
};

module.exports = { goDurationMs, importsInLog, IMPORT_LOG };
