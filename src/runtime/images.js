'use strict';
// The container images a compose scenario needs, and how to get each one
// where no image registry answers (air-gapped sites, these machines): every
// image is built locally from package sources.
//
//   base        debootstrap --variant=minbase bookworm + docker import: docker-build.js
//   geth        the binary chainperf builds from the Go module proxy, copied onto base
//   prometheus  Debian's package, installed with apt-get on base
//   cadvisor    chainperf's own main on the cAdvisor library module (images/cadvisor), built with Go, copied onto base
//   generator   chainperf's sources on generator-base (Node.js and the npm packages, on base): generator-image.js
//   grafana     not buildable from package sources: used when present, else skipped
//
// For each service: the image the scenario names (<SERVICE>_IMAGE), else the
// pinned upstream image when it is here or can be pulled, else the local build
// (built now if missing). What was used, and its image ID, goes into run.json.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { runWithProgress } = require('../install/progress');
const { withCacheLock } = require('../install/lock');
const { cacheDir } = require('../install/cache');
const clients = require('../clients');
const { generatorSourceHash, generatorFiles, baseRef } = require('./generator-image');
const { imageId, removeOtherTags, dockerBuild, IMAGES_DIR } = require('./docker-build');

const PROMETHEUS_VERSION = '2.42.0';
const CADVISOR_VERSION = '0.49.1'; // the upstream image
const CADVISOR_LIB_VERSION = '0.60.6'; // the library module images/cadvisor builds on (go.mod)
const GRAFANA_VERSION = '11.3.0';

/**
 * Upstream (pinned) and local references of each service's image.
 * @returns {Object<string, import('../contracts').ImageSpec & {optional?: boolean}>}
 */
function imageSpecs(s) {
  const specs = {
    node: clients[s.CLIENT].image(s),
    prometheus: {
      upstream: `prom/prometheus:v${PROMETHEUS_VERSION}`,
      local: `chainperf/prometheus:${PROMETHEUS_VERSION}`,
      dir: 'prometheus',
    },
    cadvisor: {
      upstream: `gcr.io/cadvisor/cadvisor:v${CADVISOR_VERSION}`,
      local: `chainperf/cadvisor:${CADVISOR_LIB_VERSION}-${cadvisorSourceHash()}`,
      dir: 'cadvisor',
      files: async (log) => ({ cadvisor: await ensureCadvisorBinary(log) }),
    },
  };
  // REPLICAS (or BALANCER=haproxy): the balancer in front of the fleet, as a service of the stack
  if (s.BALANCER === 'haproxy')
    specs.haproxy = { upstream: 'haproxy:2.6', local: 'chainperf/haproxy:bookworm', dir: 'haproxy' };
  // SWARM_GENERATOR_NODES: the generator's image, built from this machine's Node.js and chainperf (no upstream)
  if (s.SWARM_GENERATOR_NODES)
    specs.generator = {
      upstream: null,
      local: `chainperf/generator:${generatorSourceHash()}`,
      dir: 'generator',
      files: generatorFiles,
      buildArgs: { BASE: baseRef() },
      replaces: true, // a new build (its sources changed) removes the older ones: each is about 700 MB
    };
  if (s.GRAFANA !== 'no')
    specs.grafana = { upstream: `grafana/grafana:${GRAFANA_VERSION}`, local: null, optional: true };
  return specs;
}

/** docker pull; false (quickly where no registry answers), the image and why kept in `refused`. */
function tryPull(ref, refused) {
  const r = spawnSync('docker', ['pull', '--quiet', ref], { encoding: 'utf8', timeout: 120000 });
  if (r.status === 0) return true;
  refused.push({ ref, why: (r.stderr || r.stdout || '').trim().split('\n').pop() });
  return false;
}

/**
 * One line for the pulls refused for the same cause (its last words: "no such host" where no registry answers, each
 * registry named in its own message), not one each; the first one's message in full.
 */
function sayRefused(refused, log) {
  if (!refused.length) return;
  const cause = (x) => x.why.split(': ').pop();
  const same = refused.every((x) => cause(x) === cause(refused[0]));
  if (refused.length === 1 || !same) for (const x of refused) log(`cannot pull ${x.ref}: ${x.why}`);
  else
    log(
      `cannot pull ${refused.map((x) => x.ref).join(', ')}: ${cause(refused[0])}, each (${refused[0].ref}: ${refused[0].why})`,
    );
}

/**
 * Makes sure every image the scenario needs is here.
 * @returns {Promise<Object<string, {ref:string, id:string, origin:string}|{skipped:string}>>}
 */
async function ensureImages(s, log, { allowPull = true } = {}) {
  const out = {};
  const refused = [];
  const pulled = (ref) => allowPull && tryPull(ref, refused);
  try {
    await ensureEach(s, log, out, pulled);
  } finally {
    sayRefused(refused, log);
  }
  return out;
}

/** ensureImages's work: each service's image, found, pulled or built, into out. */
async function ensureEach(s, log, out, pulled) {
  for (const [service, spec] of Object.entries(imageSpecs(s))) {
    const named = s[`${service.toUpperCase()}_IMAGE`];
    if (named) {
      if (!(await imageId(named)) && !pulled(named)) {
        throw new Error(`${service.toUpperCase()}_IMAGE=${named}: no such image here and it cannot be pulled`);
      }
      out[service] = { ref: named, id: await imageId(named), origin: 'named by the scenario' };
      continue;
    }
    if (spec.upstream && ((await imageId(spec.upstream)) || pulled(spec.upstream))) {
      out[service] = { ref: spec.upstream, id: await imageId(spec.upstream), origin: 'upstream' };
      continue;
    }
    if (!spec.local) {
      const why = `${spec.upstream} is not here, cannot be pulled, and cannot be built from package sources`;
      if (spec.optional && s.GRAFANA !== 'yes') {
        log(`${service}: skipped: ${why} (load it with docker load, or set GRAFANA=no to stop trying)`);
        out[service] = { skipped: why };
        continue;
      }
      throw new Error(`${service}: ${why}`);
    }
    if (!(await imageId(spec.local))) {
      await withCacheLock(
        `image-${spec.local}`,
        async () => {
          if (await imageId(spec.local)) return; // built by another run while this one waited
          log(
            `${service}: building ${spec.local} locally (${spec.upstream ? `no registry has ${spec.upstream}` : "chainperf's own"})`,
          );
          const files = spec.files ? await spec.files(log) : {};
          await dockerBuild(spec.dir, spec.local, log, { files, buildArgs: spec.buildArgs });
          if (spec.replaces) removeOtherTags(spec.local, log);
        },
        { log, what: `building ${spec.local}` },
      );
    }
    const origin = spec.upstream ? 'built locally from package sources' : "built locally from chainperf's own sources";
    out[service] = { ref: spec.local, id: await imageId(spec.local), origin };
  }
}

/** Short hash of images/cadvisor's Go sources: a changed main.go builds a new binary and image. */
function cadvisorSourceHash() {
  const h = crypto.createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) h.update(fs.readFileSync(path.join(IMAGES_DIR, 'cadvisor', f)));
  return h.digest('hex').slice(0, 8);
}

/** chainperf's cAdvisor main (images/cadvisor), built with Go into the cache, once. */
async function ensureCadvisorBinary(log) {
  const bin = cacheDir('cadvisor', `${CADVISOR_LIB_VERSION}-${cadvisorSourceHash()}`, 'cadvisor');
  if (fs.existsSync(bin)) return bin;
  await withCacheLock(
    'cadvisor-binary',
    async () => {
      if (fs.existsSync(bin)) return;
      fs.mkdirSync(path.dirname(bin), { recursive: true });
      // built beside its place and moved into it: a build cut short never leaves a binary that looks complete
      await runWithProgress('go', ['build', '-trimpath', '-o', `${bin}.building`, '.'], {
        label: 'building cAdvisor from its Go module',
        step: `cadvisor-${CADVISOR_LIB_VERSION}`,
        usual: 180,
        note: 'from the Go module proxy, once',
        log,
        env: { CGO_ENABLED: '0' },
        cwd: path.join(IMAGES_DIR, 'cadvisor'),
      });
      fs.renameSync(`${bin}.building`, bin);
    },
    { log, what: 'building cAdvisor' },
  );
  return bin;
}

module.exports = { ensureImages, imageSpecs, sayRefused, IMAGES_DIR, CADVISOR_LIB_VERSION };
