'use strict';
// The lean engine's request timeouts: rather than one timer per request, each
// pool runs one sweep, a few times per timeout, that expires every request
// sent before now - timeoutMs.

/** Calls expire(before) periodically (never keeping the process alive); returns the timer for clearInterval. */
function timeoutSweep(timeoutMs, now, expire) {
  const every = Math.max(10, Math.min(250, timeoutMs / 4));
  const timer = setInterval(() => expire(now() - timeoutMs), every);
  timer.unref();
  return timer;
}

module.exports = { timeoutSweep };
