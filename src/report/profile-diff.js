'use strict';
// compare with CPU profiles on both sides (NODE_PROFILE=cpu): the functions
// whose share of the node's CPU samples changed most from A to B, and a
// differential flame graph (inferno-diff-folded, then inferno-flamegraph:
// B's stacks, coloured red where a frame's share grew and blue where it shrank).

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { parseFolded, diffFunctions } = require('../measure/folded');
const { infernoPrograms, runInferno } = require('../install/inferno');

/** The folded stacks of a run folder's profile, or null when it has none. */
function foldedOf(dir, run) {
  const p = run && run.profile;
  if (!p || !p.folded) return null;
  const file = path.join(dir, p.folded);
  return fs.existsSync(file) ? file : null;
}

/** The difference between two runs' profiles, or null unless both have one. */
function profileDiff(dirA, runA, dirB, runB, n = 20) {
  const [a, b] = [foldedOf(dirA, runA), foldedOf(dirB, runB)];
  if (!a || !b) return null;
  const d = diffFunctions(parseFolded(fs.readFileSync(a, 'utf8')), parseFolded(fs.readFileSync(b, 'utf8')), n);
  return {
    a_folded: a,
    b_folded: b,
    a_profiler: runA.profile.profiler,
    b_profiler: runB.profile.profiler,
    ...d,
    flamegraph: null,
  };
}

/** Writes the differential flame graph into outDir; returns its file name, or the reason there is none. */
function writeDiffFlamegraph(diff, outDir) {
  const programs = infernoPrograms();
  if (!programs) return { error: 'inferno is not built here (a run with NODE_PROFILE=cpu builds it)' };
  const folded = execFileSync(programs['inferno-diff-folded'], ['--normalize', diff.a_folded, diff.b_folded], {
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
  if (!folded.trim()) return { error: 'the two profiles hold no samples' };
  const svg = runInferno(
    programs,
    'inferno-flamegraph',
    [
      '--title',
      'Node CPU: B against A',
      '--subtitle',
      "B's stacks; red: a larger share of samples in B, blue: smaller (A scaled to B's total)",
      '--countname',
      'samples',
    ],
    folded,
  );
  fs.writeFileSync(path.join(outDir, 'profile-diff.svg'), svg);
  return { file: 'profile-diff.svg' };
}

/** The markdown section of compare.md. */
function profileDiffSection(diff) {
  if (!diff) return [];
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  const signed = (x) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)} pt`;
  const lines = ['', '## Node CPU profiles (NODE_PROFILE=cpu on both sides)', ''];
  if (diff.a_profiler !== diff.b_profiler)
    lines.push(
      `A was profiled with ${diff.a_profiler}, B with ${diff.b_profiler}: their function names differ in kind; read the table with care.`,
      '',
    );
  lines.push(
    `The functions whose share of the node's CPU samples changed most (A ${diff.a_samples} samples, B ${diff.b_samples}); *total* counts a function wherever it is on the stack, *self* only where it was running.`,
    '',
  );
  lines.push(
    '| function | total A | total B | change | self A | self B | change |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of diff.rows)
    lines.push(
      `| \`${r.function.replace(/\|/g, '\\|')}\` | ${pct(r.a_total_share)} | ${pct(r.b_total_share)} | ${signed(r.delta_total)} | ${pct(r.a_self_share)} | ${pct(r.b_self_share)} | ${signed(r.delta_self)} |`,
    );
  if (diff.flamegraph)
    lines.push(
      '',
      `![Differential flame graph](${diff.flamegraph})`,
      '',
      `(\`${diff.flamegraph}\`: B's stacks, red where the share grew, blue where it shrank.)`,
    );
  else if (diff.flamegraph_error) lines.push('', `No differential flame graph: ${diff.flamegraph_error}.`);
  return lines;
}

module.exports = { profileDiff, writeDiffFlamegraph, profileDiffSection };
