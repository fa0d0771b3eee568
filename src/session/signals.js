'use strict';
// A run's guard against signals and unexpected errors, kept from the start of
// the run until its report is written. The first SIGINT/SIGTERM/SIGHUP stops
// the run (it tears down and writes a failed report); a signal that arrives
// while tearing down or writing the report is noted and waited through. Only
// the FORCE_AT-th signal exits at once: the load generator is killed, and what
// is left (compose project, cgroups, processes, work folder) is printed with
// the command that removes each. An unhandled rejection or uncaught exception
// becomes a failed run with its teardown, not a crash without run.json.

const fs = require('node:fs');
const { killGenerators } = require('../workload/artillery');

/** The signal count that exits at once, whatever is under way. */
const FORCE_AT = 3;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** What a run leaves when it exits now: the stack's own leftovers, then the work folder. */
function leftoversOf(stack, workDir) {
  const out = [];
  for (const fn of (stack && stack.leftovers) || []) {
    try {
      const item = fn();
      if (item) out.push(item);
    } catch {
      // a leftover that cannot be described is not worth a crash while exiting
    }
  }
  if (workDir && fs.existsSync(workDir))
    out.push({ what: `work folder ${workDir}`, command: `rm -rf ${workDir}`, dir: workDir });
  return out;
}

/**
 * @param {object} o
 * @param {(line:string)=>void} o.log
 * @param {(err:Error)=>void} o.abort stops the run with err as its reason
 * @param {()=>{what:string, command:string}[]} o.leftovers what would be left by exiting now
 * @param {(code:number)=>void} [o.exit] process.exit, replaceable in tests
 */
function guardRun({ log, abort, leftovers, exit = (code) => process.exit(code) }) {
  let count = 0;
  let stage = 'run'; // run | teardown | report
  let stopping = false;
  const late = []; // what happened after the measurement was over, for the report's warnings
  const force = (name) => {
    log(`${name} (${count} signals): exiting now without finishing the teardown`);
    killGenerators();
    const left = leftovers();
    if (!left.length) log('nothing was left behind');
    for (const l of left) log(`left: ${l.what}; remove it with: ${l.command}`);
    exit(130);
  };
  const onSignal = (name) => {
    count++;
    if (count >= FORCE_AT) return force(name);
    if (stage === 'run' && !stopping) {
      stopping = true;
      log(
        `${name}: stopping the run, tearing down and writing the report (send ${FORCE_AT - count} more to force an exit)`,
      );
      return abort(new Error(`interrupted by ${name}`));
    }
    const doing = { run: 'already stopping', teardown: 'still tearing down', report: 'writing the report' }[stage];
    log(
      `${name}: ${doing}; chainperf exits once the report is written (send ${FORCE_AT - count} more to force an exit, leaving what is not torn down)`,
    );
    if (stage !== 'run')
      late.push(
        `${name} received while ${stage === 'teardown' ? 'tearing down' : 'writing the report'}: the teardown was completed and the report written`,
      );
  };
  const onUnexpected = (err) => {
    const message = err && err.message ? err.message : String(err);
    log(`unexpected error: ${err && err.stack ? err.stack.split('\n').slice(0, 3).join(' / ') : message}`);
    if (stage === 'run') {
      if (!stopping) abort(new Error(`unexpected error: ${message}`));
      stopping = true;
    } else
      late.push(`unexpected error while ${stage === 'teardown' ? 'tearing down' : 'writing the report'}: ${message}`);
  };
  const handlers = Object.fromEntries(SIGNALS.map((name) => [name, () => onSignal(name)]));
  for (const [name, fn] of Object.entries(handlers)) process.on(name, fn);
  process.on('unhandledRejection', onUnexpected);
  process.on('uncaughtException', onUnexpected);
  return {
    /** The run is over: what follows is teardown. */
    tearingDown() {
      stage = 'teardown';
    },
    /** The stack is down: what follows is writing the report. */
    reporting() {
      stage = 'report';
    },
    /** Warnings for the report: signals and errors that came once the run was over. */
    late: () => [...late],
    /** The report is written: signals behave as usual again. */
    release() {
      for (const [name, fn] of Object.entries(handlers)) process.off(name, fn);
      process.off('unhandledRejection', onUnexpected);
      process.off('uncaughtException', onUnexpected);
    },
  };
}

module.exports = { guardRun, leftoversOf, FORCE_AT };
