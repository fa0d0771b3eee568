'use strict';
// What a killed run left behind, found and removed. A run or A/B session whose
// lock (src/session/run-lock.js) names a process that is gone was killed
// (SIGKILL, the OOM killer, a CI job's time-out) before it could tear down: its
// processes may still run (a node, Prometheus, the load generator), its
// cgroups, compose project and work folder (node data, Prometheus data) remain,
// and its report folder has no run.json. Every run reclaims such runs when it
// starts, and `./run.sh clean` does it on demand: processes killed, cgroups,
// compose project and work folders removed, and a run.json (ab.json) with
// status `killed` written into the report folder from the run's last
// checkpoint, keeping what was measured.

const fs = require('node:fs');
const path = require('node:path');
const { listLocks } = require('./session/run-lock');
const { killIfSame, processesMentioning, isRunning } = require('./util/proc');
const { removeProject, engine } = require('./platform/docker');
const { runsRoot, cgroupDirsNamed, pidsInTree, hasProcesses, removeTree } = require('./platform/cgroup');
const { writeReport } = require('./report/write');
const { writeAbReport } = require('./ab/report');
const { scrub } = require('./util/scrub');

/** Kills what runs in a cgroup directory and the groups under it, and removes them; whether they are gone. */
async function removeCgroupDir(dir) {
  for (let i = 0; i < 50 && fs.existsSync(dir); i++) {
    for (const pid of pidsInTree(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    removeTree(dir); // a group whose process has not exited yet stays until the next round
    if (fs.existsSync(dir)) await new Promise((r) => setTimeout(r, 100));
  }
  return !fs.existsSync(dir);
}

/** Removes one leftover a lock describes; returns what was removed, or null. */
async function removeLeftover(l) {
  if (l.cgroups) {
    // deepest first, then the run's own folders above them (chainperf/<run-id>) once empty
    const dirs = [...l.cgroups, ...new Set(l.cgroups.map((d) => path.dirname(d)))];
    for (const d of dirs) await removeCgroupDir(d);
    return l.what;
  }
  if (l.process) return killIfSame(l.process) ? l.what : null;
  if (l.compose) {
    const r = await removeProject(l.compose.project);
    return `compose project ${l.compose.project} (${r.containers.length} containers, ${r.volumes.length} volumes, ${r.networks.length} networks)`;
  }
  if (l.swarm) {
    const { removeStack } = require('./platform/swarm');
    const left = await removeStack(l.swarm.stack);
    return `swarm stack ${l.swarm.stack}${left.services.length + left.containers.length ? ' (partly: see docker stack ps)' : ''}`;
  }
  return null; // a work folder: removed with the lock's work folders
}

/**
 * Kills every process that still uses a work folder (a node's datadir, Prometheus' storage, the generator's script),
 * then removes it.
 */
async function removeWorkDir(dir) {
  if (!fs.existsSync(dir)) return null;
  for (let i = 0; i < 20; i++) {
    const users = processesMentioning(dir);
    if (!users.length) break;
    users.forEach(killIfSame);
    await new Promise((r) => setTimeout(r, 100));
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return `work folder ${dir}`;
}

/** run.json (or ab.json) with status killed from the lock's last checkpoint, unless the run wrote its own. */
function writeKilledReport(lock, reclaimedBy) {
  const dir = lock.report_dir;
  const own = path.join(dir, lock.kind === 'ab' ? 'ab.json' : 'run.json');
  if (!dir || !fs.existsSync(dir) || fs.existsSync(own)) return null;
  const record = lock.record || {};
  const killed = {
    ...record,
    status: 'killed',
    error: `the chainperf process (PID ${lock.process.pid}) was killed during ${record.phase || 'its start'} without tearing down; ${reclaimedBy} found it, removed what it left and wrote this report from its last checkpoint (${lock.checkpoint_at})`,
    ended_at: lock.checkpoint_at,
  };
  killed.warnings = [
    ...(record.warnings || []),
    'the run was killed: its figures, if any, are those of its last checkpoint',
  ];
  if (lock.kind === 'ab') {
    try {
      writeAbReport(dir, killed);
    } catch {
      // a session killed before any pair has no summary to render
      fs.writeFileSync(own, `${JSON.stringify(killed, null, 2)}\n`);
    }
  } else writeReport(dir, killed, {});
  return own;
}

/**
 * Reclaims one killed run: its leftovers, its work folders, its report, its lock.
 * @returns {Promise<{run_id: string, removed: string[], report: string|null}>}
 */
async function reclaimRun(entry, reclaimedBy) {
  const { lock } = entry;
  const removed = [];
  for (const l of lock.leftovers || []) {
    try {
      const r = await removeLeftover(l);
      if (r) removed.push(r);
    } catch (err) {
      removed.push(`not removed: ${l.what} (${err.message}); remove it with: ${l.command}`);
    }
  }
  for (const d of lock.work_dirs || []) {
    const r = await removeWorkDir(d);
    if (r) removed.push(r);
  }
  let report = null;
  try {
    report = writeKilledReport(lock, reclaimedBy);
  } catch (err) {
    removed.push(`no report written into ${lock.report_dir}: ${err.message}`);
  }
  fs.rmSync(entry.file, { force: true });
  return { run_id: lock.run_id, removed, report };
}

/**
 * Reclaims every run whose process is gone, saying so.
 * @param {{log: (line: string) => void, by: string}} o by: who reclaims (a run id, or ./run.sh clean)
 */
async function reclaimKilledRuns({ log, by }) {
  const out = [];
  for (const entry of listLocks().filter((e) => !e.alive && e.lock.process && !isRunning(e.lock.process))) {
    const r = await reclaimRun(entry, by);
    log(
      scrub(
        `run ${r.run_id} was killed before it could tear down: removed ${r.removed.join(', ') || 'nothing (nothing was left)'}${r.report ? `; wrote ${r.report} (status killed)` : ''}`,
      ),
    );
    out.push(r);
  }
  return out;
}

/** A run's cgroup directories under every controller, from its directory under runsRoot() (cpuacct's on v1). */
const runGroupDirs = (dir) => cgroupDirsNamed(`chainperf/${path.basename(dir)}`);

/**
 * How long a run's empty cgroups must have been left alone before clean removes them when no lock names the run. A
 * live run can have empty cgroups (a compose run's generator group between windows, npm run bench's between its
 * generators) and hold its lock where this clean does not look (another CHAINPERF_RUNS_DIR; the bench holds none).
 */
const ORPHAN_AFTER_MS = 6 * 3600 * 1000;

/** The newest modification time in a directory tree (a cgroup's changes when a child group comes or goes). */
function newestMtime(dir) {
  let newest = fs.statSync(dir).mtimeMs;
  for (const e of fs.readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(path.join(dir, e.name)));
  return newest;
}

/**
 * cgroups of runs no lock names (a run from before locks, or one that died before taking its lock) with no process:
 * those left alone for ORPHAN_AFTER_MS (old), and how many are younger (young, left).
 */
function orphanCgroups(liveIds, now = Date.now()) {
  const root = runsRoot();
  const out = { old: [], young: 0 };
  if (!root || !fs.existsSync(root)) return out;
  for (const e of fs.readdirSync(root, { withFileTypes: true })) {
    if (!e.isDirectory() || liveIds.has(e.name)) continue;
    const dir = path.join(root, e.name);
    if (hasProcesses(dir)) continue;
    if (now - newestMtime(dir) >= ORPHAN_AFTER_MS) out.old.push(dir);
    else out.young++;
  }
  return out;
}

/** The labels that name a container's or volume's Compose project or swarm stack. */
const PROJECT_LABELS = ['com.docker.compose.project', 'com.docker.stack.namespace'];

/**
 * Compose projects and swarm stacks named like a run's (chainperf-...) that no live lock names, from the engine's
 * containers and volumes: {name: {kind, running, stopped, volumes}}. A pure function of the lists (tested alone).
 */
function strayProjects(containers, volumes, liveIds) {
  const out = {};
  const add = (labels, key) => {
    const label = PROJECT_LABELS.find((l) => labels && labels[l]);
    const name = label ? labels[label] : '';
    if (!name.startsWith('chainperf-') || [...liveIds].some((id) => name.includes(id))) return;
    const kind = label === PROJECT_LABELS[0] ? 'compose project' : 'swarm stack';
    const p = out[name] || (out[name] = { kind, running: 0, stopped: 0, volumes: 0 });
    p[key]++;
  };
  for (const c of containers) add(c.Labels, c.State === 'running' ? 'running' : 'stopped');
  for (const v of volumes) add(v.Labels, 'volumes');
  return out;
}

/** The engine's containers and volumes of any project or stack; null when no Docker engine answers. */
async function projectItems() {
  try {
    const lists = await Promise.all(
      PROJECT_LABELS.map(async (l) => {
        const f = encodeURIComponent(JSON.stringify({ label: [l] }));
        const c = await engine('GET', `/containers/json?all=true&filters=${f}`);
        const v = await engine('GET', `/volumes?filters=${f}`);
        return { containers: c.status === 200 ? c.body : [], volumes: v.status === 200 ? v.body.Volumes || [] : [] };
      }),
    );
    const uniq = (items, key) => [...new Map(items.map((x) => [x[key], x])).values()];
    return {
      containers: uniq(
        lists.flatMap((x) => x.containers),
        'Id',
      ),
      volumes: uniq(
        lists.flatMap((x) => x.volumes),
        'Name',
      ),
    };
  } catch {
    return null;
  }
}

/** What clean says of a stray project: what it holds and the command that removes it. */
function strayLine(name, p) {
  const remove = p.kind === 'swarm stack' ? `docker stack rm ${name}` : `docker compose -p ${name} down --volumes`;
  return `${p.kind} ${name} is named by no lock: ${p.running} running and ${p.stopped} stopped containers, ${p.volumes} volumes; left alone (KEEP=stack or KEEP=volume keep them on purpose, and a live run may hold its lock elsewhere); remove it with: ${remove}`;
}

/**
 * ./run.sh clean: lists the runs that live (left alone) and reclaims those that were killed, then removes empty
 * cgroups no lock names, and lists the compose projects and swarm stacks no lock names (never removed: they may be
 * kept on purpose). Prints what it did; exit status 0.
 */
async function cleanCommand({ log = (l) => process.stderr.write(`${l}\n`) } = {}) {
  const locks = listLocks();
  const live = locks.filter((e) => e.alive);
  for (const { lock } of live)
    log(`run ${lock.run_id} is running (PID ${lock.process.pid}, report folder ${lock.report_dir}): left alone`);
  const reclaimed = await reclaimKilledRuns({ log, by: './run.sh clean' });
  const orphans = orphanCgroups(new Set(live.map((e) => e.lock.run_id)));
  for (const dir of orphans.old) {
    // the same folder name under each controller (cpuacct, memory, blkio, cpuset)
    for (const d of runGroupDirs(dir)) await removeCgroupDir(d);
    log(`removed the empty cgroups of run ${path.basename(dir)} (no lock names it)`);
  }
  if (orphans.young)
    log(
      `left the empty cgroups of ${orphans.young} run(s) no lock names but changed in the last ${ORPHAN_AFTER_MS / 3600000} h: such a run may live with its lock elsewhere (CHAINPERF_RUNS_DIR, npm run bench)`,
    );
  const items = await projectItems();
  const strays = items ? strayProjects(items.containers, items.volumes, new Set(live.map((e) => e.lock.run_id))) : {};
  for (const [name, p] of Object.entries(strays)) log(strayLine(name, p));
  log(
    `clean: ${live.length} running, ${reclaimed.length} killed runs reclaimed, ${orphans.old.length} empty cgroups removed${Object.keys(strays).length ? `, ${Object.keys(strays).length} projects or stacks no lock names (listed, left alone)` : ''}`,
  );
  return 0;
}

module.exports = {
  reclaimKilledRuns,
  reclaimRun,
  writeKilledReport,
  cleanCommand,
  orphanCgroups,
  strayProjects,
  runGroupDirs,
  removeCgroupDir,
  ORPHAN_AFTER_MS,
};
