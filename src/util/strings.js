'use strict';

/** Edit distance between two strings (insertions, deletions, substitutions). */
function levenshtein(a, b) {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** The candidate nearest to word (case-insensitive), or null when none is reasonably close. */
function closest(word, candidates) {
  let best = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = levenshtein(word.toUpperCase(), c.toUpperCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= Math.max(2, Math.floor(word.length / 2)) ? best : null;
}

module.exports = { levenshtein, closest };
