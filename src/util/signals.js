'use strict';
// Ctrl-C, SIGTERM and SIGHUP during a run or a session: the first aborts it
// (teardown and the report follow), a second exits at once.

/**
 * Aborts controller on the first signal; exits on the second.
 * @param {AbortController} controller
 * @param {(line:string)=>void} log
 * @param {string} what what is being stopped ("the run", "the A/B session")
 * @returns {() => void} removes the handlers
 */
function trapSignals(controller, log, what = 'the run') {
  let interrupts = 0;
  const handlers = {};
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    handlers[name] = () => {
      interrupts++;
      if (interrupts === 1) {
        log(`${name}: stopping ${what}, tearing down and writing the report (press again to force)`);
        controller.abort(new Error(`interrupted by ${name}`));
      } else {
        log(`${name} again: exiting now; processes may be left behind`);
        process.exit(130);
      }
    };
    process.on(name, handlers[name]);
  }
  return () => {
    for (const [name, fn] of Object.entries(handlers)) process.off(name, fn);
  };
}

module.exports = { trapSignals };
