'use strict';
// Every scenario key chainperf understands: its type, allowed values, default
// and meaning. This table is the single source for validation, for the
// resolved scenario in run.json and for docs/scenario-keys.md (a unit test
// checks that the doc names every key here).

const os = require('node:os');

// CHAIN, CLIENT and DB_ENGINE take what the registries hold (src/chains,
// src/clients). They are read when first asked for, not at load time: a client
// or chain module may itself require this table.
const registry = {
  chains: () => require('../chains'),
  clients: () => require('../clients'),
  runtimes: () => require('../runtime'),
  generators: () => require('../workload/generators'),
};

/** A key whose allowed values and meaning are read from the registries when first asked for. */
function fromRegistry(spec, values, doc) {
  let cache = null;
  const load = () => {
    if (!cache) cache = { values: values(), doc: doc() };
    return cache;
  };
  return Object.defineProperties(spec, {
    values: { get: () => load().values, enumerable: true },
    doc: { get: () => load().doc, enumerable: true },
  });
}

const clientList = () => Object.values(registry.clients());

function clientDoc() {
  const lines = clientList().map(
    (c) =>
      `${c.name} (${c.chains.join(', ')}${c.kind !== 'node' ? `; a ${c.kind}, labelled so` : ''}): ${c.summary || c.kind}`,
  );
  return `Node client, one of the modules in src/clients/. ${lines.join('. ')}. A client not given is the chain's default.`;
}

function versionDoc() {
  const pinned = clientList()
    .filter((c) => c.defaults.CLIENT_VERSION)
    .map((c) => `${c.name}: ${c.defaults.CLIENT_VERSION}`);
  return `Client version to build, install or pull (the image tag in the compose runtime); chosen by the client when empty (${pinned.join(', ')}).`;
}

function dbEngineDoc() {
  const per = clientList()
    .filter((c) => c.dbEngines)
    .map((c) => `${c.name}: ${c.dbEngines.join(' or ')}`);
  return `Database engine, checked against the client (${per.join('; ')}); the first is each client's default. A client with one engine takes no other.`;
}

/** Cores the node gets when CORES is not set: all but one, so the load generator has its own. */
function defaultCores() {
  return Math.max(1, os.cpus().length - 1);
}

const KEYS = {
  // What is measured
  NAME: {
    type: 'string',
    default: '',
    doc: 'Scenario name used in the report path; defaults to the file name without .env. Letters, digits, _ . -, not starting with a dot (it never leads out of REPORTS_DIR).',
  },
  CHAIN: fromRegistry(
    { type: 'enum', default: 'ethereum' },
    () => Object.keys(registry.chains()),
    () =>
      'Chain family, one of the modules in src/chains/. ethereum: EVM chains through ethers. polkadot, kusama: Substrate chains of those networks (relay or parachain) through @polkadot/api; substrate: any other Substrate chain spec (dev, test network or parachain).',
  ),
  CLIENT: fromRegistry({ type: 'enum', default: 'geth' }, () => Object.keys(registry.clients()), clientDoc),
  CLIENT_VERSION: fromRegistry({ type: 'version', default: null }, () => undefined, versionDoc),
  CLIENT_BIN: {
    type: 'path',
    default: '',
    doc: 'Path to a client binary to use instead of the one chainperf builds into its cache.',
  },
  RUNTIME: fromRegistry(
    { type: 'enum', default: 'auto' },
    () => ['auto', ...Object.keys(registry.runtimes())],
    () =>
      `Where the node runs, one of the runtimes in src/runtime/index.js. ${Object.values(registry.runtimes())
        .map((r) => `${r.name}: ${r.summary}`)
        .join('. ')}. auto: compose where a Docker engine answers and the client has a compose service, else host.`,
  ),

  // Node configuration
  DB_CACHE_MB: {
    type: 'int',
    min: 16,
    max: 1048576,
    default: 1024,
    doc: 'Database cache in MB (geth --cache, reth --engine.cross-block-cache-size, nethermind --Db.SharedBlockCacheSize, besu --Xplugin-rocksdb-cache-capacity, Substrate --db-cache). chopsticks has no database cache: the key is recorded, not applied. anvil and erigon have no such setting and refuse it when set.',
  },
  PEERS: {
    type: 'int',
    min: 0,
    max: 1000,
    default: 50,
    doc: 'Maximum peers (geth, erigon --maxpeers; besu --max-peers; nethermind --Network.MaxActivePeers; reth --max-outbound-peers and --max-inbound-peers, Substrate --out-peers and --in-peers: PEERS split in two, the larger half inbound; polkadot-omni-node in its dev mode has both set to 0 whatever they say). A dev chain has no peers to connect to. anvil has no networking and refuses it when set.',
  },
  NETWORK_NODES: {
    type: 'int',
    min: 0,
    max: 64,
    default: 0,
    doc: "More nodes of the same client beside the node under test, forming a local network with it (geth; host runtime: processes in their own cgroup, compose and swarm runtimes: services network-1..N of the run's project or stack), on the cores the node does not use: they peer with it through the client's own protocol (devp2p, static peers, no discovery) and get their blocks every DEV_BLOCK_TIME_S from chainperf's engine-API driver, which stands in for a consensus client (docs/network.md). 0: a lone dev chain with no peers. Left unset where another key needs a network (REPLICAS above 1, BALANCER=haproxy, SYNC=network, BLOCK_DELIVERY, NETWORK_TPS above 0): 1, the smallest network that serves, said in the run's first lines (the companions below); 0 given there is refused.",
  },
  NETWORK_TPS: {
    type: 'number',
    min: 0,
    max: 10000,
    default: null,
    doc: 'Signed transfers per second entering the network through the other nodes (never through the node under test, which receives them by gossip). Default: 2 with NETWORK_NODES, 0 without. Above 0 with NETWORK_NODES unset: a network of 1 node.',
  },
  CHAIN_LOAD: {
    type: 'string',
    default: '',
    doc: "Transaction traffic on the network (NETWORK_NODES; unset without one): quiet (NETWORK_TPS transfers, the default on a network), mainnet (12 s slots, 30M gas a block of a 60M limit: mainnet's half-full blocks, a mix of ETH transfers, ERC-20 transfers, storage-writing contract calls and a few deployments, touching a STATE profile's accounts and slots with its STATE_DISTRIBUTION), heavy (full blocks), or the path of a YAML profile of your own (slot_s, gas_target, gas_limit, mix). The transactions enter through the network nodes, so the node under test gets them by gossip and its blocks from the network. DEV_BLOCK_TIME_S, when given, changes the slot and keeps the profile's gas per second. The feed runs in a process of its own on the network's cores; the report gives its achieved rate, gas per block and CPU, and warns when it falls behind. Without NETWORK_NODES a non-quiet profile starts the smallest network that serves (1 node). docs/chain-load.md.",
  },
  BLOCK_DELIVERY: {
    type: 'enum',
    values: ['payload', 'head'],
    default: 'payload',
    doc: "How a network's blocks (NETWORK_NODES, geth; 1 node when left unset) reach every node but the one that builds them. payload: chainperf's engine-API driver hands each node the block and the new head (engine_newPayloadV4, engine_forkchoiceUpdatedV3), as a consensus client hands its execution client the blocks it gets from the beacon network; blocks do not cross devp2p. head: the driver tells each node the new head alone (engine_forkchoiceUpdatedV3) and the node fetches the block from its peers over devp2p, so blocks travel peer to peer and count in the node's p2p bytes (docs/network.md#how-blocks-reach-the-nodes).",
  },
  REPLICAS: {
    type: 'int',
    min: 1,
    max: 16,
    default: 1,
    doc: "Replicas of the node behind HAProxy (geth, host, compose and swarm runtimes, on a network: NETWORK_NODES 1 or more, so that they share one chain; left unset, 1). Each has its own database from the network's genesis (or its own copy of the STATE profile), its own cgroup and the network nodes as its own peers; CORES, MEMORY_MB, the DISK_* limits and the node's flags apply to each replica, and the replicas share the node's cores. The workload talks to the balancer only; CPU per request is the fleet's, and run.json gives each replica's requests (HAProxy's counters), share, CPU per request, latency and memory (docs/fleets.md). 1: one node, no balancer.",
  },
  FAULT: {
    type: 'string',
    default: '',
    doc: "A fault injected on purpose. kill-replica@<seconds>s (REPLICAS > 1; left unset, 2): the last replica is killed (SIGKILL) that many seconds after the window opens, and the report gives the fleet's recovery: errors the clients saw after it, when the last one came, latency before and after, and what the balancer did with the replica's traffic. pause-node@<at>s:<for>s (a network: NETWORK_NODES): the node under test (with REPLICAS, the last replica) is cut from the chain <at> seconds into the window for <for> seconds, handed no block and disconnected from its peers while it goes on serving, as when its consensus client or its network is down; then it is handed the network's head again and run.json's fault gives its catch-up: the gap, the seconds and blocks to reach the network's head again and their rate (docs/chain-load.md#catch-up-fault-pause-node). FAULT_LOAD says whether the workload runs meanwhile.",
  },
  FAULT_LOAD: {
    type: 'enum',
    values: ['on', 'off'],
    default: 'on',
    doc: "FAULT=pause-node: on: the pause falls inside the measured window, the workload running (its stale answers are the window's); off: the pause comes after the measured windows with no request sent, <at> seconds into a phase of its own, so the catch-up is measured without load.",
  },
  BALANCER: {
    type: 'enum',
    values: ['haproxy', 'none'],
    default: null,
    doc: 'What stands in front of the node. haproxy: HAProxy, with its fleet of REPLICAS (one replica too: what the balancer itself costs, docs/fleets.md); none: the workload talks to the node. Default: haproxy with REPLICAS above 1, none with 1.',
  },
  LB_ALGORITHM: {
    type: 'enum',
    values: ['roundrobin', 'leastconn', 'first'],
    default: 'roundrobin',
    doc: "REPLICAS: HAProxy's balance algorithm. Every replica gets an HTTP health check that is a JSON-RPC call (eth_blockNumber, expecting a result), not a TCP ping.",
  },
  LB_LAG_CHECK: {
    type: 'enum',
    values: ['on', 'off'],
    default: null,
    doc: "REPLICAS with MAX_HEAD_LAG_S (host runtime): whether HAProxy takes a replica out of rotation while its head lags the network's by more than MAX_HEAD_LAG_S seconds. on: each replica's server gets an agent check (HAProxy's agent-check, asked every second) whose agent, in chainperf's process, answers drain while the replica's head lag at its latest look (4 a second) is over the bound or no look at its head was answered for 2 s, and ready once it is within the bound again; a replica is drained only while another one is within it. run.json's fleet.lag_check and each window's node.fleet.lag_check give every change of an answer, with its instant and why (docs/fleets.md#a-lag-aware-health-check-lb_lag_check). Default: on with REPLICAS above 1, MAX_HEAD_LAG_S set and RUNTIME=host; off otherwise. on without MAX_HEAD_LAG_S, without a balancer, or in another runtime is refused.",
  },
  CORES: {
    type: 'int',
    min: 1,
    max: 4096,
    default: defaultCores,
    doc: "CPU cores the node is pinned to (cpuset; every client sizes its thread pools from the cores it may use; anvil also gets --threads). Default: all but one. More than the host's cores is an error.",
  },
  DB_ENGINE: fromRegistry(
    { type: 'enum', default: 'pebble' },
    () => [...new Set(clientList().flatMap((c) => c.dbEngines || []))],
    dbEngineDoc,
  ),
  DB_SIZE_LIMIT_GB: {
    type: 'int',
    min: 1,
    max: 1048576,
    default: null,
    doc: "Largest database size in GB, for clients on MDBX (erigon --db.size.limit, reth --db.max-size). Unset: the client's default. Refused by clients without such a limit.",
  },
  TRIE_CACHE_MB: {
    type: 'int',
    min: 0,
    max: 1048576,
    default: 1024,
    doc: 'Substrate: state trie cache in MB (--trie-cache-size; 0 disables it). Not used by geth.',
  },
  CHAIN_SPEC: {
    type: 'string',
    default: '',
    doc: "Substrate: the chain spec the node starts from: a path to a raw chain spec .json, or the name of one shipped in the crates.io crate polkadot-parachain-bin 5.0.0 (chain-specs/), downloaded into the cache on first use: asset-hub-kusama, asset-hub-polkadot, bridge-hub-kusama, bridge-hub-polkadot, collectives-polkadot, and the test networks' (*-rococo, *-westend, *-wococo, tick, track, trick). Default: bridge-hub-polkadot (CHAIN=polkadot, substrate), bridge-hub-kusama (kusama). The dev accounts are funded in a copy of its genesis.",
  },
  DEV_BLOCK_TIME_S: {
    type: 'int',
    min: 1,
    max: 60,
    default: 1,
    doc: 'Block period of the dev chain (geth --dev.period; polkadot-omni-node --dev-block-time; chopsticks: chainperf calls dev_newBlock this often), so the head advances. Substrate clients default to 2.',
  },

  INSTANCE: {
    type: 'string',
    default: '',
    doc: "An instance profile, instances/<name>.env (shipped: m5.xlarge, m5.xlarge-gp3-16k, i3.xlarge, and the 1-vCPU m6g.medium and do-s-1vcpu-2gb): sets CORES (capped to the host's cores less the load generator's, with a warning), MEMORY_MB, the DISK_* limits and HOURLY_PRICE, which the file and the environment can still override.",
  },
  // Resource limits of the node (host, compose and swarm runtimes, DISK_* not on a swarm; refused where the kernel
  // cannot enforce them)
  MEMORY_MB: {
    type: 'int',
    min: 64,
    max: 16777216,
    default: null,
    doc: "Memory limit of the node in MB, page cache included (cgroup v1 memory.limit_in_bytes and memsw; compose mem_limit and memswap_limit; swarm the service's memory limit, swap set alike on its container), so a database larger than it is read from disk. With REPLICAS, each replica has this limit of its own.",
  },
  DISK_READ_IOPS: {
    type: 'int',
    min: 1,
    max: 10000000,
    default: null,
    doc: 'Read operations per second allowed to the node on the disk that holds its data (cgroup v1 blkio.throttle.read_iops_device; compose blkio_config device_read_iops).',
  },
  DISK_WRITE_IOPS: {
    type: 'int',
    min: 1,
    max: 10000000,
    default: null,
    doc: 'Write operations per second, as DISK_READ_IOPS (blkio.throttle.write_iops_device; device_write_iops).',
  },
  DISK_READ_MBPS: {
    type: 'int',
    min: 1,
    max: 1000000,
    default: null,
    doc: "Read bandwidth in MB/s (1 MB = 1,000,000 bytes, as cloud providers publish it) on the node's data disk (blkio.throttle.read_bps_device; device_read_bps).",
  },
  DISK_WRITE_MBPS: {
    type: 'int',
    min: 1,
    max: 1000000,
    default: null,
    doc: 'Write bandwidth in MB/s, as DISK_READ_MBPS (blkio.throttle.write_bps_device; device_write_bps). Buffered writes the kernel flushes later are charged to the root cgroup on cgroup v1: the limit bites on direct and synchronous writes.',
  },
  COLD: {
    type: 'enum',
    values: ['no', 'yes'],
    default: 'no',
    doc: "yes: before each measured window, stop the node, evict its data files from the kernel page cache (the rest of the machine's cache stays) and start it again (host and compose), then watch its CPU 2 s at a time (4 s with cAdvisor) until the work of its start is over (run.json node.cold_settle), so the window starts with the node's caches cold and its start-up done; the idle baseline is the one measured before.",
  },

  // Compose runtime
  KEEP: {
    type: 'enum',
    values: ['none', 'volume', 'stack'],
    default: 'none',
    doc: 'What survives the run. none: the compose project is brought down with its volumes. volume: its volumes are kept. stack: nothing is stopped (the command to stop it is logged).',
  },
  NODE_VOLUME: {
    type: 'name',
    default: '',
    doc: "Docker volume holding the node's data, outside the run's project: created when missing, never removed, so the next run measures the same synced chain without syncing again.",
  },
  SNAPSHOT: {
    type: 'path',
    default: '',
    doc: "A tar archive of the node's data directory, unpacked into NODE_VOLUME when that volume is created.",
  },
  BIND_ADDR: {
    type: 'ip',
    default: '127.0.0.1',
    doc: "IPv4 address the compose services' published ports bind to (anything else is refused before the run starts). Anything but 127.0.0.1 exposes the node and Prometheus beyond the machine chainperf runs on.",
  },
  STACK_TIMEOUT_S: {
    type: 'int',
    min: 5,
    max: 3600,
    default: 120,
    doc: 'Give up when a compose service (node, cAdvisor, Prometheus, Grafana) is not ready after this long.',
  },
  SWARM_NODE: {
    type: 'string',
    default: '',
    doc: "RUNTIME=swarm: the swarm node (its hostname, as `docker node ls` shows it) the node under test runs on; empty: the one chainperf runs on. On another node the generator and the node no longer share a machine: the node's CPU, memory and disk come from that node's cAdvisor through Prometheus, CORES becomes a CPU quota of as many cores (a swarm cannot pin a container on a machine chainperf does not reach), the Docker engine's cross-check is not available, and the node's data lives in a volume removed with its container. With NETWORK_NODES the network's nodes stay on chainperf's machine, the node their peer. With REPLICAS, a comma-separated list places replica 1 (the node) on the first name and each other replica on the next, in turn (h1,h2: replicas 1 and 3 on h1, 2 on h2); HAProxy stays on chainperf's machine (SWARM_BALANCER_NODE places it), each replica's CPU and memory come from its node's cAdvisor, over its own samples inside the window. FAULT kills the last replica through the swarm (its service scaled to 0, its stop signal SIGKILL), some seconds after the order. MEMORY_MB is the service's memory limit there, but its swap cannot be limited (no engine reached sets it): the report says so, with the swap the node used. Not yet with SYNC=network or STATE (docs/runtimes.md#the-node-on-another-swarm-node).",
  },
  SWARM_BALANCER_NODE: {
    type: 'string',
    default: '',
    doc: "RUNTIME=swarm with a balancer (REPLICAS > 1 or BALANCER=haproxy; with one replica and BALANCER unset, HAProxy in front of it): the swarm node (its hostname) HAProxy runs on; empty: the one chainperf runs on. There the workload reaches HAProxy at that node's address, its counters and access log come through the swarm (its task's log), its CPU from that node's cAdvisor between its own first and last samples inside the window (divided by the requests it logged between them), and the cores it would have had on chainperf's machine become a CPU quota (docs/fleets.md#the-balancer-on-another-swarm-node).",
  },
  SWARM_GENERATOR_NODES: {
    type: 'string',
    default: '',
    doc: "RUNTIME=swarm: the swarm nodes (hostnames, comma-separated) the load generators run on, as tasks of the stack: generator i on the (i mod n)-th name (GENERATORS=4 on h1,h2: generators 0 and 2 on h1, 1 and 3 on h2; GENERATORS left unset: one per name); empty: processes on chainperf's machine. Each is a container of chainperf's generator image (built locally from the Node.js chainperf runs on and chainperf's packages) running its agent, which chainperf reaches at a port of that node with the run's token: the pass's spec and parameter pool go there, its samples come back. Each generator's CPU is its container's, from its cgroup, on the cores that node gives it (no pinning); the nodes' clocks must agree with chainperf's machine's within 50 ms, which is checked. Not with a replay, whose capture is a file on chainperf's machine (docs/fleets.md#generators-on-swarm-nodes).",
  },
  GRAFANA: {
    type: 'enum',
    values: ['auto', 'yes', 'no'],
    default: 'auto',
    doc: 'Grafana for live supervision (compose). auto: started when the Docker engine has its image or can pull it, else skipped with a notice (it cannot be built from package sources); yes: a run without it fails; no: never.',
  },
  GRAFANA_PORT: {
    type: 'int',
    min: 1,
    max: 65535,
    default: null,
    doc: 'Port Grafana is published on (BIND_ADDR); a free port when unset. The URL is logged.',
  },
  COMPOSE_FILES: {
    type: 'string',
    default: '',
    doc: "More compose files (comma-separated paths) combined after chainperf's own, e.g. to add a service or change one.",
  },
  NODE_IMAGE: {
    type: 'string',
    default: '',
    doc: "Image of the node service. Default: the client's pinned upstream image when the Docker engine has it or can pull it, else one built locally (./run.sh images).",
  },
  PROMETHEUS_IMAGE: {
    type: 'string',
    default: '',
    doc: "Image of the Prometheus service. Default: prom/prometheus:v2.42.0 when the Docker engine has it or can pull it, else chainperf/prometheus:2.42.0 built from Debian's package.",
  },
  CADVISOR_IMAGE: {
    type: 'string',
    default: '',
    doc: 'Image of the cAdvisor service. Default: gcr.io/cadvisor/cadvisor:v0.49.1 when the Docker engine has it or can pull it, else chainperf/cadvisor built from the cAdvisor Go module (images/cadvisor).',
  },
  GRAFANA_IMAGE: {
    type: 'string',
    default: '',
    doc: 'Image of the Grafana service. Default: grafana/grafana:11.3.0 when the Docker engine has it or can pull it.',
  },

  // Attach runtime
  RPC_URL: {
    type: 'url',
    schemes: ['http', 'https', 'ws', 'wss'],
    default: '',
    secret: true,
    doc: 'JSON-RPC endpoint of the node (attach): http(s):// or ws(s)://. ethereum: a ws:// or wss:// URL means TRANSPORT=ws, and the sync check, history and harvest then go over WebSocket too. Substrate chains: ws(s):// or http(s):// (the same port serves both). Basic auth in it (http://user:pass@host/...) is sent as an Authorization header; keys in its path and query stay on the wire.',
  },
  METRICS_URL: {
    type: 'url',
    default: '',
    secret: true,
    doc: 'Prometheus-format metrics endpoint of the node (attach), e.g. http://127.0.0.1:6060/debug/metrics/prometheus, read for its CPU counter. Basic auth in it is sent as an Authorization header.',
  },
  REPLICA_METRICS: {
    type: 'urls',
    default: '',
    secret: true,
    doc: "Attach to a fleet (RUNTIME=attach, RPC_URL its balancer): the metrics endpoint of each replica behind it, comma-separated (geth: http://<replica>:6060/debug/metrics/prometheus). Each is only read (HTTP GET): its CPU counter and its own request counter at each window edge; the fleet's CPU is their sum, and run.json gives each replica's requests, share and CPU per request (docs/fleets.md#attaching-to-a-fleet-that-already-runs-replica_metrics). Takes the place of METRICS_URL and NODE_PID.",
  },
  NODE_PID: {
    type: 'int',
    min: 1,
    max: 4194304,
    default: null,
    doc: 'PID of the node process on the machine chainperf runs on (attach); its CPU is read from /proc.',
  },
  ALLOW_WRITES: {
    type: 'enum',
    values: ['no', 'yes'],
    default: 'no',
    doc: "yes: a workload may send transactions (eth_sendRawTransaction, author_submitExtrinsic, the tx.* and balances.* mix entries, a capture's writes) to a node chainperf did not start (RUNTIME=attach), and CREATE_HISTORY=yes may create history there. By default such a node gets read methods only, and a workload that holds anything else is refused before a request is sent, with the methods and counts it holds. Administrative methods (admin_*, debug_setHead, miner_*, personal_*, engine_*, Substrate's unsafe RPCs that change the node) are never sent to such a node. A node chainperf starts is its own: anything goes there.",
  },
  ALLOW_METHODS: {
    type: 'string',
    default: '',
    doc: "Comma-separated method names a workload may send to a node chainperf did not start (RUNTIME=attach) although chainperf does not class them as reads: methods it does not know, and read-only node internals such as debug_traceTransaction or Substrate's system_peers. Never an administrative method.",
  },
  CPU_SOURCE: {
    type: 'enum',
    values: ['auto', 'cgroup', 'pid', 'metrics'],
    default: 'auto',
    doc: 'Where node CPU time comes from. auto: cgroup (host), pid when NODE_PID is set, else metrics (attach).',
  },

  // Workload
  WORKLOAD: {
    type: 'workload',
    default: 'eth-default',
    doc: 'A weighted mix in workloads/<name>.yml, or method:<rpc method> for one method with harvested parameters, or replay:<capture file> (ethereum): the requests a ./run.sh record capture holds, sent again with their own parameters and timing (REPLAY_SPEED; see docs/workloads.md).',
  },
  REPLAY_SPEED: {
    type: 'number',
    min: 0,
    max: 1000,
    default: 1,
    doc: "WORKLOAD=replay: how much faster than captured the requests are sent (2: twice as fast); 0: as fast as a closed loop of CONCURRENCY users allows, in the capture's order. The capture's first request is sent when the window opens, and it repeats end to end before and after.",
  },
  GENERATOR: fromRegistry(
    { type: 'enum', default: 'ethers' },
    () => Object.keys(registry.generators()),
    () =>
      "How requests are sent. ethers: through the chain's client library (ethers JsonRpcProvider; @polkadot/api over WebSocket for Substrate chains, whatever this key says). lean (ethereum only for now): chainperf's artillery engine, keep-alive HTTP/1.1 sockets (or WebSocket connections) with requests prepared ahead, for figures at full speed (see docs/generator.md). The generators are the entries of src/workload/generators.js.",
  ),

  LEAN_RUNNER: {
    type: 'enum',
    values: ['chainperf', 'artillery'],
    default: 'chainperf',
    doc: "GENERATOR=lean: what runs the lean engine's passes. chainperf: chainperf's own small runner (src/workload/lean-runner.js): the same script, engine, spec and samples, its users on a worker thread per core the generator may use, started in a fraction of a second. artillery: artillery's CLI, as before (about 6 s and several CPU-seconds to load its modules and workers at each start, and artillery's own report in artillery.json). The figures are measured the same way with either (docs/generator.md).",
  },
  LEAN_SENDER: {
    type: 'enum',
    values: ['node', 'native'],
    default: 'node',
    doc: "GENERATOR=lean (set to lean for native when GENERATOR is left unset): what sends the lean engine's requests. node: the engine's own sockets in Node.js. native: a small program in C (src/workload/engines/artillery-engine-chainperf/native-sender.c, built with the machine's C compiler on first use, gcc installed from Debian when missing) sends, reads and times them with one thread per worker, and the engine records every request from what it reports, in the same samples: the same requests, seed, timeouts and failure classes, at close to wrk's CPU per request (docs/generator.md#the-native-sender-lean_sendernative). Closed loops (CONCURRENCY) over plain http:// or ws:// only: not with RATE or SATURATE=yes, a replay, TLS, or generators on swarm nodes.",
  },
  GENERATORS: {
    type: 'int',
    min: 1,
    max: 64,
    default: 1,
    doc: "Load generator processes that share the load: CONCURRENCY users (or RATE requests/s, and its SHAPE) divided between them, the same window instants, each its own seed. In the host and compose runtimes each runs in its own cgroup pinned to its share of the generator's cores (cores taken in turn when there are fewer cores than generators). Every latency of every generator is merged into the window's percentiles (exact, never averaged); run.json's generator.generators gives each one's share, requests/s, CPU and busy share, and the run warns when any was near its limit. Not with a replay.",
  },
  TRANSPORT: {
    type: 'enum',
    values: ['http', 'ws'],
    default: 'http',
    doc: "How the workload reaches the node. http: JSON-RPC over HTTP POST, keep-alive. ws: JSON-RPC over WebSocket (host and compose runtimes: geth serves --ws; attach: RPC_URL's scheme decides, and a TRANSPORT that contradicts it is an error). Both generators speak both; with ethers over ws each artillery worker keeps one WebSocketProvider. Left unset with a workload that subscribes (eth-subscriptions): ws. Substrate workloads always use WebSocket.",
  },
  WS_CONNECTIONS: {
    type: 'int',
    min: 1,
    max: 1024,
    default: 4,
    doc: 'TRANSPORT=ws with GENERATOR=lean: WebSocket connections each artillery worker keeps open (at most CONCURRENCY); each closed-loop user keeps to one of them (the requests of an open loop go round robin), several requests in flight on each, matched to their answers by JSON-RPC id.',
  },
  CONCURRENCY: {
    type: 'int',
    min: 1,
    max: 10000,
    default: 32,
    doc: 'Closed loop: this many virtual users send requests back to back.',
  },
  RATE: {
    type: 'int',
    min: 1,
    max: 1000000,
    default: null,
    doc: "Open loop: requests per second, each from a new virtual user. Set this or CONCURRENCY, not both; set from the environment, either replaces the file's.",
  },
  RAMP_S: {
    type: 'int',
    min: 0,
    max: 3600,
    default: 0,
    doc: 'Seconds over which load rises to its target before the measured window opens (not measured).',
  },
  SHAPE: {
    type: 'enum',
    values: ['steady', 'step', 'spike'],
    default: 'steady',
    doc: "Open loop (RATE): how the offered rate moves inside the measured window. steady: RATE throughout. step: SHAPE_STEPS equal steps across the window, RATE/n, 2*RATE/n, ... up to RATE. spike: RATE with SPIKE_FACTOR*RATE for SPIKE_S seconds in the middle of the window. The window is the same as for a steady load (figures over all of it; run.json window.shape has each segment's requests); before it the load runs at the first rate. Not with SATURATE=yes.",
  },
  SHAPE_STEPS: {
    type: 'int',
    min: 2,
    max: 100,
    default: 4,
    doc: 'SHAPE=step: number of steps across the measured window.',
  },
  SPIKE_FACTOR: {
    type: 'number',
    min: 1,
    max: 100,
    default: 3,
    doc: "SHAPE=spike: the spike's rate as a multiple of RATE.",
  },
  SPIKE_S: {
    type: 'int',
    min: 1,
    max: 86400,
    default: 5,
    doc: 'SHAPE=spike: length of the spike in seconds, centred in the window (shorter than DURATION_S).',
  },
  DURATION_S: { type: 'int', min: 1, max: 86400, default: 60, doc: 'Length of the measured window in seconds.' },
  WARMUP_S: {
    type: 'int',
    min: 0,
    max: 3600,
    default: 10,
    doc: 'Warm-up with the same workload before the idle baseline; not measured.',
  },
  IDLE_S: {
    type: 'int',
    min: 0,
    max: 3600,
    default: 10,
    doc: "Quiet window that measures the node's idle CPU rate (0: no net figure).",
  },
  REPEAT: {
    type: 'int',
    min: 1,
    max: 100,
    default: 1,
    doc: 'Measure the window this many times on the warm stack, each after its own idle baseline; run.json gets every repetition and the median, 95% interval and CV of each headline figure.',
  },
  REPEAT_GENERATOR: {
    type: 'enum',
    values: ['kept', 'per-window'],
    default: 'kept',
    doc: "How a run's windows get their load (one window, REPEAT's, SATURATE=yes's steps). kept: one load generator starts as soon as the node is synced (overlapping the history and the harvest), runs the warm-up (WARMUP_S, at least 1 s of unmeasured load that proves its workers up), then every window, idle between them, so each window has about 1 s of lead-in instead of artillery's 6 s start-up, as ./run.sh ab does (AB_GENERATOR); a saturation step's window carries its rate (GENERATOR=lean). per-window: an artillery pass for the warm-up and one per window. A workload that needs a pass per window (a replay, a SHAPE, writes, subscriptions, COLD=yes, an open loop through ethers, Substrate) uses per-window; run.json's window_generator (one window), repetitions_generator or saturation.generator says which and why.",
  },
  DROP_CACHES: {
    type: 'enum',
    values: ['no', 'yes'],
    default: 'no',
    doc: 'yes: drop the kernel page cache before each measured window, for cold-cache figures (root; affects the whole machine).',
  },
  PROFILE: {
    type: 'enum',
    values: ['none', 'methods'],
    default: 'none',
    doc: 'methods: after the main window, measure each method of the mix alone in its own window, back to back on the warm node: the CPU time per request of every method.',
  },
  NODE_PROFILE: {
    type: 'enum',
    values: ['none', 'cpu'],
    default: 'none',
    doc: "cpu: a CPU profile of the node over each measured window, kept in the report folder (profile/) in its native format, drawn as a flame graph SVG (inferno, built with cargo on first use) and summarized as the top functions in summary.md and run.json. geth on the host runtime: its own profiler (--pprof, /debug/pprof/profile); any other node on the machine chainperf runs on (host runtime, a compose node container's main process, NODE_PID in attach): perf record -e cpu-clock -F 99 -g (Debian linux-perf, installed on first use). The profiler's cost is in the figures: the report says profiling was on.",
  },
  PROFILE_DURATION_S: {
    type: 'int',
    min: 1,
    max: 3600,
    default: 10,
    doc: "Length of each method's window with PROFILE=methods.",
  },
  SATURATE: {
    type: 'enum',
    values: ['no', 'yes'],
    default: 'no',
    doc: 'yes (or ./run.sh saturate <scenario>): instead of one window, raise an open-loop rate step by step until MAX_P99_MS or MAX_ERROR_RATE is crossed (100 ms and 0.01 when unset) or the node no longer answers the rate offered, then bisect; reports the highest sustainable rate.',
  },
  SATURATE_START_RPS: {
    type: 'int',
    min: 1,
    max: 10000000,
    default: 500,
    doc: 'First rate of the saturation search, requests/s.',
  },
  SATURATE_FACTOR: {
    type: 'number',
    min: 1.05,
    max: 10,
    default: 1.5,
    doc: 'Each step of the saturation search offers this many times the previous rate.',
  },
  SATURATE_STEP_S: {
    type: 'int',
    min: 1,
    max: 3600,
    default: 10,
    doc: "Length of each saturation step's measured window.",
  },
  SATURATE_MAX_STEPS: {
    type: 'int',
    min: 1,
    max: 50,
    default: 12,
    doc: 'Most growing steps before the search stops without a limit (and most steps down when the first rate already fails).',
  },
  SATURATE_BISECT: {
    type: 'int',
    min: 0,
    max: 10,
    default: 2,
    doc: 'Bisection steps between the last rate that held and the first that failed.',
  },
  HOURLY_PRICE: {
    type: 'number',
    min: 0,
    max: 1000000,
    default: null,
    doc: 'Price of the machine per hour (any currency): reports the cost of a million requests at the measured rate and at saturation.',
  },
  REQUEST_TIMEOUT_MS: {
    type: 'int',
    min: 100,
    max: 600000,
    default: 10000,
    doc: 'A request without an answer after this long counts as a timeout (a failure).',
  },
  STALL_S: {
    type: 'int',
    min: 0,
    max: 3600,
    default: 5,
    doc: "Seconds of the measured window without any request completing that make a stall (0: never). A stall lasting to the window's end (the node stopped answering, requests waiting) fails the run with its figures kept; one that ends inside the window is a warning.",
  },
  SEED: {
    type: 'int',
    min: 0,
    max: 2147483647,
    default: 1,
    doc: 'Seed of the random choice of parameters, so runs draw the same sequences: the warm-up draws from SEED, each measured window from SEED and its name (both sides of an A/B pair alike), so a window does not ask for what the warm-up or an earlier window asked for.',
  },

  // Chain state the node starts from
  STATE: {
    type: 'enum',
    values: ['dev', 'small', 'medium', 'large', 'xlarge'],
    default: 'dev',
    doc: "dev: a fresh --dev chain with the history below. small | medium | large (geth; host and compose): a chain with many accounts, a contract with many storage slots and blocks of history (transfers, contract calls with logs), built once with progress shown and cached in ~/.cache/chainperf/state/<profile>-geth-<version>-<DB_ENGINE>, then copied for each run (never written). small: 20,000 accounts and slots in the genesis, 2,500 transactions, then 10,000 slots and 5,000 accounts more; medium: 1,000,000 accounts and slots, 25,000 transactions; large: medium grown by 10,000,000 slots and 5,000,000 accounts; xlarge (geth 1.16.7 only, about 30 GiB of disk): medium grown by 150,000,000 slots and 50,000,000 accounts. For geth 1.16.7 the accounts and slots are written straight into the data directory (statewriter, docs/states.md); other versions use geth init (about 11.4 GB of memory for medium) and StateStore calls (hundreds of items per transaction). Build times and sizes on a 2-core machine: docs/results.md. With polkadot-omni-node (host): the CHAIN_SPEC genesis with 20,000 (small), 1,000,000 (medium) or 5,000,000 (large) more accounts (keyless, System.Account entries), built once into ~/.cache/chainperf/state/<profile>-polkadot-omni-node-<version>-<DB_ENGINE>-<spec>; the history is the run's own, as on a dev chain.",
  },
  STATE_DISTRIBUTION: {
    type: 'enum',
    values: ['uniform', 'skewed'],
    default: 'uniform',
    doc: 'With a STATE profile: how parameters are drawn across the whole state and history (accounts and slots by the generator for each request, over all of them; blocks and transactions from 4,096 draws kept in params.json; on a Substrate state, accounts only, blocks harvested as on a dev chain). uniform: every account, slot, block and transaction alike. skewed: 90% of draws from a hot 10% (accounts and slots spread over the state; the most recent tenth of blocks and transactions), 10% from the cold rest.',
  },

  // Dev chain history created before the run
  RETRY_S: {
    type: 'int',
    min: 0,
    max: 3600,
    default: 60,
    doc: 'The steps before the measured window (the sync wait, history, the parameter harvest) retry a call that fails for a transient reason (HTTP 429 or 5xx, a connection reset or refused, a time-out) with backoff, for at most this many seconds in all, saying so in the log; run.json counts the retried calls (retries). 0: no retries. Nothing in the measured window is retried: its errors are the figure.',
  },
  CREATE_HISTORY: {
    type: 'enum',
    values: ['auto', 'yes', 'no'],
    default: 'auto',
    doc: 'Create the history below before harvesting. auto: on the fresh dev chain the host runtime starts; yes: also on an attached dev chain (it needs an unlocked, funded account); no: never.',
  },
  HISTORY_ACCOUNTS: {
    type: 'int',
    min: 1,
    max: 1000,
    default: 20,
    doc: 'Dev chain: accounts funded before the run (Substrate: in the genesis, besides the well-known dev accounts and one signer per virtual user for the transfer workload).',
  },
  HISTORY_TRANSFERS: {
    type: 'int',
    min: 0,
    max: 100000,
    default: 200,
    doc: 'Dev chain: value transfers between those accounts.',
  },
  HISTORY_CONTRACT_CALLS: {
    type: 'int',
    min: 0,
    max: 100000,
    default: 100,
    doc: 'Dev chain: contract calls that emit logs.',
  },
  HISTORY_BLOCKS: {
    type: 'int',
    min: 1,
    max: 1000,
    default: 8,
    doc: "Ethereum dev chain: the blocks the transfers and calls are spread over, one round of them mined before the next is sent (each about a block period: 1 s on geth's dev chain). Fewer makes the history quicker to create and its transactions denser per block; the harvest, which leaves out the top 2 blocks, then waits until the history's first round is below them. run.json's history.rounds and first_round_block give both.",
  },

  // Waiting
  SYNC: {
    type: 'enum',
    values: ['local', 'network'],
    default: 'local',
    doc: "local: the node starts with the chain it has (a dev chain of its own, a STATE copy, an attached node) and is waited for. network (on a network: NETWORK_NODES, 1 when left unset): the history is built on the network first and the node under test starts with only the genesis, then downloads the chain from its peers with the client's own sync (geth: told the network's head through the engine API, it fetches the blocks over devp2p; with a STATE profile, host, compose and swarm runtimes, it starts with the profile's genesis block alone and snap-syncs the state); run.json's sync gives the duration, blocks, bytes received and the node's CPU meanwhile (docs/network.md). With REPLICAS (host, compose and swarm runtimes): each replica does so in turn, sync.replicas each one's.",
  },
  SYNC_TIMEOUT_S: {
    type: 'int',
    min: 1,
    max: 604800,
    default: 120,
    doc: 'Give up when the node is not synced with its head advancing after this long.',
  },

  // Validation: bounds that make a run end with a verdict (exit status 1 when one fails)
  MAX_CPU_MS_PER_REQUEST: {
    type: 'number',
    min: 0,
    max: 1000000,
    default: null,
    doc: 'Bound on figures.cpu_ms_per_request (gross node CPU ms per successful request).',
  },
  MAX_P99_MS: {
    type: 'number',
    min: 0,
    max: 10000000,
    default: null,
    doc: 'Bound on the p99 latency of successful requests, in ms.',
  },
  MAX_ERROR_RATE: {
    type: 'number',
    min: 0,
    max: 1,
    default: null,
    doc: 'Bound on the share of failed requests (0.01 = 1%).',
  },
  MIN_RPS: {
    type: 'number',
    min: 0,
    max: 100000000,
    default: null,
    doc: 'Bound on throughput: successful requests per second.',
  },
  MAX_HEAD_LAG_S: {
    type: 'number',
    min: 0,
    max: 86400,
    default: null,
    doc: "On a network (NETWORK_NODES): bound on the node's worst head lag in the window (figures.head_lag_s_max: how long the network had been past the node's head, at the worst of its looks 4 times a second; with REPLICAS, the worst replica's; docs/chain-load.md). Also a criterion of the saturation search (./run.sh saturate): the highest rate at which the node stays within it, p99 and the error rate. Refused without a network.",
  },

  // A/B sessions (./run.sh ab A.env B.env): read from A's scenario and the environment
  AB_TARGET_PCT: {
    type: 'number',
    min: 0.1,
    max: 100,
    default: 2,
    doc: './run.sh ab: stop once the 95% interval of the ratio B/A of CPU time per request is within plus or minus this many percent.',
  },
  AB_MIN_PAIRS: {
    type: 'int',
    min: 2,
    max: 1000,
    default: 5,
    doc: "./run.sh ab: the first stage: from the spread of this many pairs of windows, the session computes how many pairs in all the target width needs (Stein's two-stage procedure), and measures that many, or one more where that count is odd so that as many pairs run AB as BA (up to AB_MAX_PAIRS and AB_MAX_S).",
  },
  AB_RESTART_PAIRS: {
    type: 'int',
    min: 0,
    max: 1000,
    default: null,
    doc: './run.sh ab: restart both nodes (same data, new processes, each warmed up again for WARMUP_S) every this many pairs, and take the intervals over the blocks of pairs between restarts instead of over pairs. Two processes of one configuration may differ in CPU per request by a few percent for their whole life, which pairs of windows of the same two processes do not sample: without restarts, a verdict is about these two processes. Unset: 1 (a restart before every pair, the first too) where both sides run RUNTIME=host or compose, else 0 (never; the report says what the interval then covers), and 0 with a warning where a side is a fleet of replicas (REPLICAS). A value above 0 with another runtime or a fleet is refused.',
  },
  AB_BURN_IN_PAIRS: {
    type: 'int',
    min: 0,
    max: 100,
    default: 1,
    doc: "./run.sh ab: measure this many pairs before the stages (both nodes restarted first where the session restarts them) and keep them out of every interval (burn_in in ab.json). A session's first pair ran odd: in 10 A/A sessions on geth --dev, B/A of the first pair was below 1 in 9 (mean -1.2%) against +0.1% for the 50 pairs after them (docs/results.md). They count in neither AB_MAX_PAIRS nor AB_MAX_S. 0: none.",
  },
  AB_WINDOW: {
    type: 'enum',
    values: ['auto', 'fixed'],
    default: 'auto',
    doc: "./run.sh ab: auto: the session splits each window's CPU per request into its two halves to measure the noise inside windows, which longer windows average down; after the first two pairs of DURATION_S windows it predicts from that noise and the measured cost of a pair how long windows of one to six times DURATION_S (at most 300 s) would take to reach AB_TARGET_PCT, and keeps DURATION_S or, where a longer window is faster, makes those pairs a pilot (in ab.json, in no interval) and starts both stages at that length. The choice does not look at the spread between pairs, so that the interval still holds 95%. fixed: DURATION_S throughout. A and B with different DURATION_S keep their own (fixed).",
  },
  AB_MAX_PAIRS: {
    type: 'int',
    min: 2,
    max: 1000,
    default: 20,
    doc: './run.sh ab: stop after this many pairs whatever the interval (the report says it is wider than the target); AB_BURN_IN_PAIRS not counted.',
  },
  AB_MAX_S: {
    type: 'int',
    min: 10,
    max: 604800,
    default: 900,
    doc: './run.sh ab: do not start a pair that would end the measuring later than this many seconds after the first pair began (setup, warm-up and AB_BURN_IN_PAIRS not counted).',
  },
  AB_GENERATOR: {
    type: 'enum',
    values: ['per-window', 'kept'],
    default: 'kept',
    doc: "./run.sh ab: kept: each side's load generator starts once, before the warm-ups, and runs every window of that side, idle between them (about 1 s of lead-in per window: a pair of 10 s windows took 34 s instead of 48; 20 A/A sessions, 10 of them beside a CPU load, all called the sides the same: docs/results.md). per-window: a generator pass per window, as a run does (about 6 s of start-up before each window through artillery, 2 s with the lean runner: LEAN_RUNNER). A session whose workload needs a pass per window (a replay, a SHAPE, writes, subscriptions, COLD=yes, an open loop through ethers, Substrate) uses per-window on both sides, and ab.json says why.",
  },
  AB_SLICE_S: {
    type: 'number',
    min: 0,
    max: 60,
    default: 1,
    doc: "./run.sh ab: interleave each pair: A and B take turns over one span in slices of about this many seconds (jittered by a quarter either way), DURATION_S of slices each, each node's CPU read at every slice's edges and summed over its own slices. The machine's speed moves over tens of seconds on a shared or virtual host, which pairs of whole back-to-back windows do not cancel and slices do (the spread of A/A pairs' log B/A about 2.3 times smaller with 1 s slices than with 10 s windows: docs/results.md). Each slice's load stops 100 ms before its end so that its answers are in before the other side's slice (at least 0.5 s). Needs the kept generators (AB_GENERATOR=kept), closed loops (no RATE) and nodes whose CPU is read at any instant (RUNTIME=host); otherwise, or with 0, whole windows alternate, and ab.json says why (settings.interleave_reason). A session whose burn-in pair finds more than 1% of a side's answers coming after its slices (a node that answers in seconds) measures whole windows instead.",
  },
  MAX_REGRESSION_PCT: {
    type: 'number',
    min: 0,
    max: 1000,
    default: null,
    doc: './run.sh ab: exit status 1 when B is worse than A by more than this many percent in a compared figure (CPU per request, requests/s, latency, memory, disk per request) with the whole 95% interval beyond it: a regression gate for CI.',
  },

  // Capacity (./run.sh capacity <scenario>): what to deploy, how many, at what cost (docs/capacity.md)
  TARGET_RPS: {
    type: 'number',
    min: 0,
    max: 100000000,
    default: null,
    doc: "./run.sh capacity: the request rate the fleet must serve, requests/s (above 0), of the scenario's workload under its bounds (MAX_P99_MS, MAX_ERROR_RATE: the saturation search's, 100 ms and 0.01 when unset).",
  },
  INSTANCES: {
    type: 'string',
    default: '',
    doc: './run.sh capacity: the instance profiles to compare: names in instances/ separated by commas (m6g.medium,do-s-1vcpu-2gb), or a folder of profiles (every <name>.env in it; relative to the scenario file when the file sets it, else to the working directory). Each must set CORES and HOURLY_PRICE.',
  },
  REDUNDANCY: {
    type: 'enum',
    values: ['N+1', 'none'],
    default: 'N+1',
    doc: './run.sh capacity: N+1: one replica more than the target needs, so that the fleet still serves it with one replica lost; none: exactly what the target needs.',
  },
  CAPACITY_HEADROOM: {
    type: 'number',
    min: 0,
    max: 90,
    default: 30,
    doc: "./run.sh capacity: percent kept below each instance's saturated rate: a replica is planned to serve at most (100 - this)% of it.",
  },
  CAPACITY_REPEATS: {
    type: 'int',
    min: 1,
    max: 20,
    default: 3,
    doc: "./run.sh capacity: saturation searches per instance, each a run of its own on a fresh node, in rounds across the instances; the saturated rate's 95% interval comes from them (none from 1: no tie or no-tie is called then).",
  },
  CAPACITY_EXTRAPOLATE: {
    type: 'enum',
    values: ['none', 'linear'],
    default: 'none',
    doc: "./run.sh capacity: an instance with more cores than the machine can give the node (its cores less the load generator's). none: reported as needing a machine with that many cores and left out of the choice. linear: searched on the cores the machine has, its saturated rate scaled by its cores over those, every such figure marked extrapolated beside the measured points it came from.",
  },

  // Report
  REPORTS_DIR: {
    type: 'path',
    default: 'reports',
    doc: 'Root of the report folders (reports/<scenario>/<run-id>/), relative to the working directory. Checked before anything starts: a folder (or one that can be created) that is writable with at least 64 MB free.',
  },
  ARCHIVE: {
    type: 'enum',
    values: ['none', 'git'],
    default: 'none',
    doc: 'git: commit the report folder to the git repository REPORTS_DIR is in (one is created there if none).',
  },
};

module.exports = { KEYS, defaultCores };
