'use strict';
// Polls until a probe says done, logging the last state it reported every
// 10 s; shared by the chains' sync waits.

const { sleep } = require('./time');

/**
 * Calls look() every intervalMs until it returns {done: true, value}. Each look
 * returns {done, state, value}; a look that throws counts as "no answer". After
 * timeoutS, throws Error(failMessage(lastState)).
 * @returns {Promise<{seconds:number, value:any}>}
 */
async function pollUntil(look, { timeoutS, signal, log = () => {}, label, failMessage, intervalMs = 500 }) {
  const started = Date.now();
  const deadline = started + timeoutS * 1000;
  let lastState = 'no answer yet';
  let lastLog = 0;
  while (Date.now() < deadline) {
    try {
      const r = await look();
      if (r.done) return { seconds: (Date.now() - started) / 1000, value: r.value };
      lastState = r.state;
    } catch (err) {
      if (signal && signal.aborted) throw signal.reason;
      lastState = `no answer: ${err.message}`;
    }
    if (Date.now() - lastLog > 10000) {
      log(`${label} (${Math.round((Date.now() - started) / 1000)} s of ${timeoutS} s): ${lastState}`);
      lastLog = Date.now();
    }
    await sleep(intervalMs, signal);
  }
  throw new Error(failMessage(lastState));
}

module.exports = { pollUntil };
