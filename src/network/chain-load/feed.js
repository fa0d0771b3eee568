// @ts-check
'use strict';
// Chain traffic (CHAIN_LOAD) for a local network: a child process
// (feed-main.js) that sends a profile's transactions through the network's
// nodes, never through the node under test, which gets them by gossip and
// its blocks from the network. The child runs in the cgroup it is given or
// pinned with taskset to the cores it is given (the network's, never the
// node's), so its CPU is its own and is read from there; its figures come
// back over the IPC channel every second. It ends with stop(), and by itself
// when this process goes, however it goes.

const fs = require('node:fs');
const path = require('node:path');
const { spawnInGroup } = require('../../platform/cgroup');
const { processId } = require('../../util/proc');

const MAIN = path.join(__dirname, 'feed-main.js');
const CLK_TCK = 100; // USER_HZ on Linux
const STOP_WAIT_MS = 20000;
const KEEP_BLOCKS = 20000; // the newest blocks seen, for the windows' figures

/** utime + stime (and those of waited-for children) of pid in seconds, or null when it is gone. */
function procCpuSeconds(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** The child: in group (joined before exec) and, unless the group pins it, under taskset on cpus. */
function spawnFeed(group, cpus) {
  const argv = [process.execPath, MAIN];
  const pinned = group && group.pinned;
  const cmd = !pinned && cpus ? ['taskset', '-c', cpus, ...argv] : argv;
  return spawnInGroup(group, cmd, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
}

/** Resolves once the child says it is ready; rejects on its error, its exit or the signal. */
function untilReady(child, { signal, stderrTail }) {
  return new Promise((resolve, reject) => {
    const done = (fn, x) => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (signal) signal.removeEventListener('abort', onAbort);
      fn(x);
    };
    const onMessage = (m) => {
      if (m.type === 'ready') done(resolve, m.setup);
      else if (m.type === 'error') done(reject, new Error(`chain load: ${m.message}`));
    };
    const onExit = (code, sig) =>
      done(
        reject,
        new Error(`chain load: its process exited (${sig || `status ${code}`}) before it was ready${stderrTail()}`),
      );
    const onAbort = () => {
      child.kill('SIGKILL');
      done(reject, signal.reason);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    if (signal) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
}

/** What the child says, kept: its newest stats, every block it saw (the newest KEEP_BLOCKS), its stderr's tail. */
function listen(child, log) {
  const heard = { last: null, blocksSeen: [], stderr: '' };
  child.stderr.on('data', (d) => (heard.stderr = (heard.stderr + d).slice(-4000)));
  const stderrTail = () => (heard.stderr.trim() ? `: ${heard.stderr.trim().split('\n').slice(-5).join(' | ')}` : '');
  child.on('message', (m) => {
    if (m.type === 'log') log(`chain load: ${m.message}`);
    if (m.type === 'stats' || m.type === 'stopped') {
      heard.last = m.stats;
      heard.blocksSeen = heard.blocksSeen.concat(m.blocks);
      if (heard.blocksSeen.length > KEEP_BLOCKS) heard.blocksSeen = heard.blocksSeen.slice(-KEEP_BLOCKS);
    }
  });
  child.on('error', (err) => (heard.stderr += `\n${err.message}`)); // a send to a child already gone: its exit says more
  child.on('exit', (code, sig) => {
    if (code && heard.last) log(`chain load: its process exited (${sig || `status ${code}`})${stderrTail()}`);
  });
  return { heard, stderrTail, stats: () => (heard.last ? { ...heard.last, blocks_seen: heard.blocksSeen } : null) };
}

/** The child's CPU seconds: its group's, or its /proc/PID/stat; the last reading once it is gone. */
function cpuReader(group, pid) {
  let cpuLast = 0;
  return () => {
    let now = null;
    try {
      now = group ? group.cpu().total_s : procCpuSeconds(pid);
    } catch {
      // the group is gone: its last reading stands
    }
    if (now !== null && now >= cpuLast) cpuLast = now;
    return cpuLast;
  };
}

/**
 * Starts the feed and resolves once its senders are funded and its contracts mined, the sends under way.
 * profile: readChainLoad's (not quiet); urls: the network nodes' RPC URLs, the first the one that builds the blocks;
 * funderKey: a funded account's key (the dev account, or a STATE profile's signer); seed: the scenario's SEED; state:
 * {accounts, slots, distribution} of the STATE profile, or null on a dev genesis; cpus: the cores to pin to when
 * group does not pin (taskset -c); group: a cgroup of the feed's own, or null.
 * Returns {stats(), cpuSeconds(), stop(), pid, processId, setup}: stats() is the newest figures (sent once a second,
 * the first before the start resolves) with blocks_seen (every block since the start, newest KEEP_BLOCKS);
 * cpuSeconds() the child's CPU (its group's, or its /proc/PID/stat); stop() ends the sends, waits for the child and
 * returns the last stats. setup: {token, writer, senders, setup_s}.
 * @param {{profile: any, urls: string[], funderKey: string, seed: number|string,
 *   state: {accounts: number, slots: number, distribution: string}|null, cpus?: string|null, group?: any,
 *   log: (m: string) => void, signal?: AbortSignal, senders?: number}} o
 */
async function startChainLoad(o) {
  const { profile, urls, funderKey, seed, state, cpus = null, group = null, log, signal, senders } = o;
  if (!profile || profile.quiet) throw new Error('startChainLoad: a quiet profile has no feed');
  if (!urls.length) throw new Error('startChainLoad: no network node to send through');
  const child = spawnFeed(group, cpus);
  const pid = child.pid;
  const exited = new Promise((r) => child.once('exit', r));
  const { stderrTail, stats } = listen(child, log);
  child.send({ type: 'start', config: { profile, urls, funderKey, seed, state, senders } });
  const setup = await untilReady(child, { signal, stderrTail });
  const where = group ? `in cgroup ${group.name}` : `on cpus ${cpus}`;
  log(
    `chain load: CHAIN_LOAD=${profile.name}: ${(profile.target_gas_per_s / 1e6).toFixed(2)} Mgas/s, ${profile.target_gas_per_block} gas a block every ${profile.block_time_s} s, through ${urls.length} network node(s); its process ${pid} ${where}`,
  );
  const cpuSeconds = cpuReader(group, pid);
  /** Asks the child to pause or resume its sends: true once it says it did, false when it is (or goes) away. */
  const ask = (type, answer) =>
    new Promise((resolve) => {
      if (!child.connected) return resolve(false);
      const done = (ok) => {
        child.off('message', on);
        child.off('disconnect', gone);
        resolve(ok);
      };
      const on = (m) => m.type === answer && done(true);
      const gone = () => done(false); // the child exited before it answered
      child.on('message', on);
      child.once('disconnect', gone);
      child.send({ type });
    });
  return {
    pid,
    processId: processId(pid),
    setup,
    stats,
    cpuSeconds,
    pause: () => ask('pause', 'paused'),
    resume: () => ask('resume', 'resumed'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        cpuSeconds();
        if (child.connected) child.send({ type: 'stop' });
        const t = setTimeout(() => child.kill('SIGKILL'), STOP_WAIT_MS);
        await exited;
        clearTimeout(t);
      }
      return stats();
    },
  };
}

module.exports = { startChainLoad, procCpuSeconds, MAIN };
