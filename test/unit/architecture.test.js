'use strict';
// The structure docs/architecture.md describes is the code's: its layer table
// is the one the lint rule enforces, the rule catches an upward require, and
// every contract is referred to by an implementation and by a caller; no
// require cycle among src/'s modules, and the rule that refuses one.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { RuleTester } = require('eslint');
const os = require('node:os');
const { LAYERS, rules } = require('../../eslint-rules/layers');
const cycles = require('../../eslint-rules/cycles');
const { ROOT } = require('../helpers');

/** The rows of the doc's "## Layers" table: [{name, paths}]. */
function docLayers() {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = text.slice(text.indexOf('## Layers'), text.indexOf('## One run'));
  return section
    .split('\n')
    .filter((l) => /^\| [a-z]+ \| `/.test(l))
    .map((l) => {
      const [, name, paths] = l.split('|').map((c) => c.trim());
      return { name, paths: [...paths.matchAll(/`([^`]+)`/g)].map((m) => m[1]) };
    });
}

/** Every .js file under dir. */
function jsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? jsFiles(p) : e.name.endsWith('.js') ? [p] : [];
  });
}

describe('architecture', () => {
  it('docs/architecture.md holds the layer table the lint rule enforces', () => {
    assert.deepEqual(
      docLayers(),
      LAYERS.map((l) => ({ name: l.name, paths: l.paths })),
    );
  });

  it('every module of src/ is in a layer', () => {
    const { layerOf } = require('../../eslint-rules/layers');
    const src = path.join(ROOT, 'src');
    const outside = jsFiles(src).filter((f) => layerOf(f, src) === null);
    assert.deepEqual(outside, []);
  });

  it('the layer rule reports a require of a higher layer and lets a lower one through', () => {
    const tester = new RuleTester({ languageOptions: { ecmaVersion: 2023, sourceType: 'commonjs' } });
    const inSrc = (p) => path.join(ROOT, 'src', p);
    tester.run('layers', rules.layers, {
      valid: [
        { code: "require('../util/rpc')", filename: inSrc('chains/x.js') },
        { code: "require('./runtime')", filename: inSrc('run.js') },
        { code: "require('node:fs')", filename: inSrc('util/x.js') },
      ],
      invalid: [
        {
          code: "require('../runtime/host')",
          filename: inSrc('measure/x.js'),
          errors: [{ message: /layer measure requires \.\.\/runtime\/host of layer runtime, above it/ }],
        },
        {
          code: "const x = () => require('../../workload/samples')",
          filename: inSrc('chains/ethereum/x.js'),
          errors: [{ message: /layer chains requires/ }],
        },
      ],
    });
  });

  it('src/ has no require cycle', () => {
    assert.deepEqual(cycles.findCycles(path.join(ROOT, 'src')), []);
  });

  describe('the cycle rule', () => {
    // a.js -> sub/b.js -> c.js -> a.js (c's require inside a function: a lazy require closes a cycle too),
    // d.js -> a.js, self.js -> self.js. Written now: RuleTester's cases run as a suite of their own, after this body.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-cycles-'));
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'a.js'), "require('./sub/b');\n");
    fs.writeFileSync(path.join(dir, 'sub', 'b.js'), "require('../c');\n");
    fs.writeFileSync(path.join(dir, 'c.js'), "module.exports = () => require('./a');\n");
    fs.writeFileSync(path.join(dir, 'd.js'), "require('./a');\n");
    fs.writeFileSync(path.join(dir, 'self.js'), "require('./self');\n");
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('findCycles lists each cycle once', () => {
      assert.deepEqual(cycles.findCycles(dir), ['a.js -> sub/b.js -> c.js -> a.js', 'self.js -> self.js']);
    });

    // a require that closes a cycle is reported, naming the cycle; the others pass
    const tester = new RuleTester({ languageOptions: { ecmaVersion: 2023, sourceType: 'commonjs' } });
    const options = [{ root: dir }];
    tester.run('no-cycles', cycles.rules['no-cycles'], {
      valid: [
        { code: "require('./a'); require('node:fs')", filename: path.join(dir, 'd.js'), options },
        // the cycle's other modules outside the root the rule checks
        { code: "require('./sub/b')", filename: path.join(dir, 'a.js'), options: [{ root: path.join(dir, 'sub') }] },
      ],
      invalid: [
        {
          code: "const fs = require('node:fs');\nrequire('./sub/b');",
          filename: path.join(dir, 'a.js'),
          options,
          errors: [{ message: /^require cycle: a\.js -> sub\/b\.js -> c\.js -> a\.js: move what they share/, line: 2 }],
        },
        {
          code: "module.exports = () => require('./a');",
          filename: path.join(dir, 'c.js'),
          options,
          errors: [{ message: /^require cycle: c\.js -> a\.js -> sub\/b\.js -> c\.js:/ }],
        },
        {
          code: "require('./self')",
          filename: path.join(dir, 'self.js'),
          options,
          errors: [{ message: /^require cycle: self\.js -> self\.js:/ }],
        },
      ],
    });
  });

  it('every contract is referred to by at least two modules: an implementation and a caller', () => {
    const src = path.join(ROOT, 'src');
    const contracts = fs.readFileSync(path.join(src, 'contracts.js'), 'utf8');
    const names = [...contracts.matchAll(/@typedef \{[\s\S]*?\} (\w+)/g)].map((m) => m[1]);
    assert.ok(names.length >= 10, names.join(', '));
    const files = jsFiles(src).filter((f) => !f.endsWith('contracts.js'));
    const texts = files.map((f) => fs.readFileSync(f, 'utf8'));
    const unused = names.filter((n) => texts.filter((t) => new RegExp(`contracts'\\)\\.${n}\\b`).test(t)).length < 2);
    assert.deepEqual(unused, [], 'contracts referred to by fewer than two modules');
  });
});

describe('requires', () => {
  it('every name a module takes from a relative require is one the required module exports', () => {
    const files = [...jsFiles(path.join(ROOT, 'src')), ...jsFiles(path.join(ROOT, 'scripts'))];
    const missing = [];
    for (const file of files) {
      const src = fs.readFileSync(file, 'utf8');
      for (const m of src.matchAll(/const \{([^}]+)\} = require\('(\.[^']+)'\)/g)) {
        const target = require.resolve(path.resolve(path.dirname(file), m[2]));
        if (!target.endsWith('.js')) continue;
        const exported = require(target);
        for (const part of m[1]
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)) {
          const name = part.split(':')[0].trim();
          if (!(name in exported)) missing.push(`${path.relative(ROOT, file)}: ${name} from ${m[2]}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });
});
