'use strict';
// Companions chainperf chooses: where a key's value needs another key that the
// scenario leaves unset (neither the file nor the environment gives it), the
// smallest value that serves is set, with the source "derived (<cause> needs
// <what>)", and the run says so in its first lines (./run.sh config too).
// A companion the scenario gives is never changed: where it contradicts, the
// checks refuse, as before. Rows apply in order, each seeing what the rows
// before it chose; a companion an earlier row chose, or found serving, is not
// chosen again for another row (two rows that want different values: the
// checks refuse, naming the problem).

const { holdsSubscriptions } = require('./workload-checks');
const { KEYS } = require('./keys');
const { parseFault } = require('../util/faults');

/** FAULT's kind (kill-replica, pause-node), or null: none, or one chainperf does not know. */
const faultKind = (v) => {
  const f = parseFault(v.FAULT);
  return f && 'kind' in f ? f.kind : null;
};

/** SWARM_GENERATOR_NODES's names. */
const generatorNodes = (v) =>
  String(v.SWARM_GENERATOR_NODES || '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The smallest network that serves: one node beside the node under test (or its replicas), which builds the blocks,
 * takes the network's transactions and is every measured node's peer: enough to share one chain, to sync from and to
 * fetch blocks from. Never with RUNTIME=attach, which starts nothing (its own refusal says so).
 */
const network = (doc, cause, when) => ({
  doc,
  cause,
  when: (v, given) => v.RUNTIME !== 'attach' && when(v, given),
  key: 'NETWORK_NODES',
  value: 1,
  serves: (v) => v.NETWORK_NODES > 0,
  needs: 'a network',
});

/**
 * The table. Each row: when(values, given) the cause holds, cause(values) names it ("REPLICAS=3"), key is the
 * companion, value what is set (or a function of the values, valueDoc then says what), serves(values) whether the
 * companion's value already serves, needs what the cause needs, in words; doc: the cause for docs/scenario-keys.md
 * (npm run docs). A new row is one entry here, and a unit test of it.
 */
const COMPANIONS = [
  {
    // kill-replica needs a replica left to serve; BALANCER=none given, or attach, means no fleet (their refusals stand)
    doc: '`FAULT=kill-replica@<seconds>s` (not with `BALANCER=none`)',
    cause: (v) => `FAULT=${v.FAULT}`,
    when: (v) => faultKind(v) === 'kill-replica' && v.BALANCER !== 'none' && v.RUNTIME !== 'attach',
    key: 'REPLICAS',
    value: 2,
    serves: (v) => v.REPLICAS > 1,
    needs: 'another replica to serve on',
  },
  {
    // HAProxy on a swarm node of its own: one replica behind it measures what the balancer costs there
    doc: '`SWARM_BALANCER_NODE` with `RUNTIME=swarm` and one replica',
    cause: (v) => `SWARM_BALANCER_NODE=${v.SWARM_BALANCER_NODE}`,
    when: (v) => Boolean(v.SWARM_BALANCER_NODE) && v.RUNTIME === 'swarm',
    key: 'BALANCER',
    value: 'haproxy',
    serves: (v) => v.BALANCER === 'haproxy' || (v.BALANCER === null && v.REPLICAS > 1), // null: haproxy by default
    needs: 'a balancer to place',
  },
  network(
    '`REPLICAS` above 1',
    (v) => `REPLICAS=${v.REPLICAS}`,
    (v) => v.REPLICAS > 1,
  ),
  network(
    '`BALANCER=haproxy`',
    () => 'BALANCER=haproxy',
    (v) => v.BALANCER === 'haproxy',
  ),
  network(
    '`SYNC=network`',
    () => 'SYNC=network',
    (v) => v.SYNC === 'network',
  ),
  network(
    '`BLOCK_DELIVERY` set',
    (v) => `BLOCK_DELIVERY=${v.BLOCK_DELIVERY}`,
    (v, given) => Boolean(given.BLOCK_DELIVERY),
  ),
  network(
    '`CHAIN_LOAD` other than `quiet`',
    (v) => `CHAIN_LOAD=${v.CHAIN_LOAD}`,
    (v) => Boolean(v.CHAIN_LOAD) && v.CHAIN_LOAD !== 'quiet',
  ),
  network(
    '`FAULT=pause-node@<at>s:<for>s`',
    (v) => `FAULT=${v.FAULT}`,
    (v) => faultKind(v) === 'pause-node',
  ),
  network(
    '`NETWORK_TPS` above 0',
    (v) => `NETWORK_TPS=${v.NETWORK_TPS}`,
    (v) => v.NETWORK_TPS > 0,
  ),
  {
    // HTTP is the default: this row keeps it for a fleet, so that a later row (a subscription workload) leaves it
    doc: '`REPLICAS` above 1 or `BALANCER=haproxy` (HTTP is the default: a subscription workload does not change it)',
    cause: (v) => (v.REPLICAS > 1 ? `REPLICAS=${v.REPLICAS}` : 'BALANCER=haproxy'),
    when: (v) => v.RUNTIME !== 'attach' && (v.REPLICAS > 1 || v.BALANCER === 'haproxy'),
    key: 'TRANSPORT',
    value: 'http',
    serves: (v) => v.TRANSPORT === 'http',
    needs: 'HTTP, which the balancer speaks',
  },
  {
    // with RUNTIME=attach the transport is RPC_URL's
    doc: 'a workload that subscribes (`eth-subscriptions`), not with `RUNTIME=attach` (`RPC_URL` says)',
    cause: (v) => `WORKLOAD=${v.WORKLOAD}`,
    when: (v) => v.RUNTIME !== 'attach' && holdsSubscriptions(v.WORKLOAD),
    key: 'TRANSPORT',
    value: 'ws',
    serves: (v) => v.TRANSPORT === 'ws',
    needs: 'WebSocket for its subscriptions',
  },
  {
    // the lean engine sends Ethereum JSON-RPC only, for now
    doc: '`LEAN_SENDER=native` on an Ethereum chain',
    cause: () => 'LEAN_SENDER=native',
    when: (v) => v.LEAN_SENDER === 'native' && v.CHAIN === 'ethereum',
    key: 'GENERATOR',
    value: 'lean',
    serves: (v) => v.GENERATOR === 'lean',
    needs: 'the lean engine',
  },
  {
    // a replay keeps one generator (its refusal stands)
    doc: '`SWARM_GENERATOR_NODES` naming more nodes than `GENERATORS` (`RUNTIME=swarm`, not a replay)',
    valueDoc: 'one per name',
    cause: (v) => `SWARM_GENERATOR_NODES=${v.SWARM_GENERATOR_NODES}`,
    when: (v) =>
      v.RUNTIME === 'swarm' &&
      !String(v.WORKLOAD).startsWith('replay:') &&
      generatorNodes(v).length <= KEYS.GENERATORS.max,
    key: 'GENERATORS',
    value: (v) => generatorNodes(v).length,
    serves: (v) => v.GENERATORS >= generatorNodes(v).length,
    needs: 'a generator on each node',
  },
];

/** A derived companion's source, as scenario_sources and ./run.sh config show it. */
const derivedSource = (cause, needs) => `derived (${cause} needs ${needs})`;

/** Whether a key's value was derived (its source says so). */
const isDerived = (sources, key) => String(sources[key] || '').startsWith('derived (');

/**
 * Sets the companions the scenario leaves unset, row by row; values and sources are changed in place.
 * @param {object} values resolved so far (RUNTIME decided)
 * @param {object} sources where each value came from
 * @param {object} given the keys the file or the environment set
 * @param {object[]} [rows] the table (COMPANIONS)
 * @returns {{key: string, value: *, cause: string, needs: string}[]} what was derived, in order
 */
function deriveCompanions(values, sources, given, rows = COMPANIONS) {
  const derived = [];
  const taken = new Set(); // companions a row chose or found serving
  for (const row of rows) {
    if (given[row.key] || !row.when(values, given)) continue;
    if (row.serves(values)) {
      taken.add(row.key);
      continue;
    }
    if (taken.has(row.key)) continue; // another row wants another value: the checks refuse
    const value = typeof row.value === 'function' ? row.value(values) : row.value;
    const cause = row.cause(values);
    values[row.key] = value;
    sources[row.key] = derivedSource(cause, row.needs);
    taken.add(row.key);
    derived.push({ key: row.key, value, cause, needs: row.needs });
  }
  return derived;
}

/** The line a run and ./run.sh config print for a derived companion. */
const derivedLine = (d) => `${d.key}=${d.value}: derived, because ${d.cause} needs ${d.needs}`;

module.exports = { COMPANIONS, deriveCompanions, derivedLine, derivedSource, isDerived };
