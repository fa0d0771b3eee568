'use strict';
const js = require('@eslint/js');
const globals = require('globals');
const layers = require('./eslint-rules/layers');
const cycles = require('./eslint-rules/cycles');

module.exports = [
  { ignores: ['node_modules/**', 'reports/**'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'commonjs', globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_|^(context|events|next|req)$' }],
      'prefer-const': 'error',
      'no-var': 'error',
      eqeqeq: ['error', 'smart'],
      strict: ['error', 'global'],
    },
  },
  {
    // Readability budget: a function stays short and shallow enough to read, a line fits on a screen
    // (long strings, template literals, URLs and regular expressions excepted: messages read better whole).
    files: ['src/**/*.js', 'scripts/**/*.js'],
    plugins: { chainperf: { rules: { ...layers.rules, ...cycles.rules } } },
    rules: {
      'chainperf/layers': 'error',
      'chainperf/no-cycles': 'error',
      complexity: ['error', 20],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 300 }],
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true },
      ],
    },
  },
  {
    files: ['test/**/*.js'],
    languageOptions: { globals: { ...globals.mocha } },
    // A mocha describe() is one long function by design, and a test
    // message) are clearer on one line: tests keep a looser line bound and no complexity or length bound.
    rules: {
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true },
      ],
    },
  },

  {
    // The one table of every scenario key, flat by design: one entry a key, read top to bottom.
    files: ['src/scenario/keys.js'],
    rules: { 'max-lines': 'off' },
  },
];
