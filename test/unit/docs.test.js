'use strict';
// The docs hold together: every relative link leads to a file in the repository
// (and an anchor to a heading in it), every scenario key a doc names is one the
// code knows, every page of docs/ can be reached from the README, the README is
// a landing page whose first command is the design card's, and only the results
// page speaks of the machine its figures came from. Each check is a function of
// a folder, run on the repository and on a small broken one, so that the test
// is seen to fail when a doc breaks.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { KEYS } = require('../../src/scenario/keys');
const { PLAN_KEYS } = require('../../src/plan/parse');
const { ROOT, tmpDir } = require('../helpers');

/**
 * Environment variables the docs may name that are not scenario keys. Each is
 * read by chainperf's code (a test below checks it), so this list cannot hide a
 * misspelt key.
 */
const NOT_KEYS = new Set([
  'CHAINPERF_CACHE', // the cache folder (default ~/.cache/chainperf)
  'CHAINPERF_RUNS_DIR', // where each run's lock lives (default ~/.cache/chainperf/runs)
  'CHAINPERF_PORTS_DIR', // where runs reserve the ports they draw (default /tmp/chainperf-ports)
  'CHAINPERF_CLIENTS', // client modules kept outside the repository
  'CHAINPERF_NPM_CACHE', // no: npm ci, not the install kept in the cache (scripts/ensure-npm-deps.sh)
  'CHAINPERF_HEARTBEAT_S', // an install step's heartbeat, in seconds (default 15)
  'CHAINPERF_OMNI_NODE_BIN', // the polkadot-omni-node binary the integration tests use
  'PROMETHEUS_BIN', // a Prometheus of your own, where chainperf cannot install one
  'INFERNO_DIR', // a built inferno, for flame graphs
  'PERF_BIN', // a perf of your own
  'COMPOSE_COMMAND', // docker compose (v2) or docker-compose (v1)
  'DOCKER_SOCKET', // the Docker engine's socket
  'PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD', // npm ci: artillery's playwright would download a browser
  'SKIP_WASM_BUILD', // cargo, building polkadot-omni-node
  'NODE_OPTIONS', // Node.js's own, given to chopsticks under NODE_PROFILE=cpu
  'NODE_COMMAND', // a compose file's variable, set from the client module
  'TEST_JOBS', // the integration test runner's parallel files
  'TEST_CGROUPS', // the integration test runner's cgroups (no: none)
  'TEST_EXTRA_JOBS', // the integration test runner's files started while the cores idle
]);
/** Prefixes of the benches' own variables (npm run bench, bench:ab, bench:soak). */
const NOT_KEY_PREFIXES = ['BENCH_', 'SOAK_'];

/** Phrases that speak of the machine the figures came from: docs/results.md alone may use them. */
const MACHINE_PHRASES = /this machine|these machines|measured here|this VM\b/i;
const RESULTS = 'docs/results.md';

/**
 * docs/grafana.md comes with the Grafana dashboards, which other work may
 * replace: while it is missing, a link to it is not an error.
 */
const MAY_BE_MISSING = new Set(['docs/grafana.md']);

/** README.md and docs/*.md of a folder, as paths relative to it. */
function docFiles(root) {
  const docs = fs.existsSync(path.join(root, 'docs'))
    ? fs
        .readdirSync(path.join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => `docs/${f}`)
    : [];
  return ['README.md', ...docs];
}

const readIn = (root, f) => fs.readFileSync(path.join(root, f), 'utf8');

/** The text without fenced code blocks and inline code, where brackets are not links. */
const prose = (text) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchor of a heading's text. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

/** The anchors of a markdown file: its headings (repeated ones numbered as GitHub does) and HTML ids. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const line of text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) || 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

/** Link targets in a markdown text: inline links and images, and reference definitions. */
function linkTargets(text) {
  const p = prose(text);
  const inline = [...p.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const defined = [...p.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]);
  return [...inline, ...defined];
}

/** Broken relative links of the docs under root: a missing file, a missing anchor, a path outside root. */
function brokenLinks(root) {
  const broken = [];
  for (const f of docFiles(root)) {
    const text = readIn(root, f);
    for (const target of linkTargets(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#');
      const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(f), file)) : f;
      if (resolved.startsWith('..')) broken.push(`${f}: ${target} (outside the repository)`);
      else if (!fs.existsSync(path.join(root, resolved))) {
        if (!MAY_BE_MISSING.has(resolved)) broken.push(`${f}: ${target} (no ${resolved})`);
      } else if (anchor && resolved.endsWith('.md') && !anchorsOf(readIn(root, resolved)).has(anchor))
        broken.push(`${f}: ${target} (no heading #${anchor} in ${resolved})`);
    }
    // [page.md] with no target renders as text: a link that lost its target
    for (const m of prose(text).matchAll(/\[([^\]\n]+\.md(?:#[^\]\n]*)?)\](?![(:[])/g))
      broken.push(`${f}: [${m[1]}] (a link without a target)`);
  }
  return broken;
}

const isKnown = (name) =>
  Boolean(KEYS[name]) ||
  PLAN_KEYS.includes(name) ||
  NOT_KEYS.has(name) ||
  NOT_KEY_PREFIXES.some((p) => name.startsWith(p));

/** UPPER_SNAKE names written as a key (`FOO_BAR`, `FOO_BAR=...`, FOO_BAR=...) that are no key the code knows. */
function unknownKeys(root) {
  const unknown = [];
  for (const f of docFiles(root)) {
    const text = readIn(root, f);
    for (const m of text.matchAll(
      /`([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?:=[^`]*)?`|\b([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])=/g,
    )) {
      const name = m[1] || m[2];
      if (!isKnown(name)) unknown.push(`${f}: ${name}`);
    }
  }
  return [...new Set(unknown)];
}

/** Pages of docs/ that neither the README nor a page reachable from it links to. */
function unreachablePages(root) {
  const reached = new Set(['README.md']);
  const queue = ['README.md'];
  while (queue.length) {
    const f = queue.shift();
    for (const target of linkTargets(readIn(root, f))) {
      const file = target.split('#')[0];
      if (!file || /^[a-z][a-z0-9+.-]*:/i.test(file)) continue;
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(f), file));
      if (resolved.endsWith('.md') && !reached.has(resolved) && fs.existsSync(path.join(root, resolved))) {
        reached.add(resolved);
        queue.push(resolved);
      }
    }
  }
  return docFiles(root).filter((f) => !reached.has(f));
}

/** What keeps the README a landing page: its length, its first command, the quick one and the tests. */
function landingPageProblems(root) {
  const text = readIn(root, 'README.md');
  const problems = [];
  const lines = text.replace(/\n$/, '').split('\n').length;
  if (lines > 200) problems.push(`README.md has ${lines} lines (at most 200)`);
  const block = /^```(?:sh|bash|console)?\n([\s\S]*?)^```/m.exec(text);
  const first = block ? block[1].split('\n')[0] : '';
  if (!/^\.\/run\.sh scenarios\/cache-1024\.env(\s|$)/.test(first))
    problems.push(`README.md's first command is "${first}", not ./run.sh scenarios/cache-1024.env`);
  if (!/npm test/.test(text)) problems.push('README.md does not name npm test');
  if (!/\.\/run\.sh scenarios\/geth-dev\.env/.test(text)) problems.push('README.md does not name the quick run');
  return problems;
}

/** Docs other than docs/results.md that speak of the machine the figures came from. */
function machineTalk(root) {
  return docFiles(root)
    .filter((f) => f !== RESULTS)
    .flatMap((f) =>
      readIn(root, f)
        .split('\n')
        .map((line, i) => (MACHINE_PHRASES.test(line) ? `${f}:${i + 1}: ${line.trim()}` : null))
        .filter(Boolean),
    );
}

describe('the docs', () => {
  it('every relative link leads to a file in the repository, and every anchor to a heading in it', () => {
    assert.deepEqual(brokenLinks(ROOT), []);
  });

  it('every scenario key a doc names is one the code knows', () => {
    assert.deepEqual(unknownKeys(ROOT), []);
  });

  it('every page of docs/ can be reached from the README', () => {
    assert.deepEqual(unreachablePages(ROOT), []);
  });

  it("the README is a landing page of at most 200 lines whose first command is the design card's", () => {
    assert.deepEqual(landingPageProblems(ROOT), []);
  });

  it('only docs/results.md speaks of "this machine" (or of what was "measured here")', () => {
    assert.deepEqual(machineTalk(ROOT), []);
  });

  it('the variables that are not scenario keys are read by the code, and none is a key', () => {
    const code = ['src', 'scripts', 'test', 'compose', 'run.sh']
      .flatMap((p) => filesUnder(path.join(ROOT, p)))
      .filter((f) => !f.endsWith(path.join('unit', 'docs.test.js')))
      .map((f) => fs.readFileSync(f, 'utf8'))
      .join('\n');
    for (const name of NOT_KEYS) {
      assert.ok(!KEYS[name], `${name} is a scenario key`);
      assert.ok(new RegExp(`\\b${name}\\b`).test(code), `${name} is read nowhere in the code`);
    }
  });

  describe('the checks fail on broken docs', () => {
    const broken = () => {
      const dir = tmpDir('chainperf-docs-');
      fs.mkdirSync(path.join(dir, 'docs'));
      const write = (f, text) => fs.writeFileSync(path.join(dir, f), text);
      write(
        'README.md',
        [
          '# Broken',
          '',
          '```sh',
          './run.sh scenarios/geth-dev.env',
          '```',
          '',
          '[a page](docs/a.md), [gone](docs/gone.md), [bad anchor](docs/a.md#nowhere), [up](../elsewhere.md)',
          'Set `DB_CACHE_MB=1024`, `NO_SUCH_KEY=1` and WRONG_KEY=2; `RUN_TWICE` too.',
          'Measured here on this machine.',
          ...Array.from({ length: 200 }, (_, i) => `line ${i}`),
        ].join('\n'),
      );
      write('docs/a.md', '# A\n\n## Twice\n\n## Twice\n\n[self](#twice-1), [b.md]\n');
      write('docs/b.md', '# B, linked from nowhere\n');
      write('docs/results.md', '# Results\n\nOn this machine, measured here.\n');
      return dir;
    };

    it('finds a missing file, a missing anchor, a path outside the repository and a link without a target', () => {
      assert.deepEqual(brokenLinks(broken()), [
        'README.md: docs/gone.md (no docs/gone.md)',
        'README.md: docs/a.md#nowhere (no heading #nowhere in docs/a.md)',
        'README.md: ../elsewhere.md (outside the repository)',
        'docs/a.md: [b.md] (a link without a target)',
      ]);
    });

    it('finds keys the code does not know', () => {
      assert.deepEqual(unknownKeys(broken()), [
        'README.md: NO_SUCH_KEY',
        'README.md: WRONG_KEY',
        'README.md: RUN_TWICE',
      ]);
    });

    it('finds a page nothing links to', () => {
      assert.deepEqual(unreachablePages(broken()), ['docs/b.md', 'docs/results.md']);
    });

    it('finds a README too long, whose first command is not the design card and that does not name npm test', () => {
      assert.deepEqual(landingPageProblems(broken()), [
        'README.md has 209 lines (at most 200)',
        'README.md\'s first command is "./run.sh scenarios/geth-dev.env", not ./run.sh scenarios/cache-1024.env',
        'README.md does not name npm test',
      ]);
    });

    it('finds talk of "this machine" outside docs/results.md', () => {
      assert.deepEqual(machineTalk(broken()), ['README.md:9: Measured here on this machine.']);
    });
  });
});

function filesUnder(p) {
  if (!fs.existsSync(p)) return [];
  if (fs.statSync(p).isFile()) return [p];
  return fs
    .readdirSync(p, { withFileTypes: true })
    .filter((e) => e.name !== 'node_modules')
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(p, e.name)) : [path.join(p, e.name)]));
}
