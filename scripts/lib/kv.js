'use strict';
// The benches' KEY=value text: read from the environment (keys for the runs
// they start), and written as their last line (figures for scripts).

/** "A=1 B=two" as {A: '1', B: 'two'}; `what` names the variable in the error for a word without "=". */
function parseKv(text, what) {
  return Object.fromEntries(
    text
      .split(/\s+/)
      .filter(Boolean)
      .map((kv) => {
        const i = kv.indexOf('=');
        if (i < 1) throw new Error(`${what}: expected KEY=value, got "${kv}"`);
        return [kv.slice(0, i), kv.slice(i + 1)];
      }),
  );
}

/** {a: 1, b: 'x'} as "a=1 b=x". */
const kvLine = (figures) =>
  Object.entries(figures)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

module.exports = { parseKv, kvLine };
