'use strict';
// Progress goes to standard error, so that standard output carries only what
// scripts read (the report folder, on the last line). A run also copies its
// log into the report folder.

const fs = require('node:fs');
const { scrub } = require('./scrub');

let logFile = null;

function stamp() {
  return new Date().toISOString().slice(11, 19);
}

function log(message) {
  const line = scrub(`[chainperf ${stamp()}] ${message}`); // the output boundary: no secret of the run leaves
  process.stderr.write(`${line}\n`);
  if (!logFile) return;
  try {
    fs.appendFileSync(logFile, `${line}\n`);
  } catch (err) {
    // A full or lost filesystem must not turn a log line into a crash: the run goes on, logging to stderr only.
    const file = logFile;
    logFile = null;
    process.stderr.write(
      `[chainperf ${stamp()}] cannot write ${scrub(file)} (${err.code || err.message}): logging to standard error only\n`,
    );
  }
}

/** Also append every log line to file (null stops). */
function logTo(file) {
  logFile = file;
}

/** The file log lines are appended to now (a run's run.log), or null. */
function logFileNow() {
  return logFile;
}

module.exports = { log, logTo, logFileNow };
