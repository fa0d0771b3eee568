// @ts-check
'use strict';
// Index draws over [0, n) for the STATE profiles' parameters:
//   uniform - every index equally likely.
//   skewed  - hot and cold: HOT_DRAWS of the draws from a hot HOT_SHARE of
//             the indices, the rest from the others, uniform within each.
//             The hot indices are either a fixed pseudo-random tenth spread
//             over [0, n) ('spread') or the highest ones ('recent').

const HOT_SHARE = 0.1; // the hot part of each list
const HOT_DRAWS = 0.9; // the share of draws that go to it

function gcd(a, b) {
  return b ? gcd(b, a % b) : a;
}

function coprimeNear(n, x) {
  let s = Math.max(1, x);
  while (gcd(s, n) !== 1) s++;
  return s;
}

/**
 * Index drawer over [0, n): (r) => index, uniform or skewed toward a hot tenth.
 * @param {number} n
 * @param {string} distribution 'uniform' or 'skewed'
 * @param {'spread'|'recent'} [hot]
 * @returns {(r: () => number) => number}
 */
function indexDrawer(n, distribution, hot = 'spread') {
  if (distribution === 'uniform' || n < 10) return (r) => Math.floor(r() * n);
  const hotN = Math.max(1, Math.floor(n * HOT_SHARE));
  // 'spread': k -> (k * stride + 7) mod n with stride coprime to n, a bijection, so the hot tenth is spread over [0, n)
  const stride = coprimeNear(n, Math.floor(n * 0.618034) || 1);
  const place = hot === 'recent' ? (k) => n - 1 - k : (k) => (k * stride + 7) % n;
  return (r) => (r() < HOT_DRAWS ? place(Math.floor(r() * hotN)) : place(hotN + Math.floor(r() * (n - hotN))));
}

/**
 * indexDrawer bound to a random source: () => index.
 * @param {number} n
 * @param {string} distribution
 * @param {() => number} r
 * @param {'spread'|'recent'} [hot]
 */
function drawer(n, distribution, r, hot = 'spread') {
  const d = indexDrawer(n, distribution, hot);
  return () => d(r);
}

module.exports = { indexDrawer, drawer, HOT_SHARE, HOT_DRAWS };
