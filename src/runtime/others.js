'use strict';
// Two chainperf runs at once on one machine compete for its cores (both pin
// their node to the first ones): each run looks for the others under the
// `chainperf/` cgroup, where every run keeps its node and load generator, and
// warns in its report rather than refusing (parallel test runs are normal).

const fs = require('node:fs');
const path = require('node:path');
const { runsRoot, hasProcesses } = require('../platform/cgroup');

/** Run ids of the other chainperf runs with a process in their cgroups now. */
function otherRuns(runId, root = runsRoot()) {
  if (!root || !fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== runId && hasProcesses(path.join(root, e.name)))
    .map((e) => e.name);
}

/** Adds a warning (once per other run) for every other run seen now. */
function watchOtherRuns(runId, warnings, log, root) {
  let others;
  try {
    others = otherRuns(runId, root);
  } catch {
    return; // no cgroups here: nothing to see
  }
  for (const id of others) {
    const w = `another chainperf run (${id}) was running on this machine during this run: the runs competed for its cores, so these figures may be off`;
    if (warnings.includes(w)) continue;
    warnings.push(w);
    log(`warning: ${w}`);
  }
}

module.exports = { otherRuns, watchOtherRuns };
