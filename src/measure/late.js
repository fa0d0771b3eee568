'use strict';
// When a window measured no load at its start and is measured again
// (measure/phases.js): its generator's first request left late, or the
// scenario's FAULT was held back in it on a record that lagged.

/**
 * A generator whose first request left this long after the window opened started late (a replay's first call is due at
 * the opening).
 */
const LATE_START_MS = 500;

/** Whether a generator whose first request in w left at firstMs (null: none) started late: w is measured again. */
function startedLate(firstMs, w) {
  return firstMs === null || firstMs > w.start + LATE_START_MS;
}

/**
 * A window whose FAULT the fleet's hook held back on the generator's record, which lagged (the load was on time after
 * all), lacks the fault the scenario asks for: it is measured again like a late one, where the caller can
 * (mayMeasureAgain); otherwise the run's warning says the fault was not carried out.
 */
function throwIfFaultHeldBack(explained, mayMeasureAgain) {
  if (!mayMeasureAgain || !explained.fleet || !explained.fleet.faultHeldBack) return;
  const err = new Error(
    "the scenario's FAULT was held back: the load generator's record, which lagged, showed no load at its time",
  );
  err.lateStart = true;
  throw err;
}

module.exports = { LATE_START_MS, startedLate, throwIfFaultHeldBack };
