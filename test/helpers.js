'use strict';
// Shared by the unit and integration tests.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Ajv2020 = require('ajv/dist/2020');

const ROOT = path.resolve(__dirname, '..');

function tmpDir(prefix = 'chainperf-test-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Writes a scenario file and returns its path. */
function writeScenario(dir, name, text) {
  const file = path.join(dir, `${name}.env`);
  fs.writeFileSync(file, text);
  return file;
}

let validator = null;
/** Validates a run.json object against schema/run.schema.json; returns the errors (empty when valid). */
function schemaErrors(run) {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    validator = ajv.compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'schema', 'run.schema.json'), 'utf8')));
  }
  return validator(run) ? [] : validator.errors.map((e) => `${e.instancePath} ${e.message}`);
}

module.exports = { ROOT, tmpDir, writeScenario, schemaErrors };
