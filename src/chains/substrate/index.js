'use strict';
// Substrate chains (Polkadot, Kusama, any other chain spec), measured through
// @polkadot/api. One module, parametrised per chain: what differs is the
// default chain spec.

const path = require('node:path');
const { METHODS, missingForMix } = require('./ops');
const { waitForSync } = require('./sync');
const { ensureChainSpec, isPath } = require('./specs');
// @polkadot/api is loaded when a run needs it, not when a scenario is resolved.
const createHistory = (...a) => require('./history').createHistory(...a);
const harvest = (...a) => require('./harvest').harvest(...a);
const describePool = (...a) => require('./harvest').describePool(...a);
const fundedSpec = (...a) => require('./accounts').fundedSpec(...a);
const specWithoutBootNodes = (...a) => require('./accounts').specWithoutBootNodes(...a);
const ensureState = (...a) => require('./state').ensureState(...a);
const statePool = (...a) => require('./state').statePool(...a);
const describeStatePool = (...a) => require('./state').describeStatePool(...a);
const { rpcCall } = require('../../util/rpc');
const { httpUrl } = require('./url');
const { checkScenario } = require('./checks');
const { windowRecords, runWarnings, reportLines } = require('./window');
const { methodClass } = require('./method-classes');

/** Signer accounts funded for the transfer workload: one per virtual user (open loop: up to 256 at once). */
const signerCount = (s) => (s.RATE ? 256 : s.CONCURRENCY);

/** The log's words for the bootnodes left out of the run's copy of a spec. */
const bootNodesText = (n) => (n ? `; its ${n} bootnodes left out (the node dials no public node of the chain)` : '');

/**
 * Before the node starts (host runtime): the chain spec file it starts from,
 * a copy of CHAIN_SPEC whose genesis funds the dev accounts. A chain name the
 * client knows itself (polkadot, kusama for CLIENT=polkadot) is passed as is.
 * On a restored STATE profile, the spec the state was built from, without its
 * state accounts (state.js says why).
 * @returns {Promise<{chainSpec:string, source:string, funded:number|null}>}
 */
async function prepare(s, { workDir, log, client, state }) {
  if (client.builtinSpecs && client.builtinSpecs.includes(s.CHAIN_SPEC))
    return { chainSpec: s.CHAIN_SPEC, source: s.CHAIN_SPEC, funded: null };
  const src = await ensureChainSpec(s.CHAIN_SPEC, log);
  if (state && state.chainSpec) {
    // the cached spec is never written: the run's copy is the one without bootnodes
    const out = path.join(workDir, `${path.basename(state.chainSpec, '.json')}.chainperf.json`);
    const dropped = specWithoutBootNodes(state.chainSpec, out);
    log(
      `chain spec ${state.chainSpec}: the one STATE=${s.STATE} was built from, without its ${state.manifest.accounts} state accounts (the node reads its genesis from the restored database); ${state.manifest.dev_accounts} dev accounts funded${bootNodesText(dropped)}`,
    );
    return { chainSpec: out, source: src, funded: state.manifest.dev_accounts };
  }
  const out = path.join(workDir, `${path.basename(src, '.json')}.chainperf.json`);
  const f = await fundedSpec(src, out, { accounts: s.HISTORY_ACCOUNTS + signerCount(s) });
  log(
    `chain spec ${f.id} (${f.name}) from ${src}; ${f.funded} dev accounts funded in its genesis${bootNodesText(f.bootNodes)}`,
  );
  return { chainSpec: out, source: src, funded: f.funded };
}

/** `./run.sh config`: what prepare() would return, named without writing anything. */
function prepareDryRun(s, { client, dir }) {
  if (!s.CHAIN_SPEC) return {};
  if (client.builtinSpecs && client.builtinSpecs.includes(s.CHAIN_SPEC)) return { chainSpec: s.CHAIN_SPEC };
  if (s.STATE !== 'dev') return { chainSpec: `<STATE=${s.STATE} folder in ~/.cache/chainperf/state>/spec.json` };
  return { chainSpec: path.join(dir, `${path.basename(s.CHAIN_SPEC, '.json')}.chainperf.json`) };
}

/** `./run.sh install`: the chain spec file, downloaded when it is a shipped name. */
async function install(s, { log, client }) {
  if (client.builtinSpecs && client.builtinSpecs.includes(s.CHAIN_SPEC))
    return `${s.CHAIN_SPEC} (known to the ${s.CLIENT} binary)`;
  return ensureChainSpec(s.CHAIN_SPEC, log);
}

/** The client's name and version as the node reports them (attach). */
async function clientVersion(url, { signal, rpc = rpcCall } = {}) {
  const call = (m) => rpc(httpUrl(url), m, [], { signal, timeoutMs: 10000 });
  return `${await call('system_name')}/${await call('system_version')}`;
}

function substrateChain(name, defaultSpec) {
  return {
    name,
    family: 'substrate',
    defaults: { CLIENT: 'chopsticks', WORKLOAD: 'dot-default', CHAIN_SPEC: defaultSpec, HISTORY_TRANSFERS: 48 },
    methods: METHODS,
    methodClass,
    /** The artillery processor that sends this chain's requests. */
    processor: require.resolve('../../workload/processors/substrate'),
    prepare,
    prepareDryRun,
    install,
    clientVersion,
    waitForSync,
    createHistory,
    harvest,
    describePool,
    missingForMix,
    // STATE profiles (state.js): built from the chain spec with many accounts in its genesis.
    ensureState,
    statePool,
    describeStatePool,
    // Hooks the generic code calls without knowing the family:
    familyLabel: 'Substrate',
    /** Scenario keys only this family reads: refused for any other chain. */
    ownKeys: ['CHAIN_SPEC', 'TRIE_CACHE_MB'],
    checkScenario,
    windowRecords,
    runWarnings,
    reportLines,
    generatorLabel: () => 'artillery + @polkadot/api over WebSocket',
    /** The node starts from a chain spec file the compose runtime mounts (prepare's chainSpec, when it is a file). */
    chainSpecFile: (prepared) =>
      prepared && prepared.chainSpec && isPath(prepared.chainSpec) ? prepared.chainSpec : null,
  };
}

module.exports = {
  polkadot: substrateChain('polkadot', 'bridge-hub-polkadot'),
  kusama: substrateChain('kusama', 'bridge-hub-kusama'),
  substrate: substrateChain('substrate', 'bridge-hub-polkadot'),
  signerCount,
};
