// @ts-check
'use strict';
// Where chainperf's own files are: the repository's root and its workloads.
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const WORKLOADS_DIR = path.join(ROOT, 'workloads');

module.exports = { ROOT, WORKLOADS_DIR };
