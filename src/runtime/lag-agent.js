// @ts-check
'use strict';
// LB_LAG_CHECK: HAProxy cannot compare a replica's head with the network's by
// itself, so each replica's server line gets an agent-check (HAProxy 2.6) whose
// agent is a small TCP server in chainperf's own process, on 127.0.0.1, one per
// replica. HAProxy connects to it every second and reads one line: `drain`
// takes the replica out of the balancer's rotation (no new request goes to it;
// those in flight end normally), `ready` puts it back. The agent answers from
// the head watch (network/head-watch.js, 4 looks a second at each replica's
// eth_blockNumber): drain while the replica's head lag at its latest look is
// over MAX_HEAD_LAG_S, or while no look at its head has been answered for
// 2 s; ready otherwise. A replica is drained only while another replica is
// within the bound: when every replica lags, none is drained (the fleet keeps
// serving, stale, rather than answer every request with an error). Each change
// of an agent's answer is kept, with its instant and why.

const net = require('node:net');

/** A replica none of whose looks at its head was answered for this long is treated as lagging. */
const STALE_MS = 2000;
/** How often HAProxy asks each agent (agent-inter). */
const AGENT_INTER_MS = 1000;
/** Answers kept for the windows' counts (a day of one a second for 2 replicas); past it, the older half goes. */
const ANSWERS_MAX = 200000;

const r1 = (x) => Number(x.toFixed(1));

/**
 * One replica's state at nowMs: lagging or not, and why in words.
 * @param {{look?: {at_ms: number}|null, lag: {blocks: number, seconds: number}|null, armedMs: number,
 *   nowMs: number, boundS: number, staleMs?: number}} o look: its latest answered look; lag: its lag at that look
 *   (null: not known); armedMs: when the agents began answering from the head watch
 * @returns {{lagging: boolean, why: string, lag_s: number|null, lag_blocks: number|null}}
 */
function replicaState({ look, lag, armedMs, nowMs, boundS, staleMs = STALE_MS }) {
  const lastMs = look ? Math.max(look.at_ms, armedMs) : armedMs;
  const figures = { lag_s: lag ? r1(lag.seconds) : null, lag_blocks: lag ? lag.blocks : null };
  if (nowMs - lastMs > staleMs)
    return { lagging: true, why: `no look at its head answered for ${r1((nowMs - lastMs) / 1000)} s`, ...figures };
  if (lag && lag.seconds > boundS)
    return {
      lagging: true,
      why: `head lag ${r1(lag.seconds)} s (${lag.blocks} blocks) over MAX_HEAD_LAG_S=${boundS}`,
      ...figures,
    };
  return {
    lagging: false,
    why: lag ? `head lag ${r1(lag.seconds)} s, within MAX_HEAD_LAG_S=${boundS}` : 'its lag not known yet',
    ...figures,
  };
}

/**
 * The agents' answers from every replica's state: drain a replica that lags while another does not; ready
 * otherwise (every replica lagging: none is drained).
 * @param {Record<string, {lagging: boolean, why: string}>} states
 * @returns {Record<string, {answer: 'drain'|'ready', reason: string}>}
 */
function answersFor(states) {
  const someoneKeepsUp = Object.values(states).some((x) => !x.lagging);
  /** @type {Record<string, {answer: 'drain'|'ready', reason: string}>} */
  const out = {};
  for (const [name, x] of Object.entries(states)) {
    if (x.lagging && someoneKeepsUp) out[name] = { answer: 'drain', reason: x.why };
    else if (x.lagging) out[name] = { answer: 'ready', reason: `${x.why}, but every replica lags: none is drained` };
    else out[name] = { answer: 'ready', reason: x.why };
  }
  return out;
}

/** A TCP server on 127.0.0.1 (a port the kernel picks) that writes answer() and a newline to each connection. */
function listen(answer) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      sock.on('error', () => {}); // HAProxy resets the connection once it has read the line
      sock.end(`${answer()}\n`);
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/**
 * Seconds of [fromMs, toMs) during which a replica's agent answered drain, from its changes (in time order).
 * @param {{at_ms: number, answer: string}[]} changes
 */
function drainedSeconds(changes, fromMs, toMs) {
  let drainedSince = null;
  let total = 0;
  for (const c of changes) {
    if (c.at_ms >= toMs) break;
    if (c.answer === 'drain' && drainedSince === null) drainedSince = c.at_ms;
    if (c.answer === 'ready' && drainedSince !== null) {
      total += Math.max(0, Math.min(c.at_ms, toMs) - Math.max(drainedSince, fromMs));
      drainedSince = null;
    }
  }
  if (drainedSince !== null) total += Math.max(0, toMs - Math.max(drainedSince, fromMs));
  return Number((total / 1000).toFixed(3));
}

/**
 * The agents' book: answer(name) is what the replica's agent tells HAProxy now, from every replica's state; the
 * changes and the answers are kept. Until arm(heads) every answer is ready (the replicas start before the network, and
 * HAProxy must first see them all in rotation); from then on, from the head watch (its lastLook and lagNow).
 * @param {{names: string[], boundS: number, staleMs?: number, log?: (m: string) => void, now?: () => number}} o
 */
function lagAnswerer({ names, boundS, staleMs = STALE_MS, log = () => {}, now = Date.now }) {
  const state = { heads: /** @type {any} */ (null), armedMs: 0, frozen: false };
  const last = Object.fromEntries(names.map((n) => [n, 'ready']));
  /** @type {{replica: string, answer: string, at_ms: number, reason: string, lag_s: number|null,
   *   lag_blocks: number|null}[]} */
  const changes = [];
  /** @type {{replica: string, at_ms: number, answer: string}[]} */
  const asked = [];
  const statesAt = (t) =>
    Object.fromEntries(
      names.map((n) => [
        n,
        replicaState({
          look: state.heads.lastLook(n),
          lag: state.heads.lagNow(n),
          armedMs: state.armedMs,
          nowMs: t,
          boundS,
          staleMs,
        }),
      ]),
    );
  return {
    changes,
    asked,
    arm(heads) {
      state.heads = heads;
      state.armedMs = now();
    },
    /** The head watch stops (the run's teardown): each agent keeps its last answer. */
    freeze() {
      state.frozen = true;
    },
    answer(name) {
      if (state.frozen) return last[name];
      const t = now();
      const states = state.heads ? statesAt(t) : null;
      const a = states ? answersFor(states)[name] : { answer: 'ready', reason: 'not yet watched' };
      asked.push({ replica: name, at_ms: t, answer: a.answer });
      if (asked.length > ANSWERS_MAX) asked.splice(0, ANSWERS_MAX / 2);
      if (a.answer !== last[name]) {
        last[name] = a.answer;
        const figures = states ? { lag_s: states[name].lag_s, lag_blocks: states[name].lag_blocks } : {};
        changes.push({
          replica: name,
          answer: a.answer,
          at_ms: t,
          reason: a.reason,
          lag_s: null,
          lag_blocks: null,
          ...figures,
        });
        log(`lag check: ${name}'s agent answers ${a.answer} (${a.reason})`);
      }
      return a.answer;
    },
  };
}

/** A window's record from the book: the changes inside it, and each replica's answers and seconds drained in it. */
function windowRecordOf(book, names, boundS, fromMs, toMs) {
  const inside = (x) => x.at_ms >= fromMs && x.at_ms < toMs;
  return {
    bound_s: boundS,
    changes: book.changes.filter(inside),
    replicas: names.map((n) => {
      const mine = book.asked.filter((x) => x.replica === n && inside(x));
      return {
        replica: n,
        answers: mine.length,
        drain_answers: mine.filter((x) => x.answer === 'drain').length,
        drained_s: drainedSeconds(
          book.changes.filter((c) => c.replica === n),
          fromMs,
          toMs,
        ),
      };
    }),
  };
}

/**
 * Starts one agent per replica, each a TCP server on 127.0.0.1 answering from the book (lagAnswerer).
 * @param {{names: string[], boundS: number, staleMs?: number, log?: (m: string) => void, now?: () => number}} o
 */
async function startLagAgents(o) {
  const { names, boundS, staleMs = STALE_MS } = o;
  const book = lagAnswerer(o);
  const servers = [];
  for (const name of names) servers.push(await listen(() => book.answer(name)));
  const ports = Object.fromEntries(names.map((n, i) => [n, servers[i].address().port]));
  const describe = () => ({
    bound_s: boundS,
    agent: `a TCP agent per replica in chainperf's process (127.0.0.1), asked by HAProxy's agent-check every ${AGENT_INTER_MS / 1000} s`,
    answers: `drain (out of rotation, requests in flight end) while the replica's head lag at its latest look is over MAX_HEAD_LAG_S or no look at its head was answered for ${staleMs / 1000} s, and another replica is within the bound; ready otherwise`,
  });
  return {
    ports,
    interMs: AGENT_INTER_MS,
    /** From now on the agents answer from the head watch (its lastLook(name) and lagNow(name)). */
    arm: (heads) => book.arm(heads),
    freeze: () => book.freeze(),
    describe,
    /** The run's record: what the agents answer, and every change of an answer. */
    record: () => ({ ...describe(), changes: [...book.changes] }),
    windowRecord: (fromMs, toMs) => windowRecordOf(book, names, boundS, fromMs, toMs),
    async stop() {
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(() => resolve(null)))));
    },
  };
}

module.exports = { startLagAgents, lagAnswerer, replicaState, answersFor, drainedSeconds, STALE_MS, AGENT_INTER_MS };
