'use strict';
// chainperf's layers, bottom to top (docs/architecture.md draws the same
// table; a unit test holds the two together). A module may require a module of
// its own layer or of a layer below it, never one above: where a lower layer
// needs something from a higher one, the higher one passes it in.

/** Each layer: its name, the src/ paths it holds (a folder ends with /), what it is for. */
const LAYERS = [
  { name: 'util', paths: ['util/', 'stats.js', 'contracts.js'], what: 'pure helpers, statistics, the named contracts' },
  { name: 'platform', paths: ['platform/'], what: 'the operating system and the Docker engine: cgroups, page cache' },
  { name: 'install', paths: ['install/'], what: 'the cache: what is built or installed once, and its locks' },
  { name: 'chains', paths: ['chains/'], what: 'chain families: methods, sync, history, harvest, parameters' },
  { name: 'clients', paths: ['clients/'], what: 'node clients: binary, command line, image, metrics' },
  { name: 'state', paths: ['state/'], what: 'STATE profiles: built once, restored per run' },
  { name: 'workload', paths: ['workload/'], what: 'the load generator: artillery, its engines and processors' },
  {
    name: 'measure',
    paths: ['measure/', 'figures.js', 'repetitions.js', 'saturation.js', 'verdict.js'],
    what: 'CPU sources, windows, figures',
  },
  {
    name: 'runtime',
    paths: ['runtime/', 'network/'],
    what: 'where the node runs: host, compose, attach; the local network around it',
  },
  { name: 'scenario', paths: ['scenario/'], what: 'scenario files: keys, defaults, checks' },
  { name: 'report', paths: ['report/'], what: 'report folders: run.json, summary.md, charts, git' },
  { name: 'session', paths: ['session/'], what: 'the steps of a run before its windows; its lock and signals' },
  {
    name: 'commands',
    paths: ['run.js', 'ab/', 'plan/', 'capacity/', 'compare.js', 'record/', 'reclaim.js', 'config.js'],
    what: 'one run, A/B, plans, capacity, compare, record and mix, clean, config',
  },
  { name: 'cli', paths: ['cli.js'], what: 'the command line' },
];

const path = require('node:path');

/** The layer index of a file under src/ (null outside src/ or unassigned). */
function layerOf(file, srcDir) {
  const rel = path.relative(srcDir, file).split(path.sep).join('/');
  if (rel.startsWith('..')) return null;
  let best = null;
  LAYERS.forEach((l, i) => {
    for (const p of l.paths) {
      const hit = p.endsWith('/') ? rel.startsWith(p) : rel === p;
      if (hit && (!best || p.length > best.len)) best = { i, len: p.length };
    }
  });
  return best ? best.i : null;
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'a module requires nothing from a layer above its own (docs/architecture.md)' },
    schema: [],
  },
  create(context) {
    const file = context.filename || context.getFilename();
    const srcDir = path.resolve(__dirname, '..', 'src');
    const own = layerOf(file, srcDir);
    return {
      CallExpression(node) {
        if (own === null || node.callee.name !== 'require' || !node.arguments.length) return;
        const arg = node.arguments[0];
        if (arg.type !== 'Literal' || typeof arg.value !== 'string' || !arg.value.startsWith('.')) return;
        const target = path.resolve(path.dirname(file), arg.value);
        let to = layerOf(target, srcDir);
        if (to === null) to = layerOf(`${target}.js`, srcDir);
        if (to === null) to = layerOf(path.join(target, 'index.js'), srcDir);
        if (to === null) {
          if (!path.relative(srcDir, target).startsWith('..'))
            context.report({ node, message: `${arg.value} is in no layer: add its path to eslint-rules/layers.js` });
          return;
        }
        if (to > own)
          context.report({
            node,
            message: `layer ${LAYERS[own].name} requires ${arg.value} of layer ${LAYERS[to].name}, above it: pass it in instead (docs/architecture.md)`,
          });
      },
    };
  },
};

module.exports = { LAYERS, layerOf, rules: { layers: rule } };
