'use strict';
// A second node for the test swarm on one machine: a Docker engine in a
// container (Dockerfile beside this file) that joins the swarm this engine
// manages as a worker, with the images its tasks need loaded into it (no
// image registry answers). Its tasks are real tasks of the stack, on an engine
// of their own, reached over the swarm's overlay network.

const { execFile, execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');
const swarm = require('../../../src/platform/swarm');
const { removeTree } = require('../../../src/platform/cgroup');

const run = promisify(execFile);
const IMAGE = 'chainperf-test/swarm-worker:bookworm';
const NAME = 'chainperf-test-swarm-worker';
const VOLUME = `${NAME}-docker`; // the inner engine's /var/lib/docker: overlay2 needs a disk, not an overlay, below it
const CGROUP_PARENT = NAME; // its containers' cgroups, under every controller, apart from this engine's

/** Every capability but those the outer engine lacks: --privileged asks for all and some hosts (nested) refuse it. */
const CAPS = (
  'CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE ' +
  'NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN ' +
  'SYS_BOOT SYS_NICE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN ' +
  'SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ'
).split(' ');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `docker` with args; stdout, or an error with stderr. */
async function docker(args, opts = {}) {
  return (await run('docker', args, { maxBuffer: 1 << 26, ...opts })).stdout.trim();
}

/** Removes the worker: it leaves the swarm, its container, volume and cgroups go, the swarm forgets it. */
async function removeWorker(nodeId = null) {
  await docker(['exec', NAME, 'docker', 'swarm', 'leave', '--force']).catch(() => {});
  await docker(['rm', '-f', NAME]).catch(() => {});
  await docker(['volume', 'rm', '-f', VOLUME]).catch(() => {});
  if (nodeId) await docker(['node', 'rm', '--force', nodeId]).catch(() => {});
  const root = '/sys/fs/cgroup'; // v1: one tree per controller; v2: one tree
  for (const dir of [root, ...fs.readdirSync(root).map((c) => path.join(root, c))])
    removeTree(path.join(dir, CGROUP_PARENT));
}

/** Starts the inner engine: privileged where the outer engine allows it, else with every capability it has. */
async function startEngine() {
  const common = ['run', '-d', '--name', NAME, '--hostname', NAME, '-v', `${VOLUME}:/var/lib/docker`];
  const cmd = [IMAGE, `--cgroup-parent=/${CGROUP_PARENT}`];
  try {
    await docker([...common, '--privileged', ...cmd]);
  } catch (err) {
    if (!/operation not permitted/.test(String(err.stderr || err.message))) throw err;
    await docker(['rm', '-f', NAME]).catch(() => {});
    const caps = CAPS.flatMap((c) => ['--cap-add', c]);
    const open = ['--security-opt', 'apparmor=unconfined', '--security-opt', 'seccomp=unconfined'];
    const devices = ['--device-cgroup-rule', 'a *:* rwm', '-v', '/dev:/dev', '-v', '/sys/fs/cgroup:/sys/fs/cgroup:rw'];
    await docker([...common, ...caps, ...open, ...devices, ...cmd]);
  }
  for (let i = 0; ; i++) {
    if (
      await docker(['exec', NAME, 'docker', 'info']).then(
        () => true,
        () => false,
      )
    )
      return;
    if (i > 60)
      throw new Error(`the worker's Docker engine did not start: ${await docker(['logs', '--tail', '20', NAME])}`);
    await sleep(500);
  }
}

/** `docker save images | docker exec -i worker docker load`. */
function loadImages(images) {
  return new Promise((resolve, reject) => {
    const save = spawn('docker', ['save', ...images], { stdio: ['ignore', 'pipe', 'pipe'] });
    const load = spawn('docker', ['exec', '-i', NAME, 'docker', 'load'], { stdio: ['pipe', 'ignore', 'pipe'] });
    save.stdout.pipe(load.stdin);
    let err = '';
    save.stderr.on('data', (d) => (err += d));
    load.stderr.on('data', (d) => (err += d));
    load.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`docker load in the worker: ${err}`))));
  });
}

/**
 * Builds the worker's image, starts it, joins it to the swarm and loads `images` into it; resolves {hostname, nodeId,
 * remove()} once the swarm lists it Ready. The swarm must advertise an address a container reaches.
 */
async function startSwarmWorker(images, log = () => {}) {
  const st = await swarm.swarmState();
  if (!st.manager) throw new Error('a swarm worker joins a swarm this engine manages, and it manages none');
  if (!st.addr || /^127\./.test(st.addr))
    throw new Error(
      `this swarm advertises ${st.addr}, which a worker in a container cannot reach: leave it (docker swarm leave --force) and the test makes one on the Docker bridge's address`,
    );
  await removeWorker();
  log('building the swarm worker image');
  execFileSync('docker', ['build', '-q', '-t', IMAGE, __dirname], { stdio: 'pipe' });
  let nodeId = null;
  try {
    await startEngine();
    const token = await docker(['swarm', 'join-token', '-q', 'worker']);
    await docker(['exec', NAME, 'docker', 'swarm', 'join', '--token', token, `${st.addr}:2377`]);
    nodeId = await docker(['exec', NAME, 'docker', 'info', '--format', '{{.Swarm.NodeID}}']);
    log(`loading ${images.join(', ')} into the worker`);
    await loadImages(images);
    for (let i = 0; (await docker(['node', 'inspect', nodeId, '--format', '{{.Status.State}}'])) !== 'ready'; i++) {
      if (i > 60) throw new Error(`swarm worker ${nodeId} never became ready`);
      await sleep(500);
    }
  } catch (err) {
    await removeWorker(nodeId); // nothing of a worker that failed to join is left
    throw err;
  }
  return {
    hostname: NAME,
    nodeId,
    /** `docker` inside the worker: its own engine's view. */
    docker: (args) => docker(['exec', NAME, 'docker', ...args]),
    /** Where its containers' cgroups are on this machine: below its engine's cgroup parent. */
    cgroupParent: CGROUP_PARENT,
    /** Loads more images of this engine into the worker's. */
    load: (more) => loadImages(more),
    remove: () => removeWorker(nodeId),
  };
}

/**
 * The address a container reaches this machine's engine on: the default bridge's gateway. An engine that has just
 * been installed may leave the gateway out of the bridge's IPAM config; the bridge's interface (docker0 unless the
 * engine names another) has it then. Never empty: `docker swarm init --advertise-addr ''` would advertise the
 * machine's own interface, which a worker in a container reaches for the control plane but not for the overlay's
 * data path (its VXLAN packets to this machine are never answered).
 */
function bridgeAddress() {
  const inspect = (format) =>
    String(execFileSync('docker', ['network', 'inspect', 'bridge', '--format', format])).trim();
  const gateway = inspect('{{range .IPAM.Config}}{{.Gateway}} {{end}}').split(' ')[0];
  if (gateway) return gateway;
  const name = inspect('{{index .Options "com.docker.network.bridge.name"}}').replace('<no value>', '') || 'docker0';
  // `ip`, not os.networkInterfaces(): that lists no bridge without a container on it (no carrier)
  const v4 = /inet (\d+\.\d+\.\d+\.\d+)\//.exec(String(execFileSync('ip', ['-4', '-o', 'addr', 'show', 'dev', name])));
  if (!v4) throw new Error(`the Docker bridge (${name}) has no IPv4 address here: no address a worker can reach`);
  return v4[1];
}

module.exports = { startSwarmWorker, bridgeAddress };
