'use strict';

/** Resolves after ms, or rejects with the signal's reason when it aborts first. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(signal.reason);
    const t = setTimeout(done, Math.max(0, ms));
    function done() {
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(t);
      reject(signal.reason);
    }
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Sleeps until the wall clock reaches epochMs. A Node timer counts from the event loop's cached time, which can
 * lag the clock, so it may fire a millisecond early: sleep again until the clock has truly reached epochMs.
 */
async function sleepUntil(epochMs, signal) {
  while (Date.now() < epochMs) await sleep(epochMs - Date.now(), signal);
}

/** A signal that aborts after ms, or sooner when signal (if any) does: a request's own limit within the caller's. */
function timeoutSignal(ms, signal) {
  const timeout = AbortSignal.timeout(ms);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

module.exports = { sleep, sleepUntil, timeoutSignal };
