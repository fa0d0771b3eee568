'use strict';
// The Docker engine lost in the middle of a compose run: said in one plain
// sentence (never Compose's Python traceback), with the command to run once
// the engine is back to remove what the run left.

const docker = require('../platform/docker');

/** Whether the engine answers its ping now (not cached, unlike engineVersionSync). */
async function engineAnswers(timeoutMs = 3000) {
  try {
    return (await docker.engine('GET', '/_ping', { timeoutMs })).status === 200;
  } catch {
    return false;
  }
}

/** Compose's output without Python tracebacks and their frames: the lines a reader can use. */
function withoutTraceback(out) {
  const lines = String(out).split('\n');
  const kept = [];
  let inTrace = false;
  for (const l of lines) {
    if (/^Traceback \(most recent call last\)/.test(l) || /^During handling of the above exception/.test(l)) {
      inTrace = true;
      continue;
    }
    if (inTrace && (/^\s/.test(l) || !l.trim())) continue; // a frame or its source line
    inTrace = false;
    if (/^\[\d+\] Failed to execute script/.test(l)) continue; // PyInstaller's own trailer
    if (l.trim()) kept.push(l.trim());
  }
  return kept;
}

/** The error for an engine that stopped answering, naming the project left and the command that removes it. */
function engineLostError(project, removeCommand) {
  return new Error(
    `the Docker engine stopped answering (${docker.SOCKET}); compose project ${project} is left behind: once the engine is back, run: ${removeCommand}`,
  );
}

/** The error for a failed `compose down`: the engine lost, or Compose's own words without a traceback. */
async function downFailedError(project, result, removeCommand) {
  if (!(await engineAnswers())) return engineLostError(project, removeCommand);
  const why = withoutTraceback(result.out).slice(-2).join(' / ');
  return new Error(
    `compose down exited with status ${result.code}${why ? `: ${why}` : ''}; to remove the project, run: ${removeCommand}`,
  );
}

module.exports = { engineAnswers, withoutTraceback, engineLostError, downFailedError };
