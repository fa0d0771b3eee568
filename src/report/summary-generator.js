'use strict';
// The generator's lines of summary.md: the idle baseline, the load
// generator's CPU and where it ran, each of GENERATORS, the node's sync.

const generators = require('../workload/generators');
const { chainOf, num } = require('./format');

/** Where the generator ran: its cores here, or the swarm nodes SWARM_GENERATOR_NODES placed it on. */
function generatorWhere(run) {
  const sw = (run.stack && run.stack.swarm) || {};
  const gp = sw.generator_placement;
  if (run.generator.cpus) return `cpus ${run.generator.cpus}`;
  if (gp) {
    const nodes = [...new Set(gp.generators.map((g) => g.node))];
    return `swarm node${nodes.length === 1 ? '' : 's'} ${nodes.join(', ')} (SWARM_GENERATOR_NODES, ${run.generator.cores} cores; ${gp.source})`;
  }
  if (sw.node_placement) return "every core of chainperf's machine (the node ran on another)"; // SWARM_NODE
  return 'cpus shared with the node';
}

/** How the idle baseline was measured again while the node was still busy after its start, or ''. */
function idleSettling(idle) {
  if (!idle.settling) return '';
  const rates = idle.settling.map((b) => `${num(b.cpu_s_per_s * 1000, 0)} ms/s`).join(', ');
  return ` (measured ${idle.settling.length + 1} times: the node was busy with work of its own before, at ${rates}${idle.settled ? '' : ', and had not settled'})`;
}

function generatorLines(run) {
  const lines = [];
  const s = (run.provenance || {}).scenario || {};
  if (run.idle)
    lines.push(
      `- Idle baseline${run.idle_chain ? ' on a quiet chain (the chain load paused; empty blocks still came)' : ''}: ${num(run.idle.cpu_s, 3)} s of CPU over ${num(run.idle.seconds, 1)} s quiet (${num((run.idle.cpu_s / run.idle.seconds) * 1000, 2)} ms/s); the net figure subtracts that rate over the window${idleSettling(run.idle)}.`,
    );
  if (run.idle_chain)
    lines.push(
      `- Idle baseline under the chain's traffic (CHAIN_LOAD, no request): ${num(run.idle_chain.cpu_s, 3)} s of CPU over ${num(run.idle_chain.seconds, 1)} s (${num((run.idle_chain.cpu_s / run.idle_chain.seconds) * 1000, 2)} ms/s); the net-of-chain-work figure subtracts that rate over the window${idleSettling(run.idle_chain)}.`,
    );
  if (run.generator && run.generator.cpu_s !== null && run.generator.cpu_s !== undefined) {
    const chain = chainOf(run);
    const gen = chain.generatorLabel
      ? chain.generatorLabel(s)
      : (generators[s.GENERATOR] || generators.ethers).label(s);
    lines.push(
      `- Load generator (${gen}): ${num(run.generator.cpu_s, 3)} s of CPU on ${generatorWhere(run)}, ${num(run.generator.cpu_us_per_request, 1)} us per request.`,
    );
    for (const g of run.generator.generators || [])
      lines.push(
        `  - generator ${g.index} of ${run.generator.processes} (${g.node ? `on ${g.node}, ` : ''}cpus ${g.cpus || 'unpinned'}, ${g.offered.rate ? `${g.offered.rate} requests/s offered` : `${g.offered.users} users`}): ${num(g.requests_per_s, 1)} requests/s, ${num(g.cpu_us_per_request, 1)} us of CPU per request, ${g.cpu_utilization === null ? 'busy share n/a' : `${(g.cpu_utilization * 100).toFixed(0)}% busy`}.`,
      );
  }
  if (run.sync) lines.push(`- Node synced with its head advancing after ${num(run.sync.seconds, 1)} s.`);
  return lines;
}

module.exports = { generatorLines };
