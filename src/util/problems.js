'use strict';
// How a list of problems (an invalid scenario or plan) is printed: scrubbed of
// the run's secrets, control characters escaped (a binary file given as a
// scenario must not write raw escape sequences to the terminal), and at most
// MAX_LISTED of them, then how many more there are.

const { scrub } = require('./scrub');

const MAX_LISTED = 50;
const MAX_LINE = 300;

/** Control characters (C0, DEL, C1) as \xNN; lines longer than MAX_LINE cut. */
function escapeControl(text) {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const control = /[\u0000-\u001f\u007f-\u009f]/g;
  const escaped = String(text).replace(control, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return escaped.length > MAX_LINE ? `${escaped.slice(0, MAX_LINE)}...` : escaped;
}

/** The problems as indented lines, capped. */
function formatProblems(errors, max = MAX_LISTED) {
  const lines = errors.slice(0, max).map((e) => `  ${escapeControl(scrub(e))}`);
  if (errors.length > max) lines.push(`  ... and ${errors.length - max} more`);
  return lines.join('\n');
}

/** Writes "chainperf: <headline>" and the problems to standard error. */
function reportProblems(headline, errors, stream = process.stderr) {
  stream.write(`chainperf: ${headline}\n${formatProblems(errors)}\n`);
}

module.exports = { formatProblems, reportProblems, escapeControl, MAX_LISTED };
