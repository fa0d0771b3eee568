'use strict';
// The command that runs one load generator pass of an artillery script: artillery's
// CLI, or chainperf's lean runner (lean-runner.js) when the lean generator's script
// asks for it (LEAN_RUNNER=chainperf). chainperf starts passes here and its agents
// on other machines do (agent.js): both take the command from here.

const fs = require('node:fs');
const path = require('node:path');
const yaml = require('js-yaml');
const { ROOT } = require('../util/paths');

/**
 * The lean runner's worker threads start with a small heap, and V8 sizes the old generation's first limit from it: a
 * window's records (latencies kept per request) then set off full collections (up to 11 in a 5 s window), marked on
 * V8's background threads: about a fifth more CPU per request over WebSocket. artillery's workers, with its modules
 * loaded, start large. With 64 MB a window's records grow without one (docs/results.md).
 */
const LEAN_HEAP = '--initial-old-space-size=64';

/** The runner scenario s asks for its lean passes (LEAN_RUNNER; chainperf's when a hand-made scenario says none). */
const leanRunnerOf = (s) => (s && s.LEAN_RUNNER) || 'chainperf';

/** Which runner a script asks for: 'chainperf' (the lean runner) or 'artillery'. */
function runnerOf(script) {
  const engine = script && script.config && script.config.engines && script.config.engines.chainperf;
  return engine && engine.runner === 'chainperf' ? 'chainperf' : 'artillery';
}

/**
 * The argv (node first) and environment of a pass of scriptFile writing its output to outputFile.
 * @param {string} scriptFile
 * @param {string} outputFile
 * @param {string} specFile the pass's spec (CHAINPERF_GENERATOR_SPEC)
 */
function passCommand(scriptFile, outputFile, specFile) {
  const runner = runnerOf(yaml.load(fs.readFileSync(scriptFile, 'utf8')));
  const bin =
    runner === 'chainperf'
      ? path.join(ROOT, 'src', 'workload', 'lean-runner.js')
      : path.join(ROOT, 'node_modules', 'artillery', 'bin', 'run');
  const env = {
    ...process.env,
    NODE_PATH: path.join(ROOT, 'src', 'workload', 'engines'), // where artillery finds artillery-engine-chainperf
    CHAINPERF_GENERATOR_SPEC: specFile,
    ARTILLERY_DISABLE_TELEMETRY: 'true',
    DO_NOT_TRACK: '1',
  };
  const flags = runner === 'chainperf' ? [LEAN_HEAP] : [];
  return { runner, argv: [process.execPath, ...flags, bin, 'run', '--output', outputFile, scriptFile], env };
}

module.exports = { passCommand, runnerOf, leanRunnerOf };
