// @ts-check
'use strict';
// REPLICAS, wherever the fleet runs (host processes: host-fleet.js; compose
// or swarm services: compose-fleet.js): stack.fleet, the window hook that
// reads the balancer's counters and each replica's CPU at the window's edges
// (and every second whether HAProxy keeps each replica in rotation), the
// fault a scenario asks for, the run's warnings and record. A replica is
// {name, group: {cpu(), memoryBytes()}, kill(), onGone(fn), pid or container}
// (on another swarm node: group null, cpuSpan(start, end) from its cAdvisor);
// the balancer {counts(), logText()} and its group {cpu()} (on another swarm
// node: no group, lb.cpuSpan(start, end) from its cAdvisor).

const { fleetRecord, faultRecord, perSecond } = require('./fleet-records');
const { accessLog } = require('./haproxy');

/**
 * FAULT=kill-replica@Ns: kills the last replica N s into the window (once per run); the hook reads what it did. A
 * window whose load began late (window.loadBeganLate(), by the generator's own record) is measured again
 * (measure/window.js): a replica killed in it would be dead before the window that counts, so such a window keeps its
 * replicas and the next one is given the fault. The generator's record is written once a second and may lag on a
 * loaded machine (none yet reads as no request): a window that looks late is looked at again recheckMs later, up to
 * LATE_RECHECKS times, and only held back if it still does (a start that was late stays late: the wait never turns a
 * late one into a punctual one, it lets a lagging record catch up). A record that lagged longer still holds the fault
 * back though the load was on time: that window is measured again too (its hook's record says faultHeldBack), so the
 * fault still lands in the window that counts.
 */
const LATE_RECHECKS = 4;
function scheduleFault(s, replicas, window, state, { recheckMs = 500 } = {}) {
  const m = /^kill-replica@(\d+)s$/.exec(s.FAULT || '');
  if (!m || state.done) return () => {};
  state.done = true;
  const victim = replicas[replicas.length - 1];
  let rechecks = 0;
  let timer = null;
  const fire = () => {
    if (window.loadBeganLate && window.loadBeganLate()) {
      if (rechecks < LATE_RECHECKS && Date.now() + recheckMs < window.end) {
        rechecks++;
        timer = setTimeout(fire, recheckMs);
        return;
      }
      state.done = false;
      state.heldBack = (state.heldBack || 0) + 1;
      state.heldInWindow = true;
      return;
    }
    const who = victim.pid ? { pid: victim.pid } : { container: victim.container };
    state.fault = { kind: 'kill-replica', replica: victim.name, ...who, at_ms: Date.now() };
    // SIGKILL takes a moment: responses it had written may still reach the balancer until the process is gone.
    // A replica on another swarm node is killed through the swarm, seconds after the order: its gone says when.
    victim.onGone((killed = {}) => {
      Object.assign(state.fault, killed, { gone_ms: Date.now() });
    });
    Promise.resolve(victim.kill()).catch((err) => {
      state.fault.kill_error = err.message;
    });
  };
  timer = setTimeout(fire, Math.max(0, window.start + Number(m[1]) * 1000 - Date.now()));
  return () => clearTimeout(timer);
}

/**
 * The run's warning when the scenario's FAULT was never carried out (no window that counted reached its time), when
 * its kill failed, or when the replica was not seen gone by the window's end (through a swarm a kill lands seconds
 * after its order).
 */
function faultNotDone(s, state) {
  if (!/^kill-replica@/.test(s.FAULT || '')) return [];
  const f = state.fault;
  if (f && f.kill_error) return [`FAULT=${s.FAULT}: the kill of ${f.replica} failed: ${f.kill_error}`];
  if (f && state.unseen)
    return [
      `FAULT=${s.FAULT}: ${f.replica} was not seen gone by its window's end (the kill sent at ${new Date(f.at_ms).toISOString()})`,
    ];
  if (f) return [];
  const held = state.heldBack
    ? `: held back in ${state.heldBack} window(s) whose load began late, and no later window reached its time`
    : ': no window reached its time';
  return [`FAULT=${s.FAULT} was not carried out, no replica was killed${held}`];
}

/** How often the balancer's view of each replica (in rotation or not) is read during a window. */
const HEALTH_POLL_MS = 1000;

/**
 * Reads the balancer's counters every everyMs from now until stop(): each time a replica goes out of rotation (its
 * health check failed, or live traffic failed to connect to it) or back, an event {replica, state, seen_at_ms}, seen
 * at most everyMs after HAProxy changed it.
 */
function watchRotation(lb, names, everyMs = HEALTH_POLL_MS) {
  const last = {};
  const events = [];
  let stopped = false;
  let timer = null;
  const look = async () => {
    const counts = await lb.counts().catch(() => null);
    if (!counts) return;
    const now = Date.now();
    for (const n of names) {
      const up = Boolean(counts[n] && counts[n].up);
      if (n in last && last[n] !== up) events.push({ replica: n, state: up ? 'up' : 'down', seen_at_ms: now });
      last[n] = up;
    }
  };
  const loop = async () => {
    await look();
    if (!stopped) timer = setTimeout(loop, everyMs);
  };
  const started = loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await started;
      await look();
      return events;
    },
  };
}

/** What a drained replica's rotation event says: only LB_LAG_CHECK's agent drains one. */
const DRAINED = "drained by its agent (LB_LAG_CHECK: the replica's head lagged)";

/** Why HAProxy took each replica out of rotation, as its log says it (the last reason logged for each). */
function downReasons(logText) {
  const out = {};
  for (const m of logText.matchAll(/Server \S+?\/(\S+) (?:is DOWN(?:, reason: ([^,]+))?|enters (drain) state)/g))
    out[m[1]] = m[3] ? DRAINED : m[2] || null;
  return out;
}

/** Rotation events with the reason HAProxy logged for each replica it took out. */
function withReasons(events, logText) {
  const reasons = downReasons(logText);
  return events.map((e) => (e.state === 'down' ? { ...e, reason: reasons[e.replica] || null } : e));
}

/** The run's warnings for the replicas the balancer took out of rotation, and put back. */
function rotationProblems(events) {
  return events
    .filter((e) => e.state === 'down')
    .map((e) => {
      const back = events.find((x) => x.replica === e.replica && x.state === 'up' && x.seen_at_ms > e.seen_at_ms);
      return `HAProxy took ${e.replica} out of rotation (seen at ${new Date(e.seen_at_ms).toISOString()}${e.reason ? `; ${e.reason}` : ''})${back ? `, and back at ${new Date(back.seen_at_ms).toISOString()}` : ''}`;
    });
}

/**
 * A window edge of the fleet: each replica's CPU at the instant of the call, the balancer's counters as they come
 * back. A counter fetch slowed by a loaded machine must not move the CPU's edge (read after it, a replica's CPU over a
 * window came out 6% short of its cgroup's in a CI run).
 */
async function readEdge(lb, replicas) {
  const cpu = replicas.map((r) => (r.group ? r.group.cpu().total_s : null));
  return { counts: await lb.counts(), cpu };
}

/**
 * A replica on another swarm node has no cgroup here: its CPU comes afterwards from its cAdvisor through Prometheus,
 * between its first and last samples inside the window (r.cpuSpan), its memory at the last sample its CPU rose at and
 * its swap's peak (r.memoryIn); each one's {span, memory, swap}, or null for one read at the edges.
 */
async function remoteCpu(replicas, window, a, b) {
  const spans = [];
  for (const [i, r] of replicas.entries()) {
    if (r.group || !r.cpuSpan) {
      spans.push(null);
      continue;
    }
    const x = await r.cpuSpan(window.start, window.end);
    [a.cpu[i], b.cpu[i]] = [x.a.total_s, x.b.total_s];
    // its memory while it ran: a replica killed in the window is still sampled a while after, its memory freed
    const mem = r.memoryIn ? await r.memoryIn(x.a.at_ms, x.lastRiseMs || x.b.at_ms) : { memory: null, swap: null };
    spans.push({ span: [x.a.at_ms, x.b.at_ms], memory: mem.memory, swap: mem.swap });
  }
  return spans;
}

/**
 * HAProxy on another swarm node has no cgroup here: its CPU between its own first and last cAdvisor samples inside
 * the window, and the requests it logged between those instants (every server's, and those it answered itself).
 */
async function balancerSpan(lb, window, logText) {
  const x = await lb.cpuSpan(window.start, window.end);
  const logged = Object.values(accessLog(logText, x.a.at_ms, x.b.at_ms));
  return {
    span: [x.a.at_ms, x.b.at_ms],
    cpu_s: Number((x.b.total_s - x.a.total_s).toFixed(6)),
    requests: logged.reduce((t, r) => t + r.ta_ms.length, 0),
  };
}

/** The run's warning for a replica lost: when, and its exit (on another swarm node: its task's state when no code). */
const lostProblem = (x) =>
  `replica ${x.replica} exited at ${new Date(x.at_ms).toISOString()} (${x.signal || (x.code === null && x.task ? `its task ${x.task}` : `status ${x.code}`)})`;

/** LB_LAG_CHECK's part of stack.fleet (no-ops without it). */
const lagCheckHooks = (lagCheck) => ({
  /** The agents answer from the head watch from now on (the network runs). */
  armLagCheck: (heads) => lagCheck && lagCheck.arm(heads),
  /** The head watch stops: the agents keep their last answers. */
  freezeLagCheck: () => lagCheck && lagCheck.freeze(),
  /** The run's record of the agents, every change of an answer included (null without). */
  lagCheckRecord: () => (lagCheck ? lagCheck.record() : null),
});

/**
 * stack.fleet: the window hook (per-replica figures), the warnings, the run's record. lagCheck: LB_LAG_CHECK's agents
 * (lag-agent.js), or null.
 */
function fleetHooks(
  s,
  { replicas, lost, lb, lbGroup, balancerCpus, healthCheck, replicaSource = undefined, lagCheck = null },
) {
  const faultState = { done: false, fault: null, reported: false };
  const rotation = []; // every window's rotation events, for the run's warnings
  return {
    replicas,
    lost, // {replica, at_ms, ...} for each replica seen gone
    windowHook(window) {
      const first = readEdge(lb, replicas);
      const lb0 = lbGroup ? lbGroup.cpu().total_s : null;
      faultState.heldInWindow = false;
      const cancelFault = scheduleFault(s, replicas, window, faultState);
      const watch = watchRotation(
        lb,
        replicas.map((r) => r.name),
      );
      return {
        cancel: () => {
          cancelFault();
          watch.stop();
        },
        async stop() {
          const second = readEdge(lb, replicas); // the end edge: read before anything else is awaited
          const [a, b] = [await first, await second];
          const spans = await remoteCpu(replicas, window, a, b);
          const logText = await lb.logText();
          const lbCpu = lbGroup ? Number((lbGroup.cpu().total_s - lb0).toFixed(6)) : null;
          const lbSpan = lbGroup ? null : await balancerSpan(lb, window, logText);
          const record = fleetRecord({ replicas, a, b, lbCpu, lbSpan, logText, window, lost, replicaSource, spans });
          record.rotation = withReasons(await watch.stop(), logText);
          if (lagCheck) record.lag_check = lagCheck.windowRecord(window.start, window.end);
          rotation.push(...record.rotation);
          // for series.json, not run.json: each replica's requests per second
          const series = perSecond(
            logText,
            window,
            replicas.map((r) => r.name),
          );
          Object.defineProperty(record, 'series', { value: series, enumerable: false });
          // not in run.json: the window measures again when the load, late by the record then, was on time after all
          Object.defineProperty(record, 'faultHeldBack', { value: faultState.heldInWindow, enumerable: false });
          if (faultState.fault && !faultState.reported) {
            faultState.reported = true;
            record.fault = faultRecord(faultState.fault, logText, window);
            faultState.unseen = !faultState.fault.gone_ms;
          }
          return record;
        },
      };
    },
    problems: () => [...lost.map(lostProblem), ...rotationProblems(rotation), ...faultNotDone(s, faultState)],
    ...lagCheckHooks(lagCheck),
    record: () => runRecord(s, { balancerCpus, healthCheck, lagCheck }),
  };
}

/** run.json's fleet: the replicas, their balancer and its checks. */
const runRecord = (s, { balancerCpus, healthCheck, lagCheck }) => ({
  replicas: s.REPLICAS,
  algorithm: s.LB_ALGORITHM,
  balancer: 'HAProxy',
  balancer_cpus: balancerCpus, // null: on another swarm node (stack.swarm.balancer_placement)
  config: 'haproxy.cfg',
  health_check: `HTTP POST ${healthCheck}, expecting a "result"`,
  per_replica: "CORES and the node's flags apply to each replica; the replicas share the node's cores",
  ...(lagCheck ? { lag_check: lagCheck.describe() } : {}),
});

module.exports = {
  fleetHooks,
  balancerSpan,
  scheduleFault,
  faultNotDone,
  watchRotation,
  downReasons,
  rotationProblems,
};
