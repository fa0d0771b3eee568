'use strict';
// Folded stacks ("root;caller;leaf count", one stack a line: the format of
// Brendan Gregg's FlameGraph and of inferno) are the one form every CPU
// profile takes here, whatever recorded it: a Go pprof profile is folded by
// pprofToFolded, perf's samples by inferno-collapse-perf. The tables of the
// report (top functions, self and total; the difference between two
// profiles) are computed from folded stacks alone.

const zlib = require('node:zlib');
const { Profile } = require('pprof-format');

const num = (x) => Number(x);

/** A frame name folded-safe: no ';' (the separator) and no line breaks. */
const cleanFrame = (name) =>
  String(name || '[unknown]')
    .replace(/;/g, ':')
    .replace(/[\r\n]+/g, ' ');

/**
 * Folds a pprof profile (gzipped or not) into stacks, root first, counted in
 * samples. Inlined functions become frames of their own, as in pprof itself.
 * @param {Buffer|Uint8Array} buf
 * @returns {{text:string, samples:number, duration_s:number|null, period_ns:number|null}}
 */
function pprofToFolded(buf) {
  const raw = buf[0] === 0x1f && buf[1] === 0x8b ? zlib.gunzipSync(buf) : buf;
  const p = Profile.decode(new Uint8Array(raw));
  const str = (i) => p.stringTable.strings[num(i)] || '';
  const types = p.sampleType.map((t) => str(t.type));
  const vi = Math.max(0, types.indexOf('samples'));
  const fn = new Map(p.function.map((f) => [num(f.id), cleanFrame(str(f.name))]));
  // Frames of one location, outermost first (pprof lists an inlined callee before its caller).
  const loc = new Map(
    p.location.map((l) => [
      num(l.id),
      l.line.length ? l.line.map((x) => fn.get(num(x.functionId))).reverse() : [`0x${num(l.address).toString(16)}`],
    ]),
  );
  const counts = new Map();
  let samples = 0;
  for (const s of p.sample) {
    const v = num(s.value[vi]);
    if (!v) continue;
    const frames = [...s.locationId].reverse().flatMap((id) => loc.get(num(id)) || ['[unknown]']);
    const key = frames.join(';');
    counts.set(key, (counts.get(key) || 0) + v);
    samples += v;
  }
  const text = [...counts].map(([k, v]) => `${k} ${v}`).join('\n');
  return {
    text: text ? `${text}\n` : '',
    samples,
    duration_s: p.durationNanos ? num(p.durationNanos) / 1e9 : null,
    period_ns: p.period ? num(p.period) : null,
  };
}

/** Parses folded text into [{frames, count}]; malformed lines are skipped. */
function parseFolded(text) {
  const out = [];
  for (const line of String(text).split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    const count = Number(line.slice(sp + 1));
    if (!(count > 0)) continue;
    out.push({ frames: line.slice(0, sp).split(';'), count });
  }
  return out;
}

/**
 * Self and total samples of every function: self where it is the leaf, total where it is anywhere on the stack (once
 * per stack).
 */
function functionCounts(stacks) {
  const fns = new Map();
  let total = 0;
  const get = (name) => {
    if (!fns.has(name)) fns.set(name, { self: 0, total: 0 });
    return fns.get(name);
  };
  for (const { frames, count } of stacks) {
    total += count;
    get(frames[frames.length - 1]).self += count;
    for (const name of new Set(frames)) get(name).total += count;
  }
  return { fns, total };
}

const share = (x, total) => (total ? Number((x / total).toFixed(4)) : 0);

/**
 * The share of samples whose stack holds a frame matching `re` (e.g. a client's networking packages): where the
 * node spent that part of its CPU, counted once per stack.
 */
function shareMatching(stacks, re) {
  let total = 0;
  let hit = 0;
  for (const st of stacks) {
    total += st.count;
    if (st.frames.some((f) => re.test(f))) hit += st.count;
  }
  return { samples: hit, of: total, share: total ? Number((hit / total).toFixed(4)) : null, frames: re.source };
}

/**
 * The top functions by share of samples.
 * @returns {{samples:number, by_self:object[], by_total:object[]}} rows {function, self, self_share, total,
 * total_share}
 */
function topFunctions(stacks, n = 15) {
  const { fns, total } = functionCounts(stacks);
  const rows = [...fns].map(([name, c]) => ({
    function: name,
    self: c.self,
    self_share: share(c.self, total),
    total: c.total,
    total_share: share(c.total, total),
  }));
  const by = (k) => [...rows].sort((a, b) => b[k] - a[k] || a.function.localeCompare(b.function)).slice(0, n);
  return { samples: total, by_self: by('self').filter((r) => r.self > 0), by_total: by('total') };
}

/**
 * The functions whose share of samples changed most from A to B (by total
 * share, then self), as rows {function, a_self_share, b_self_share,
 * a_total_share, b_total_share, delta_self, delta_total}.
 */
function diffFunctions(stacksA, stacksB, n = 20) {
  const A = functionCounts(stacksA);
  const B = functionCounts(stacksB);
  const names = new Set([...A.fns.keys(), ...B.fns.keys()]);
  const zero = { self: 0, total: 0 };
  const rows = [...names].map((name) => {
    const a = A.fns.get(name) || zero;
    const b = B.fns.get(name) || zero;
    const r = {
      function: name,
      a_self_share: share(a.self, A.total),
      b_self_share: share(b.self, B.total),
      a_total_share: share(a.total, A.total),
      b_total_share: share(b.total, B.total),
    };
    r.delta_self = Number((r.b_self_share - r.a_self_share).toFixed(4));
    r.delta_total = Number((r.b_total_share - r.a_total_share).toFixed(4));
    return r;
  });
  rows.sort(
    (x, y) =>
      Math.abs(y.delta_total) - Math.abs(x.delta_total) ||
      Math.abs(y.delta_self) - Math.abs(x.delta_self) ||
      x.function.localeCompare(y.function),
  );
  return {
    a_samples: A.total,
    b_samples: B.total,
    rows: rows.filter((r) => r.delta_total !== 0 || r.delta_self !== 0).slice(0, n),
  };
}

/** Folded text of several profiles added together. */
function mergeFolded(texts) {
  const counts = new Map();
  for (const t of texts) {
    for (const { frames, count } of parseFolded(t)) {
      const k = frames.join(';');
      counts.set(k, (counts.get(k) || 0) + count);
    }
  }
  return [...counts].map(([k, v]) => `${k} ${v}\n`).join('');
}

module.exports = {
  shareMatching,
  pprofToFolded,
  parseFolded,
  topFunctions,
  diffFunctions,
  mergeFolded,
  functionCounts,
};
