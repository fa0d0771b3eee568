'use strict';

/**
 * stack.teardown for a runtime: runs the cleanups it registered in reverse
 * order, each once; one that fails is logged and the others still run.
 */
function attachTeardown(stack, log) {
  stack.cleanups = stack.cleanups || [];
  stack.teardownErrors = [];
  stack.teardown = async () => {
    for (const fn of stack.cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        log(`teardown: ${err.message}`);
        stack.teardownErrors.push(err.message); // for the report's warnings
      }
    }
    stack.cleanups = [];
  };
  return stack;
}

module.exports = { attachTeardown };
