'use strict';
// The docs hold together: every relative link leads to a file (and an anchor
// to a heading in it), every scenario key a doc names is one the code knows,
// the README is a landing page whose first command is the design card's, and
// only the results page speaks of the machine the figures came from.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { KEYS } = require('../../src/scenario/keys');
const { PLAN_KEYS } = require('../../src/plan/parse');
const { ROOT } = require('../helpers');

/** Environment variables the docs name that are not scenario keys: chainperf's own settings and the benches'. */
const NOT_KEYS = new Set([
  'CHAINPERF_CACHE',
  'CHAINPERF_RUNS_DIR',
  'CHAINPERF_OMNI_NODE_BIN',
  'PROMETHEUS_BIN',
  'INFERNO_DIR',
  'PERF_BIN',
  'COMPOSE_COMMAND',
  'COMPOSE_V2_VERSION',
  'DOCKER_SOCKET',
  'DEBIAN_MIRROR',
  'PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD',
  'SKIP_WASM_BUILD',
  'NODE_OPTIONS',
  'NODE_PATH',
  'XDG_CACHE_HOME',
  'LIBCLANG_PATH',
  'TEST_JOBS',
  'UPDATE_TIMINGS',
  'NODE_COMMAND', // a compose file's variable, set from the client module
  'CHAIN_SPEC_FILE',
  'GOBIN',
  'GOFLAGS',
  'DEV_ACCOUNTS',
  'PRUNED_BLOCKS',
  'SETTLE_BLOCKS',
  'FORMAT',
  'STARTUP_S',
  'TAIL_MS',
  'LATE_START_MS',
  'MAX_IN_FLIGHT',
  'JSON_RPC',
  'HTTP_OK',
]);
/** Prefixes of the benches' own variables. */
const NOT_KEY_PREFIXES = ['BENCH_', 'SOAK_', 'CHAINPERF_'];

const docs = () => [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (f) => fs.readFileSync(path.join(ROOT, f), 'utf8');

/** GitHub's anchor of a heading. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

function anchorsOf(file) {
  return new Set(
    read(file)
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ''))),
  );
}

describe('the docs', () => {
  it('every relative link leads to a file, and every anchor to a heading in it', () => {
    const broken = [];
    for (const f of docs()) {
      for (const m of read(f).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^(https?|mailto):/.test(target)) continue;
        const [file, anchor] = target.split('#');
        const resolved = file ? path.normalize(path.join(path.dirname(f), file)) : f;
        if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${f}: ${target} (no ${resolved})`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${f}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('every scenario key a doc names is one the code knows', () => {
    const unknown = [];
    for (const f of docs()) {
      const text = read(f);
      const named = [...text.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)(?:=[^`]*)?`|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)=/g)];
      for (const m of named) {
        const name = m[1] || m[2];
        if (
          KEYS[name] ||
          PLAN_KEYS.includes(name) ||
          NOT_KEYS.has(name) ||
          NOT_KEY_PREFIXES.some((p) => name.startsWith(p))
        )
          continue;
        unknown.push(`${f}: ${name}`);
      }
    }
    assert.deepEqual([...new Set(unknown)], []);
  });

  it("the README is a landing page of at most 200 lines whose first command is the design card's", () => {
    const text = read('README.md');
    assert.ok(text.split('\n').length <= 200, `${text.split('\n').length} lines`);
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(text)[1];
    assert.match(firstBlock.split('\n')[0], /^\.\/run\.sh scenarios\/cache-1024\.env\b/);
    assert.match(text, /npm test/);
  });

  it('only docs/results.md speaks of "this machine"', () => {
    const found = docs().filter((f) => f !== 'docs/results.md' && /this machine/i.test(read(f)));
    assert.deepEqual(found, []);
  });
});
