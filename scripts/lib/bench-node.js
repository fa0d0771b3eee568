'use strict';
// The node the generator benchmarks measure against: geth --dev started by the
// host runtime on one core (geth-dev.env with CORES=1), the generators given
// the other cores in the run's generator cgroup.

const fs = require('node:fs');
const path = require('node:path');
const { resolveScenario, ROOT } = require('../../src/scenario/resolve');
const { startHost } = require('../../src/runtime/host');
const { metricValue } = require('../../src/measure/cpu');
const { newRunId } = require('../../src/run');
const { log } = require('../../src/util/log');

/** A geth --dev node on one core, and its stop (once; Ctrl-C and SIGTERM stop it too). */
async function startBenchNode(workDir) {
  const { scenario, errors } = resolveScenario(path.join(ROOT, 'scenarios', 'geth-dev.env'), { env: { CORES: '1' } });
  if (errors.length) throw new Error(errors.join('\n'));
  const stack = await startHost(scenario, { runId: `bench-${newRunId()}`, workDir, log });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await stack.teardown();
    fs.rmSync(workDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => stop().then(() => process.exit(130)));
  process.once('SIGTERM', () => stop().then(() => process.exit(143)));
  return { stack, stop };
}

/** geth's own request counter (a live counter, read at a window's edges). */
async function rpcRequests(metricsUrl) {
  const v = metricValue(await (await fetch(metricsUrl)).text(), 'rpc_requests');
  if (v === null) throw new Error('geth exports no rpc_requests counter');
  return v;
}

/** What the benchmarks' windows are read against: {group, rpcUrl, wsUrl, requests()} (bench-generators.js). */
const benchTarget = (stack) => ({
  group: stack.generatorGroup,
  rpcUrl: stack.rpcUrl,
  wsUrl: stack.wsUrl,
  requests: () => rpcRequests(stack.node.metrics_url),
});

module.exports = { startBenchNode, benchTarget };
