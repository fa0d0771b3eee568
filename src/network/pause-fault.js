// @ts-check
'use strict';
// FAULT=pause-node@<at>s:<for>s: a measured node cut from the chain while the
// chain goes on. The engine-API driver hands it no block and every network node
// drops it as a peer (admin_removePeer), so nothing reaches it, as when its
// consensus client or its network is down; it goes on serving, from the head it
// has (its answers grow stale). Then its peers dial it again and the driver
// hands it the network's head: it lacks the blocks it missed, answers SYNCING
// and fetches them from its peers. The catch-up (the gap, the seconds and blocks
// to reach the network's head again, their rate) is read from the head watch's
// looks. FAULT_LOAD=on: the pause falls in the first measured window, its
// workload running; off: in a phase of its own after the windows, no request.

const { rpcCall } = require('../util/rpc');
const { sleep } = require('../util/time');
const { parseFault } = require('../util/faults');

/** How long a restored node is given to reach the network's head: the pause's length times this, 60 s at least. */
const CATCH_UP_FACTOR = 5;
const CATCH_UP_MIN_S = 60;

/**
 * The fault's plan for a network, or null when the scenario asks for none: the victim is the node under test, or a
 * fleet's last replica.
 * @param {import('../contracts').Scenario} s
 * @param {{driver: any, heads: any, peers: {name: string, rpcUrl: string}[], victim: {name: string}, enode: string,
 *   log: (m: string) => void, signal?: AbortSignal}} o signal: the run's
 */
function pauseFault(s, { driver, heads, peers, victim, enode, log, signal: runSignal }) {
  const fault = parseFault(s.FAULT);
  if (!fault || !('kind' in fault) || fault.kind !== 'pause-node') return null;
  const state = {
    record: /** @type {any} */ (null),
    running: /** @type {Promise<void>|null} */ (null),
    windows: 0, // FAULT_LOAD=on: the measured windows opened so far; the pause is the first one's
    setAside: false, // that window was set aside, to be measured again
  };
  // the network's teardown (stop()) or the run's end (Ctrl-C, a failure) ends a pause under way: no wait, no restore
  const ended = new AbortController();
  const until = (signal) =>
    AbortSignal.any([ended.signal, ...(signal ? [signal] : []), ...(runSignal ? [runSignal] : [])]);

  const { cut, restore } = cutAndRestore(s, fault, state, { driver, peers, victim, enode, log });
  const carryOut = (atMs, signal) =>
    (state.running = (async () => {
      const sig = until(signal);
      await sleep(Math.max(0, atMs - Date.now()), sig);
      await cut();
      await sleep(fault.for_s * 1000, sig).finally(() => (ended.signal.aborted ? null : restore()));
    })());

  return {
    fault,
    /** Ends a pause under way (the network is being torn down). */
    stop: () => ended.abort(),
    /** FAULT_LOAD=on: a measured window opened now; the first one gets the pause. */
    windowStarted(signal) {
      state.windows++;
      if (s.FAULT_LOAD !== 'on' || state.running) return;
      carryOut(Date.now() + fault.at_s * 1000, signal).catch(() => {});
    },
    /**
     * A window set aside to be measured again (its generator started late): when it was the pause's, the window kept
     * has no pause, and the record says so (the pause is once a run: a second would find the node behind already).
     */
    windowCancelled() {
      if (s.FAULT_LOAD === 'on' && state.running && state.windows === 1) state.setAside = true;
    },
    /**
     * After the measured windows: with FAULT_LOAD=off the pause now, no request sent; then the wait for the catch-up.
     * Returns run.json's fault record (null when no window reached the pause).
     */
    async afterWindows(signal) {
      if (s.FAULT_LOAD === 'off' && !state.running) {
        log(`FAULT: ${s.FAULT} with no load: ${victim.name} is cut ${fault.at_s} s from now`);
        carryOut(Date.now() + fault.at_s * 1000, signal);
      }
      if (!state.running) return null;
      await state.running;
      const catchUpFigures = await awaitCatchUp(heads, victim.name, state.record, fault, signal, log);
      return { ...state.record, ...(state.setAside ? { in_window_set_aside: true } : {}), catch_up: catchUpFigures };
    },
  };
}

/** The pause's two steps: the node cut (no blocks, no peers), then restored; each writes its part of state.record. */
function cutAndRestore(s, fault, state, { driver, peers, victim, enode, log }) {
  const cut = async () => {
    driver.cut(victim.name);
    const dropped = await Promise.all(
      peers.map((p) => rpcCall(p.rpcUrl, 'admin_removePeer', [enode]).then(Boolean, () => false)),
    );
    state.record = {
      kind: 'pause-node',
      node: victim.name,
      load: s.FAULT_LOAD,
      for_s: fault.for_s,
      cut_ms: Date.now(),
      head_at_cut: driver.netHead().number,
      peers_dropped: dropped.filter(Boolean).length,
    };
    log(`FAULT: ${victim.name} cut from the chain (no blocks, no peers) for ${fault.for_s} s`);
  };
  const restore = async () => {
    await Promise.all(peers.map((p) => rpcCall(p.rpcUrl, 'admin_addPeer', [enode]).catch(() => null)));
    state.record.restored_ms = Date.now();
    state.record.head_at_restore = driver.netHead().number;
    const handed = await driver.restore(victim.name).catch((err) => ({ status: `failed: ${err.message}` }));
    state.record.restore_status = handed ? handed.status : null;
    log(`FAULT: ${victim.name} handed the network's head again (${state.record.restore_status}); catching up`);
  };
  return { cut, restore };
}

/** Waits until the restored node's looks reach the network's head, or CATCH_UP_FACTOR x the pause; then the figures. */
async function awaitCatchUp(heads, name, record, fault, signal, log) {
  const limitS = Math.max(CATCH_UP_MIN_S, CATCH_UP_FACTOR * fault.for_s);
  const deadline = record.restored_ms + limitS * 1000;
  for (;;) {
    const c = heads.catchUp(name, record.restored_ms);
    if ((c && c.caught_up) || Date.now() > deadline) {
      if (c && !c.caught_up) log(`FAULT: ${name} had not reached the network's head ${limitS} s after its restore`);
      return c ? { ...c, waited_up_to_s: limitS } : null;
    }
    await sleep(250, signal);
  }
}

module.exports = { pauseFault, CATCH_UP_FACTOR, CATCH_UP_MIN_S };
