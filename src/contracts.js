// @ts-check
'use strict';
// The contracts between chainperf's parts, named. Nothing here runs: these
// JSDoc typedefs are what `npm run typecheck` (tsc, checkJs on the files that
// say `// @ts-check`: the client modules, this file) holds the code to.
// A client module is `@type {import('../contracts').Client}`.

/**
 * A resolved scenario: every key of src/scenario/keys.js with its typed value
 * (docs/scenario-keys.md). The keys the client modules read are named; the
 * rest are reached by name.
 * @typedef {{
 *   NAME: string, CHAIN: string, CLIENT: string, CLIENT_VERSION: string|null, CLIENT_BIN: string,
 *   RUNTIME: string, DB_CACHE_MB: number, PEERS: number, CORES: number,
 *   DB_ENGINE: string, DB_SIZE_LIMIT_GB: number|null, TRIE_CACHE_MB: number, CHAIN_SPEC: string,
 *   DEV_BLOCK_TIME_S: number, CONCURRENCY: number, RATE: number|null,
 *   [key: string]: any,
 * }} Scenario
 */

/**
 * Where a node runs: its data directory and ports (host: free ports; compose:
 * the container's), the chain spec a chain prepared, and whether RPC and
 * metrics listen on every interface (in a container) or on 127.0.0.1.
 * @typedef {{
 *   dataDir?: string,
 *   ports: {rpc: number, ws?: number, metrics?: number, p2p?: number, auth?: number, [name: string]: number|undefined},
 *   chainSpec?: string,
 *   external?: boolean,
 *   network?: {nodeKeyHex: string, jwtFile: string, syncMode?: 'full'|'snap',
 *     chainNeeds?: {gas_limit: number, txpool_global_slots: number, txpool_account_slots: number,
 *     rpc_tx_fee_cap: number}|null},
 * }} Where
 */

/**
 * A client's part in a local network (NETWORK_NODES, src/network/): how its
 * nodes share a genesis, find each other and are told of new blocks. `network`
 * in a Where turns the node under test from a lone dev chain into a member.
 * @typedef {{
 *   protocol: string,
 *   devKey: string,
 *   writeGenesis: (bin: string, file: string, o?: {gasLimit?: number|null}) => void,
 *   init: (bin: string, dataDir: string, genesisFile: string, dbEngine: string) => void,
 *   initArgs: (dataDir: string, genesisFile: string, dbEngine: string) => string[],
 *   enode: (nodeKeyHex: string, port: number, host?: string) => string,
 *   peerCommand: (s: Scenario, where: Where) => Command,
 *   inboundPeers?: (maxPeers: number) => number,
 *   counters: {p2pIn: string, p2pOut: string, gossipIn: string[], gossipKnown: string[]},
 *   importLog?: {parse: (text: string) => [number, number][], describe: string},
 *   profileFrames?: RegExp,
 * }} NetworkPeer
 */

/**
 * A client's command line for a scenario, and where it then answers.
 * @typedef {{
 *   args: string[],
 *   rpcUrl: string,
 *   wsUrl?: string,
 *   metrics: {target: string, path: string}|null,
 * }} Command
 */

/**
 * What the compose runtime needs from a client: its compose file (the `node`
 * service, whose command is `${NODE_COMMAND}`), the container's ports and the
 * container's argument list.
 * @typedef {{
 *   file: string,
 *   rpc: {scheme: 'http'|'ws', port: number},
 *   metrics: {port: number, path: string},
 *   args: (s: Scenario, prepared?: {chainSpec?: string, network?: {nodeKeyHex: string, jwtFile: string}}) => string[],
 *   env?: (s: Scenario, prepared?: object) => Object<string, string>,
 *   ports?: {rpc: number, ws: number, metrics: number, p2p: number, auth: number},
 * }} ComposeService
 */

/**
 * The node's image for the compose runtime: the pinned upstream reference,
 * and how to build one locally where no registry answers (or null).
 * @typedef {{
 *   upstream: string,
 *   local: string|null,
 *   dir?: string,
 *   files?: (log: (line: string) => void) => Promise<Object<string, string>>,
 * }} ImageSpec
 */

/**
 * A client: one module in src/clients/ ("Adding a client" in docs/clients.md).
 * @typedef {{
 *   name: string,
 *   summary: string,
 *   chains: string[],
 *   kind: 'node'|'development node'|'development server',
 *   warning?: string,
 *   defaults: {CLIENT_VERSION: string|null, [key: string]: any},
 *   dbEngines?: string[],
 *   stateRuntimes?: string[],
 *   dbSizeLimitFlag?: string,
 *   unsupported?: Object<string, string>,
 *   metrics: {cpu: string|null, requests: string|null, requestsByLabel?: string, gcCycles?: string, failures?: string,
 * latency?: {summary: string, unit: 'ns'|'us'|'ms'|'s'}}|null,
 *   newBlockMethod?: string,
 *   profiler?: 'pprof'|'perf',
 *   profileEnv?: Object<string, string>,
 *   devKey?: string,
 *   network?: NetworkPeer,
 *   builtinSpecs?: string[],
 *   needsClientBin?: boolean,
 *   binaryPath?: (s: Scenario) => string,
 *   ensureBinary: (s: Scenario, log: (line: string) => void) => Promise<string>,
 *   binaryVersion: (bin: string) => string,
 *   command: (s: Scenario, where: Where) => Command,
 *   image?: (s: Scenario) => ImageSpec,
 *   compose?: ComposeService,
 * }} Client
 */

/**
 * A chain family: one module in src/chains/. The optional hooks after
 * clientVersion are how generic code reaches a family's specifics without
 * naming the family: keys only it reads (refused elsewhere) and its checks,
 * its own records of a window (run.json fields, and its transactions as
 * figures.writes), its warnings and summary.md lines, the generator's label.
 * @typedef {{
 *   name: string,
 *   family?: string,
 *   defaults: {CLIENT: string, WORKLOAD: string, [key: string]: any},
 *   methods: string[],
 *   methodClass: (method: string) => 'read'|'write'|'debug'|'admin'|'unknown',
 *   processor: string,
 *   waitForSync: (rpcUrl: string, opts: object) => Promise<{seconds: number, head: number, [k: string]: any}>,
 *   createHistory: (rpcUrl: string, opts: object) => Promise<object>,
 *   harvest: (rpcUrl: string, opts: object) => Promise<object>,
 *   missingForMix: (pool: object, methods: string[]) => string[],
 *   prepareWrites?: (url: string, o: {count: number, seed: number, devKey?: string, fundUrl?: string,
 *   signal?: AbortSignal, log?: Function}) => Promise<object>,
 *   describePool?: (pool: object) => string,
 *   prepare?: (s: Scenario, ctx: {workDir: string, log: (line: string) => void, client: Client, state?: object}) =>
 * Promise<{chainSpec?: string, source?: string}>,
 *   ensureState?: (s: Scenario, ctx: {bin: string, version: string, log: (line: string) => void, signal?: AbortSignal})
 *     => Promise<{dir: string, dataDir: string, manifest: object, chainSpec?: string}>,
 *   statePool?: (st: object, s: Scenario, rpcUrl: string, ctx: {signal?: AbortSignal, log: (line: string) => void}) =>
 * Promise<object>,
 *   describeStatePool?: (pool: object) => string,
 *   install?: (s: Scenario, ctx: {log: (line: string) => void, client: Client}) => Promise<string>,
 *   clientVersion?: (rpcUrl: string, opts: {signal?: AbortSignal, rpc?: Function}) => Promise<string>,
 *   prepareDryRun?: (s: Scenario, ctx: {client: Client, dir: string}) => {chainSpec?: string},
 *   chainSpecFile?: (prepared: {chainSpec?: string}) => string|null,
 *   familyLabel?: string,
 *   ownKeys?: string[],
 *   checkScenario?: (v: Scenario, ctx: {client: Client, at: (key: string) => string}, errors: string[]) => void,
 *   windowRecords?: (snapshots: object[], seconds: number) => {fields: Object<string, object>, writes:
 * object|null}|null,
 *   runWarnings?: (run: object) => string[],
 *   reportLines?: (run: object) => string[],
 *   generatorLabel?: (s: Scenario) => string,
 * }} Chain
 */

/**
 * Cumulative CPU seconds of the node, read at a window's edges.
 * @typedef {{user_s?: number, system_s?: number, total_s: number, at_ms: number}} CpuReading
 */

/**
 * Where node CPU time comes from (src/measure/cpu.js, cadvisor.js; the compose
 * runtime's Docker stats cross-check), in one of three ways the window code
 * knows: read at any instant (`read`: cgroup, /proc/PID/stat, Docker stats),
 * a counter the node refreshes every few seconds (`calibrate`, `align`,
 * `readEdge`: a metrics endpoint), or timestamped samples (`sampled`,
 * `edgesInside`, `samplesBetween`: cAdvisor through Prometheus).
 * @typedef {{
 *   kind: 'cgroup'|'pid'|'metrics'|'cadvisor'|'docker',
 *   describe: string,
 *   split: boolean,
 *   read?: (signal?: AbortSignal) => Promise<CpuReading>,
 *   calibrate?: (signal?: AbortSignal) => Promise<number>,
 *   periodMs?: number|null,
 *   align?: (tMs: number) => number,
 *   readEdge?: (edgeMs: number, signal?: AbortSignal) => Promise<CpuReading>,
 *   sampled?: boolean,
 *   edgesInside?: (startMs: number, endMs: number, signal?: AbortSignal) => Promise<{a: CpuReading, b: CpuReading,
 * samples: CpuReading[]}>,
 *   samplesBetween?: (fromMs: number, toMs: number, signal?: AbortSignal) => Promise<CpuReading[]>,
 *   resources?: (aMs: number, bMs: number, signal?: AbortSignal) => Promise<object>,
 * }} CpuSource
 */

/**
 * What a runtime (host, compose, attach) started or found: the node's
 * endpoints, its CPU sources, what to tear down, and what run.json records.
 * @typedef {{
 *   runtime: string,
 *   rpcUrl: string,
 *   wsUrl?: string,
 *   cpu: CpuSource,
 *   cpuCheck?: CpuSource|null,
 *   freshChain?: boolean,
 *   generatorCpus?: string|null,
 *   generatorGroup?: object,
 *   node: {pid?: number|null, container?: string, container_id?: string, cpus?: string|null, elsewhere?: boolean,
 * rpc_url?: string, ws_url?:
 * string|null, metrics_url?: string|null, replicas?: object[]},
 *   client: {name: string, version: string|null, kind?: string, binary?: string, binary_sha256?: string, image?:
 * string, image_id?: string},
 *   prometheus?: object,
 *   requestsMetric?: Client['metrics'],
 *   memoryBytes?: (() => number)|null,
 *   nodeLog?: string,
 *   compose?: object,
 *   images?: object,
 *   grafanaUrl?: string,
 *   cleanups?: Array<() => any>,
 *   onNodeExit: (fn: (info: {code: number|null, signal: string|null, restarted?: boolean, status?: string}) => void) =>
 * void,
 *   lookForNodeExit?: () => Promise<void>,
 *   teardown: () => Promise<void>,
 * }} Stack
 */

/**
 * A load generator (GENERATOR, src/workload/generators.js): the artillery
 * script of one pass, with the target artillery requires (a placeholder: the
 * node's URL is in the generator's spec file), the chain's processor, the
 * pass's length and whether it replays a capture; and how reports name it.
 * @typedef {{
 *   name: string,
 *   label: (s: Scenario) => string,
 *   script: (s: Scenario, o: {target: string, processor?: string, totalS: number, replay: boolean}) => object,
 * }} Generator
 */

/**
 * What a runtime receives when it starts the node: the run's id and private
 * work folder, its log, its abort signal, onStack(stack) as soon as there is
 * something to tear down, and the rpc function for its own calls to the node
 * (rpcCall, or one that retries transient failures: util/retry.js).
 * @typedef {{
 *   runId: string,
 *   workDir: string,
 *   log: (line: string) => void,
 *   signal?: AbortSignal,
 *   onStack?: (stack: Stack) => void,
 *   rpc?: (url: string, method: string, params?: any[], o?: object) => Promise<any>,
 * }} RuntimeContext
 */

/**
 * A runtime: where the node under test runs (src/runtime/index.js). start()
 * gives the Stack; ownKeys are scenario keys only it reads (refused with any
 * other runtime); checkScenario adds its problems to errors; nodeRecord is
 * what run.json's node says of the stack at its start; install builds or
 * installs what a first run would (./run.sh install) and says what.
 * @typedef {{
 *   name: string,
 *   summary: string,
 *   ownKeys: string[],
 *   checkScenario?: (v: Scenario, ctx: {sources: object, given: object, client: Client, at: (key: string) => string},
 *     errors: string[]) => void,
 *   start: (s: Scenario, ctx: RuntimeContext) => Promise<Stack>,
 *   nodeRecord: (stack: Stack) => object,
 *   install: (s: Scenario, ctx: {log: (line: string) => void, client: Client, chain: Chain}) => Promise<string[]>,
 * }} Runtime
 */

module.exports = {};
