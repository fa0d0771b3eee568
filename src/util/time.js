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

/** Sleeps until the wall clock reaches epochMs. */
const sleepUntil = (epochMs, signal) => sleep(epochMs - Date.now(), signal);

module.exports = { sleep, sleepUntil };
