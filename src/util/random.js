'use strict';

/** A small seeded generator (mulberry32) so parameter draws repeat from run to run. */
function seededRandom(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks from a weighted table {name: weight} with a random number in [0, 1). */
function weightedPicker(weights) {
  const names = Object.keys(weights);
  const total = names.reduce((s, n) => s + weights[n], 0);
  const cumulative = [];
  let acc = 0;
  for (const n of names) {
    acc += weights[n] / total;
    cumulative.push(acc);
  }
  return (r) => {
    for (let i = 0; i < names.length; i++) if (r < cumulative[i]) return names[i];
    return names[names.length - 1];
  };
}

module.exports = { seededRandom, weightedPicker };
