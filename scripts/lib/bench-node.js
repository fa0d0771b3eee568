'use strict';
// The node the generator benchmarks measure against: geth --dev started by the
// host runtime on one core (geth-dev.env with CORES=1), the generators given
// the other cores in the run's generator cgroup.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { resolveScenario, ROOT } = require('../../src/scenario/resolve');
const { cgroupsUsable } = require('../../src/platform/cgroup');
const { waitForSync } = require('../../src/chains/ethereum/sync');
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

/** What every generator benchmark needs of the machine: a core for the node, one for the generator, and cgroups. */
function checkBenchMachine() {
  if (os.cpus().length < 2) throw new Error('the benchmark needs 2 cores: one for the node, one for the generator');
  if (!cgroupsUsable()) throw new Error('the benchmark needs cgroups to pin and count the generator (run it as root)');
}

/**
 * The bench node, synced, in a new folder named from prefix, with the pool the generators draw from (block 1):
 * {stack, stop, workDir, poolFile}. A node that does not sync is stopped before the error is thrown.
 */
async function startSyncedBenchNode(prefix) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const { stack, stop } = await startBenchNode(workDir);
  try {
    const sync = await waitForSync(stack.rpcUrl, { timeoutS: 60, log });
    const poolFile = path.join(workDir, 'pool.json');
    fs.writeFileSync(poolFile, JSON.stringify({ chain_id: 1337, head: sync.head, blocks: [1] }));
    return { stack, stop, workDir, poolFile };
  } catch (err) {
    await stop();
    throw err;
  }
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

module.exports = { checkBenchMachine, startSyncedBenchNode, benchTarget };
