// @ts-check
'use strict';
// polkadot-omni-node: a real Substrate node for parachain chain specs (its
// runtime comes from the spec). Built from crates.io with `cargo install`
// into the cache on first use (about 44 minutes and 5.5 GB of build output
// on 2 cores, once), with SKIP_WASM_BUILD=1: the runtime is the spec's, and
// the wasm32 target the build would otherwise compile for is not installed
// here. Started with --dev-block-time, so a single node authors a block every
// DEV_BLOCK_TIME_S seconds without a relay chain.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('../install/cache');
const { runWithProgress } = require('../install/progress');
const { withCacheLock } = require('../install/lock');
const { ensureDebianTool, onPath } = require('../install/debian');
const { substrateArgs, versionOf } = require('./substrate-cli');

const CRATE = 'polkadot-omni-node';

function installRoot(scenario) {
  return cacheDir(CRATE, scenario.CLIENT_VERSION);
}

/** The cached binary for a version, or the CLIENT_BIN the scenario names. */
function binaryPath(scenario) {
  return scenario.CLIENT_BIN || path.join(installRoot(scenario), 'bin', CRATE);
}

/** libclang for bindgen (Debian libclang-dev); true when a libclang.so is found. */
function hasLibclang() {
  if (process.env.LIBCLANG_PATH) return true;
  // clang-sys loads an unversioned libclang.so or libclang-N.so (Debian's libclang-dev), not the runtime's
  // libclang-N.so.1.
  const dirs = ['/usr/lib', '/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/local/lib'];
  try {
    for (const d of fs.readdirSync('/usr/lib')) if (/^llvm-\d+$/.test(d)) dirs.push(path.join('/usr/lib', d, 'lib'));
  } catch {
    // no /usr/lib to look in
  }
  return dirs.some((d) => {
    try {
      return fs.readdirSync(d).some((f) => /^libclang(-\d+(\.\d+)*)?\.so$/.test(f));
    } catch {
      return false;
    }
  });
}

/** What building needs: cargo (no Debian package is new enough), protoc, clang and libclang. */
async function buildPrerequisites(scenario, log) {
  const cargo =
    onPath('cargo') ||
    (process.env.HOME && fs.existsSync(path.join(process.env.HOME, '.cargo', 'bin', 'cargo'))
      ? path.join(process.env.HOME, '.cargo', 'bin', 'cargo')
      : null);
  if (!cargo) {
    throw new Error(
      `${CRATE} ${scenario.CLIENT_VERSION} is not built yet and cargo is not installed: install Rust (https://rustup.rs, then cargo on PATH), or set CLIENT_BIN to a ${CRATE} binary`,
    );
  }
  await ensureDebianTool('protoc', 'protobuf-compiler', log);
  await ensureDebianTool('clang', 'clang', log);
  if (!hasLibclang()) {
    if (!(onPath('apt-get') && process.getuid && process.getuid() === 0))
      throw new Error(
        'libclang is not installed: install it (Debian: apt-get install libclang-dev), or set LIBCLANG_PATH',
      );
    await runWithProgress('apt-get', ['install', '-y', '--no-install-recommends', 'libclang-dev'], {
      label: 'installing libclang-dev from Debian',
      step: 'apt-libclang-dev',
      note: 'once',
      env: { DEBIAN_FRONTEND: 'noninteractive' },
      log,
    });
  }
  return cargo;
}

async function ensureBinary(scenario, log) {
  const bin = binaryPath(scenario);
  if (fs.existsSync(bin)) return bin;
  if (scenario.CLIENT_BIN) throw new Error(`CLIENT_BIN: no such file: ${bin}`);
  await withCacheLock(
    `${CRATE}-${scenario.CLIENT_VERSION}`,
    () => (fs.existsSync(bin) ? null : cargoInstall(scenario, bin, log)),
    {
      log,
      what: `building ${CRATE} ${scenario.CLIENT_VERSION}`,
    },
  );
  return bin;
}

async function cargoInstall(scenario, bin, log) {
  const cargo = await buildPrerequisites(scenario, log);
  const root = installRoot(scenario);
  fs.mkdirSync(root, { recursive: true });
  await runWithProgress(
    cargo,
    [
      'install',
      CRATE,
      '--version',
      scenario.CLIENT_VERSION,
      '--locked',
      '--root',
      root,
      '--target-dir',
      path.join(root, 'target'),
    ],
    {
      label: `building ${CRATE} ${scenario.CLIENT_VERSION} into ${root}`,
      step: `${CRATE}-${scenario.CLIENT_VERSION}`,
      usual: 44 * 60,
      note: 'from crates.io; 5.5 GB of build output, once',
      env: { SKIP_WASM_BUILD: '1' },
      log,
    },
  );
  if (!fs.existsSync(bin)) throw new Error(`cargo install finished but ${bin} is missing`);
  fs.rmSync(path.join(root, 'target'), { recursive: true, force: true }); // 5.5 GB the binary no longer needs
}

function binaryVersion(bin) {
  return versionOf(execFileSync(bin, ['--version'], { encoding: 'utf8' }));
}

/**
 * The command line for a scenario.
 * @param {object} s resolved scenario
 * @param {{dataDir:string, ports:{rpc:number, metrics:number, p2p:number}, chainSpec:string, external?:boolean}} where
 */
function command(s, where) {
  return {
    args: [...substrateArgs(s, where), '--dev-block-time', String(s.DEV_BLOCK_TIME_S * 1000)],
    rpcUrl: `ws://127.0.0.1:${where.ports.rpc}`,
    metrics: { target: `127.0.0.1:${where.ports.metrics}`, path: '/metrics' },
  };
}

/** @type {import('../contracts').Client} */
const client = {
  name: CRATE,
  summary: 'a real Substrate node for parachain specs, built from crates.io into the cache (about 44 minutes once)',
  chains: ['polkadot', 'kusama', 'substrate'],
  defaults: { CLIENT_VERSION: '0.24.0', DB_ENGINE: 'rocksdb', DEV_BLOCK_TIME_S: 2 },
  dbEngines: ['rocksdb', 'paritydb'],
  /** STATE profiles (src/chains/substrate/state.js): the host runtime (no compose service yet). */
  stateRuntimes: ['host'],
  kind: 'node',
  /**
   * Counters in the node's own metrics: no process CPU (it comes from the cgroup or the PID), requests served by
   * method.
   */
  metrics: { cpu: null, requests: 'substrate_rpc_calls_finished', requestsByLabel: 'method' },
  binaryPath,
  ensureBinary,
  binaryVersion,
  command,
};

module.exports = client;
