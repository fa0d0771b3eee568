'use strict';
// No require cycle among the modules of src/: a module that requires another
// which requires it back (directly or through others, at the top or inside a
// function) is refused. Both halves of a cycle half-load each other, and a
// cycle hides which of them is the lower one (docs/architecture.md): what both
// need goes into a module of its own, or the higher one passes a function in.
//
// The rule reads every module's requires from disk (parsed once per ESLint
// process, again when a file changes), the linted file's from its own text.

const fs = require('node:fs');
const path = require('node:path');

const SRC = path.resolve(__dirname, '..', 'src');

/** The file a relative require names: itself, with .js, or its folder's index.js; null when none is a .js file. */
function resolveRequire(from, spec) {
  const target = path.resolve(path.dirname(from), spec);
  for (const f of [target, `${target}.js`, path.join(target, 'index.js')]) {
    if (f.endsWith('.js') && fs.existsSync(f) && fs.statSync(f).isFile()) return f;
  }
  return null;
}

/** Every require('./...') call of an AST (at any depth): [{node, spec}]. */
function requireCalls(ast) {
  const found = [];
  const visit = (node) => {
    if (!node || typeof node.type !== 'string') return;
    if (node.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'require') {
      const arg = node.arguments[0];
      if (arg && arg.type === 'Literal' && typeof arg.value === 'string' && arg.value.startsWith('.'))
        found.push({ node, spec: arg.value });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'parent' || key === 'tokens' || key === 'comments') continue;
      for (const child of Array.isArray(value) ? value : [value]) if (child && typeof child === 'object') visit(child);
    }
  };
  visit(ast);
  return found;
}

function defaultParse(text) {
  return require('espree').parse(text, { ecmaVersion: 'latest', sourceType: 'commonjs' });
}

const parsed = new Map(); // file -> {mtimeMs, deps}

/** The modules under root a file requires (read from disk; a file that does not parse requires nothing). */
function depsOnDisk(file, root, parse = defaultParse) {
  const mtimeMs = fs.statSync(file).mtimeMs;
  const known = parsed.get(file);
  if (known && known.mtimeMs === mtimeMs) return known.deps.filter((d) => inside(d, root));
  let deps = [];
  try {
    deps = requireCalls(parse(fs.readFileSync(file, 'utf8')))
      .map((r) => resolveRequire(file, r.spec))
      .filter(Boolean);
  } catch {
    deps = [];
  }
  parsed.set(file, { mtimeMs, deps });
  return deps.filter((d) => inside(d, root));
}

const inside = (file, root) => !path.relative(root, file).startsWith('..');

/** The shortest chain of requires from `from` to `to` under root ([from, ..., to]), or null. */
function chainTo(from, to, root, parse) {
  const cameFrom = new Map([[from, null]]);
  const queue = [from];
  while (queue.length) {
    const f = queue.shift();
    if (f === to) {
      const chain = [];
      for (let x = f; x; x = cameFrom.get(x)) chain.unshift(x);
      return chain;
    }
    for (const d of depsOnDisk(f, root, parse)) {
      if (cameFrom.has(d)) continue;
      cameFrom.set(d, f);
      queue.push(d);
    }
  }
  return null;
}

/** How a cycle reads: its modules relative to root, the first one again at the end. */
const describe = (cycle, root) => cycle.map((f) => path.relative(root, f).split(path.sep).join('/')).join(' -> ');

/** Every require cycle among root's .js files, each once (as found from its first file in path order). */
function findCycles(root = SRC) {
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) files.push(p);
    }
  };
  walk(root);
  const seen = new Set();
  const cycles = [];
  for (const file of files) {
    for (const dep of depsOnDisk(file, root)) {
      const back = chainTo(dep, file, root);
      if (!back) continue;
      const cycle = [file, ...back];
      const key = [...new Set(cycle)].sort().join('\n');
      if (seen.has(key)) continue;
      seen.add(key);
      cycles.push(describe(cycle, root));
    }
  }
  return cycles;
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'no require cycle among the modules of src/ (docs/architecture.md)' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
  },
  create(context) {
    const file = path.resolve(context.filename || context.getFilename());
    const root = path.resolve((context.options[0] && context.options[0].root) || SRC);
    if (!inside(file, root)) return {};
    const parser = context.languageOptions && context.languageOptions.parser;
    const parse =
      parser && parser.parse
        ? (text) => parser.parse(text, { ecmaVersion: 'latest', sourceType: 'commonjs' })
        : defaultParse;
    return {
      'Program:exit'(program) {
        for (const { node, spec } of requireCalls(program)) {
          const dep = resolveRequire(file, spec);
          if (!dep || !inside(dep, root)) continue;
          const back = chainTo(dep, file, root, parse);
          if (!back) continue;
          context.report({
            node,
            message: `require cycle: ${describe([file, ...back], root)}: move what they share into a module of its own, or pass a function in (docs/architecture.md)`,
          });
        }
      },
    };
  },
};

module.exports = { findCycles, rules: { 'no-cycles': rule } };
