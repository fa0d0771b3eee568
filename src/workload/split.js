// @ts-check
'use strict';
// GENERATORS=N: how N load generator processes share one scenario's load and
// the generator's cores. Each process runs the same workload with the same
// window instants (so they start and stop together) and its own seed; the
// closed loop's users and the open loop's rate (and its shape) are divided
// between them, so that together they offer what the scenario asks.

/** "0-3,6" -> [0, 1, 2, 3, 6] */
function parseCpuList(list) {
  const out = [];
  for (const part of String(list).split(',')) {
    if (!part.trim()) continue;
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b === undefined ? a : b); c++) out.push(c);
  }
  return out;
}

/**
 * The cores each of n generators is pinned to, from the generator's cores: each its own share when there are
 * enough, else generators take the cores in turn and share them (shared says so).
 * @param {string} cpus cpuset list of the generator's cores
 * @param {number} n generators
 * @returns {{cpus: string[], shared: boolean}}
 */
function generatorCores(cpus, n) {
  const all = parseCpuList(cpus);
  if (!all.length) throw new Error(`generatorCores: no cores in "${cpus}"`);
  if (all.length >= n) {
    const per = Math.floor(all.length / n);
    return { cpus: Array.from({ length: n }, (_, i) => all.slice(i * per, (i + 1) * per).join(',')), shared: false };
  }
  return { cpus: Array.from({ length: n }, (_, i) => String(all[i % all.length])), shared: true };
}

/** Generator i's share of a whole number (users, requests/s) when n share it: the first ones take the remainder. */
const shareOf = (total, n, i) => Math.floor(total / n) + (i < total % n ? 1 : 0);

/** A shape's rates times f. */
function scaleShape(shape, f) {
  if (!shape) return shape;
  return {
    ...shape,
    base_rps: shape.base_rps * f,
    peak_rps: shape.peak_rps * f,
    segments: shape.segments.map((seg) => ({ ...seg, rps: seg.rps * f })),
  };
}

/**
 * What generator i of n runs: the scenario with its share of the load (CONCURRENCY users or RATE), and the spec
 * fields that differ from the others' (its index, its seed, its share of a shape).
 * @param {object} s resolved scenario
 * @param {object} spec the window's generator spec
 * @param {number} n generators
 * @param {number} i this generator
 */
function generatorShare(s, spec, n, i) {
  if (n === 1) return { scenario: s, spec };
  const rate = s.RATE ? shareOf(s.RATE, n, i) : null;
  const scenario = s.RATE ? { ...s, RATE: rate } : { ...s, CONCURRENCY: shareOf(s.CONCURRENCY, n, i) };
  return {
    scenario,
    spec: {
      ...spec,
      generator_index: i,
      generators: n,
      seed: (spec.seed + 104729 * i) % 2147483647,
      shape: s.RATE ? scaleShape(spec.shape, rate / s.RATE) : spec.shape,
    },
  };
}

module.exports = { parseCpuList, generatorCores, generatorShare, scaleShape, shareOf };
