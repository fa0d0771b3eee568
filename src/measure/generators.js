'use strict';
// GENERATORS=N: a pass (warm-up or window) runs N artillery processes, each
// in its own cgroup under the generator's, pinned to its own share of the
// generator's cores (src/workload/split.js divides the load). They read one
// spec's instants, so they start and stop together, and write their samples
// into one folder: a window's figures merge every latency of every generator
// (samples.js), and each generator's CPU is read from its own cgroup. With
// SWARM_GENERATOR_NODES each is a task of the swarm stack instead, run through
// its agent (workload/agent-client.js), its CPU its container's.

const os = require('node:os');
const { Cgroup } = require('../platform/cgroup');
const { artilleryFiles, runArtillery } = require('../workload/artillery');
const { generatorCores, generatorShare } = require('../workload/split');
const { log } = require('../util/log');

/**
 * The N generators' cgroups (made once per stack, removed at teardown), pinned to their cores; [the generator's own
 * group] for one generator; nulls where chainperf has no generator cgroup (attach without cgroups).
 */
function generatorGroups(stack, n) {
  if (stack.generatorAgents) return stack.generatorAgents.map((a) => a.group()); // SWARM_GENERATOR_NODES
  if (n === 1) return [stack.generatorGroup || null];
  if (!stack.generatorGroup) return Array(n).fill(null);
  if (stack.generatorGroups && stack.generatorGroups.length === n) return stack.generatorGroups;
  const all = stack.generatorCpus || `0-${os.cpus().length - 1}`;
  const { cpus, shared } = generatorCores(all, n);
  if (shared)
    log(
      `GENERATORS=${n}: more generators than the generator's cores (${all}): they take the cores in turn and share them`,
    );
  const runId = stack.generatorGroup.name.split('/')[1];
  stack.generatorGroups = cpus.map((c, i) => new Cgroup(`chainperf/${runId}/generator/g${i}`, { cpus: c }));
  stack.generatorGroupCpus = cpus;
  const groups = stack.generatorGroups;
  stack.cleanups.push(() => Promise.all(groups.map((g) => g.destroy())));
  return groups;
}

/**
 * Starts one pass of N generators.
 * @param {object} o
 * @param {object} o.scenario resolved scenario (GENERATORS, and the load they share)
 * @param {object} o.spec the pass's generator spec (instants, seed, shape, samples folder)
 * @param {object} o.stack the runtime's stack (generatorGroup, generatorCpus, cleanups)
 * @param {string} o.dir, o.name, o.processor, o.signal as for runArtillery
 * @returns {{meta: object, run: Promise<object>}[]} each generator's index, cgroup, cores, offered load and log
 * file, and its runArtillery result to come
 */
function generatorPasses({ scenario, spec, stack, dir, name, processor, signal }) {
  const n = scenario.GENERATORS || 1;
  const groups = generatorGroups(stack, n);
  return groups.map((group, i) => {
    const share = generatorShare(scenario, spec, n, i);
    const passName = n === 1 ? name : `${name}.g${i}`;
    const agent = stack.generatorAgents && stack.generatorAgents[i];
    const meta = {
      index: i,
      group,
      cpus: agent ? agent.health.cpus : n === 1 ? stack.generatorCpus : (stack.generatorGroupCpus || [])[i] || null,
      ...(agent ? { node: agent.hostname } : {}),
      offered: share.scenario.RATE ? { rate: share.scenario.RATE } : { users: share.scenario.CONCURRENCY },
      logFile: artilleryFiles(dir, passName).logFile,
    };
    const pass = { ...share, dir, name: passName, processor, signal };
    // SWARM_GENERATOR_NODES: a task on a swarm node, through its agent (workload/agent-client.js)
    return { meta, run: agent ? agent.runPass(pass) : runArtillery({ ...pass, group }) };
  });
}

/** One pass of N generators, to its end: each generator's runArtillery result with its index, cgroup and load. */
function runGenerators(o) {
  return Promise.all(generatorPasses(o).map((p) => p.run.then((r) => ({ ...r, ...p.meta }))));
}

module.exports = { runGenerators, generatorPasses, generatorGroups };
