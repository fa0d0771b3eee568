'use strict';
// The node's data in a compose run: a STATE profile restored into a volume of
// the run, a named volume kept between runs (NODE_VOLUME, SNAPSHOT), and the
// memory and disk limits (MEMORY_MB, DISK_*) as a compose override file.

const fs = require('node:fs');
const path = require('node:path');
const docker = require('../platform/docker');
const { Cgroup, cgroupsUsable, groupsLeftover } = require('../platform/cgroup');
const { cpuList } = require('./host');
const { limitsOf, composeOverride, describeLimits } = require('./limits');
const { restoreComposeState, restoreGenesisOnly } = require('../state/restore');
const { dockerDataDevice } = require('./compose-node');
const { serviceOf } = require('./compose-fleet');

/** The generator's cgroup, and a STATE profile restored into the run's volume. */
async function prepareComposeNode(stack, p, { runId, workDir, log, signal }) {
  const { s, client, stateVolume } = p;
  if (cgroupsUsable()) {
    const group = new Cgroup(`chainperf/${runId}/generator`, { cpus: p.generatorCpus || cpuList(0, p.ncpu) });
    stack.generatorGroup = group; // SWARM_GENERATOR_NODES puts the agents' in its place (swarm-generators.js)
    stack.cleanups.push(() => group.destroy());
    stack.leftovers.push(() => groupsLeftover([group]));
  }
  // A dev chain is fresh (history is created on it) unless it comes from a kept volume.
  if (stateVolume) {
    const { ensureBase } = require('./docker-build');
    const bin = await client.ensureBinary(s, log); // the state is built with the same geth version on this host
    const version = s.CLIENT_VERSION || client.binaryVersion(bin);
    // SYNC=network: the node's volume gets the profile's genesis block alone, written here, and it snap-syncs the rest
    const from = s.SYNC === 'network' ? path.join(workDir, 'genesis-only') : null;
    if (from) await restoreGenesisOnly(s, { bin, version, dataDir: from, log, signal });
    const restored = await restoreComposeState(s, {
      bin,
      version,
      volume: stateVolume,
      docker,
      baseRef: await ensureBase(log),
      log,
      signal,
      from,
    });
    stack.state = restored.state;
    stack.cleanups.push(() =>
      s.KEEP === 'none' ? restored.remove() : log(`KEEP=${s.KEEP}: volume ${stateVolume} kept`),
    );
  }
  stack.freshChain = s.NODE_VOLUME ? !(await ensureVolume(s, log)) : true;
}

/**
 * MEMORY_MB and DISK_* as a compose file for the node service, written into the work folder;
 * disk limits on the device that holds the Docker engine's data (its volumes). Null without limits.
 */
async function composeLimits(s, workDir, log) {
  const limits = limitsOf(s);
  if (!limits) return null;
  let device = null;
  if (Object.keys(limits.disk).length) {
    const { root, device: found } = await dockerDataDevice();
    device = found;
    if (device.error) throw new Error(`the Docker engine's data (${root}): ${device.error}`);
  }
  const file = path.join(workDir, 'limits.yml');
  // REPLICAS: each replica has limits of its own
  const replicas = Array.from({ length: s.REPLICAS - 1 }, (_, i) => serviceOf(i + 2));
  const text = composeOverride(limits, device, ['node', ...replicas]);
  fs.writeFileSync(file, text);
  log(`node limits${replicas.length ? ', for each replica' : ''}: ${describeLimits(s, device)}`);
  return {
    file,
    record: {
      memory_bytes: limits.memoryBytes,
      device: device ? device.dev : null,
      applies_to: replicas.length ? 'each replica' : 'the node',
      compose: JSON.parse(text).services.node,
    },
  };
}

/**
 * NODE_VOLUME: created when missing, restored from SNAPSHOT when that is given and the volume is new. Resolves whether
 * it holds a chain already.
 */
async function ensureVolume(s, log) {
  const existing = await docker.engine('GET', `/volumes/${encodeURIComponent(s.NODE_VOLUME)}`);
  if (existing.status === 200) {
    log(
      `node data: volume ${s.NODE_VOLUME} (kept from an earlier run)${s.SNAPSHOT ? '; SNAPSHOT not restored over it' : ''}`,
    );
    return true;
  }
  const made = await docker.engine('POST', '/volumes/create', {
    body: { Name: s.NODE_VOLUME, Labels: { 'io.chainperf.volume': 'node-data' } },
  });
  if (made.status !== 201) throw new Error(`cannot create volume ${s.NODE_VOLUME}: HTTP ${made.status}`);
  if (!s.SNAPSHOT) {
    log(`node data: new volume ${s.NODE_VOLUME}`);
    return false;
  }
  const snap = path.resolve(s.SNAPSHOT);
  log(`node data: restoring ${snap} into new volume ${s.NODE_VOLUME}`);
  const { BASE_REF, ensureBase } = require('./docker-build');
  await ensureBase(log);
  const { runWithProgress } = require('../install/progress');
  await runWithProgress(
    'docker',
    [
      'run',
      '--rm',
      '-v',
      `${s.NODE_VOLUME}:/data`,
      '-v',
      `${path.dirname(snap)}:/snapshot:ro`,
      BASE_REF,
      'tar',
      '-xf',
      `/snapshot/${path.basename(snap)}`,
      '-C',
      '/data',
    ],
    { label: `restoring ${path.basename(snap)}`, step: 'restore-snapshot', log },
  );
  return true;
}

module.exports = { prepareComposeNode, composeLimits, ensureVolume };
