'use strict';
// COLD=yes: each measured window starts with the node cold. The node is
// stopped (its own caches go with its process), its data files are written
// out and evicted from the kernel's page cache (posix_fadvise DONTNEED, via
// `dd iflag=nocache`), and it is started again and waited for until synced
// with its head advancing. Only the node's data leaves the page cache: the
// load generator's code and everything else on the machine stay where they
// are (dropping the whole page cache made the generator start from disk too,
// late for its window on a busy machine). Then, before the window, the node's
// CPU is watched until the work of its start is over (geth initialises its KZG
// library in the background, a few CPU-seconds that would otherwise fall in
// the window): measure/edges.js measureIdle, over 2 s at a time (4 s with cAdvisor).

const { log } = require('../util/log');
const { evictDir, mib } = require('../platform/pagecache');
const { measureIdle, cpuRateOf } = require('./edges');

/**
 * The node watched for this long at a time after its restart, until its start-up work is over; 4 s where cAdvisor
 * samples it (every 1 to 2 s: two samples inside, as an idle baseline needs in the compose runtime).
 */
const settleSeconds = (stack) => (stack.cpu && stack.cpu.sampled ? 4 : 2);

/**
 * Restarts the node cold before a window.
 * @param {{s, stack, chain, signal}} ctx the run's measure context (stack.nodeDataDir: the node's data on this host)
 * @returns {Promise<{seconds:number, evicted:object, settle:object}>} how long the restart took, until synced; what
 * was evicted; the node's CPU watched after it (`settle`: the rate over the last look, how many looks, settled or not)
 */
async function coldRestart({ s, stack, chain, signal }, evict = evictDir) {
  if (!stack.restartNode || !stack.nodeDataDir)
    throw new Error(`COLD=yes: the ${stack.runtime} runtime cannot restart the node cold`);
  const from = Date.now();
  log('COLD=yes: stopping the node, evicting its data from the page cache, starting it again');
  let evicted = null;
  await stack.restartNode(async () => {
    try {
      evicted = evict(stack.nodeDataDir);
    } catch (err) {
      throw new Error(
        `COLD=yes: the node's data could not be evicted from the page cache (${err.code || err.message})`,
      );
    }
  });
  await chain.waitForSync(stack.rpcUrl, { timeoutS: s.SYNC_TIMEOUT_S, signal, log });
  const seconds = (Date.now() - from) / 1000;
  const watched = await measureIdle(stack, settleSeconds(stack), signal, "the node's CPU after its restart");
  const settle = {
    cpu_s_per_s: watched.cpu_s === null ? null : Number(cpuRateOf(watched).toFixed(4)),
    looks: (watched.settling || []).length + 1,
    settled: watched.settled !== false,
  };
  log(
    `COLD=yes: evicted ${evicted.files} files of node data (${mib(evicted.bytes)}; in the page cache before ${mib(evicted.resident_before)}, after ${mib(evicted.resident_after)}); the node is back and synced after ${seconds.toFixed(1)} s`,
  );
  return { seconds, evicted, settle };
}

module.exports = { coldRestart };
