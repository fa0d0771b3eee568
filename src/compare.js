'use strict';
// Compares two runs or two plans: the headline figures side by side with the
// ratio B/A, and for each whether the difference is larger than the noise
// (Welch's t-test at 95%). The noise is the variation between windows, the
// level that varies on a shared machine: for two runs, their repetitions
// (REPEAT); for two plans, the repetitions of each point. Two single-window
// runs carry no such variation: compare says it cannot tell and points to
// ./run.sh ab. (Seconds inside one window are not independent samples of
// that noise: judged by them, identical runs were called different.)
// The machines and clients of both sides are shown from their provenance, so
// runs from two instance types compare too.

const fs = require('node:fs');
const path = require('node:path');
const { scrub, scrubDeep } = require('./util/scrub');
const { welch, mean } = require('./stats');
const { pointResults, FIGURES: ALL_FIGURES } = require('./plan/report');

// the plan report's optional columns (saturation, cost, disk) are not compared yet
const FIGURES = ALL_FIGURES.filter((f) => !f.optional);
const { profileDiff, writeDiffFlamegraph, profileDiffSection } = require('./report/profile-diff');

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** A run folder or a plan folder, loaded. */
function load(dir) {
  if (fs.existsSync(path.join(dir, 'run.json'))) {
    const run = readJson(path.join(dir, 'run.json'));
    const seriesFile = path.join(dir, 'series.json');
    const series = fs.existsSync(seriesFile) ? readJson(seriesFile) : {};
    return { kind: 'run', dir, label: `${run.scenario_name}/${run.run_id}`, run, series };
  }
  if (fs.existsSync(path.join(dir, 'plan.json'))) {
    const state = readJson(path.join(dir, 'plan.json'));
    const firstRun = state.points.flatMap((p) => p.runs).find((r) => r.status === 'ok' && r.dir);
    const run = firstRun ? readJson(path.join(dir, firstRun.dir, 'run.json')) : null;
    return {
      kind: 'plan',
      dir,
      label: `plan ${state.plan}/${path.basename(dir)}`,
      state,
      results: pointResults(dir, state),
      run,
    };
  }
  throw new Error(`${dir}: neither a run folder (run.json) nor a plan folder (plan.json)`);
}

/** The figures of each repetition of a run (REPEAT), or null for a single window. */
function perWindow(side) {
  const reps = side.run.repetitions;
  if (!Array.isArray(reps) || reps.length < 2) return null;
  const out = {};
  for (const f of FIGURES) out[f.key] = reps.map((r) => (r.figures ? f.get(r.figures) : null));
  return out;
}

function row(label, a, b, sa, sb, digits) {
  const t = welch(sa, sb);
  return {
    figure: label,
    a,
    b,
    ratio: a && b !== null && b !== undefined ? b / a : null,
    beyond_noise: t ? t.significant : null,
    digits,
  };
}

function compareRuns(A, B) {
  const pa = perWindow(A);
  const pb = perWindow(B);
  return FIGURES.map((f) => {
    const a = A.run.figures ? f.get(A.run.figures) : null;
    const b = B.run.figures ? f.get(B.run.figures) : null;
    return row(f.label, a, b, pa ? pa[f.key] : [], pb ? pb[f.key] : [], f.digits);
  });
}

/** Where the noise of a comparison comes from, or null when there is none to judge by. */
function noiseSource(A, B) {
  if (A.kind === 'plan') return "the repetitions of each point (Welch's t-test, 95%)";
  if (perWindow(A) && perWindow(B))
    return "the repetitions of each run (REPEAT): the variation between windows (Welch's t-test, 95%)";
  return null;
}

function comparePlans(A, B) {
  const rows = [];
  const byName = (results) => new Map(results.map((r) => [JSON.stringify(r.values), r]));
  const mb = byName(B.results);
  for (const ra of A.results) {
    const rb = mb.get(JSON.stringify(ra.values));
    if (!rb) continue;
    const at = Object.entries(ra.values)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    for (const f of FIGURES) {
      const xa = ra.figures[f.key].filter((x) => x !== null);
      const xb = rb.figures[f.key].filter((x) => x !== null);
      rows.push(row(`${at}: ${f.label}`, xa.length ? mean(xa) : null, xb.length ? mean(xb) : null, xa, xb, f.digits));
    }
  }
  if (!rows.length) throw new Error('the two plans have no point in common');
  return rows;
}

/** Differences in machine and client between the two sides, from provenance. */
function contextRows(A, B) {
  const pa = (A.run && A.run.provenance) || {};
  const pb = (B.run && B.run.provenance) || {};
  const get = (p, f) => {
    try {
      return f(p);
    } catch {
      return null;
    }
  };
  const items = [
    ['client', (p) => `${p.client.name} ${p.client.version}`],
    ['runtime', (p) => p.runtime],
    ['CPU model', (p) => p.machine.cpu_model],
    ['cores', (p) => p.machine.cores],
    ['memory GiB', (p) => (p.machine.memory_bytes / 2 ** 30).toFixed(1)],
    ['kernel', (p) => p.machine.kernel],
    ['node cores (CORES)', (p) => p.scenario.CORES],
  ];
  return items.map(([label, f]) => ({ label, a: get(pa, f), b: get(pb, f) }));
}

function compare(dirA, dirB) {
  const A = load(dirA);
  const B = load(dirB);
  if (A.kind !== B.kind) throw new Error(`cannot compare a ${A.kind} with a ${B.kind}: give two runs or two plans`);
  const rows = A.kind === 'run' ? compareRuns(A, B) : comparePlans(A, B);
  const profile = A.kind === 'run' ? profileDiff(A.dir, A.run, B.dir, B.run) : null;
  return {
    kind: A.kind,
    a: { dir: path.resolve(dirA), label: A.label },
    b: { dir: path.resolve(dirB), label: B.label },
    rows,
    noise: noiseSource(A, B),
    context: contextRows(A, B),
    ...(profile ? { profile } : {}),
  };
}

function renderCompare(c) {
  const fmt = (v, d) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(d));
  const cannotTell = 'cannot tell: one window a side';
  const lines = [`# chainperf compare: ${c.a.label} vs ${c.b.label}`, '', `A: \`${c.a.dir}\``, `B: \`${c.b.dir}\``, ''];
  lines.push('| figure | A | B | B/A | beyond noise? |', '|---|---:|---:|---:|---|');
  for (const r of c.rows) {
    const verdict =
      r.beyond_noise === null ? (c.noise ? 'unknown (too few values)' : cannotTell) : r.beyond_noise ? 'yes' : 'no';
    lines.push(`| ${r.figure} | ${fmt(r.a, r.digits)} | ${fmt(r.b, r.digits)} | ${fmt(r.ratio, 3)} | ${verdict} |`);
  }
  lines.push(
    '',
    c.noise
      ? `Noise estimated from ${c.noise}.`
      : 'Whether a difference is beyond the noise cannot be told from two single windows: on a shared machine one window differs from the next by 5-12% with nothing changed, and the seconds inside a window do not show that. Measure both sides with REPEAT=5 (or more) and compare again, or better, measure them alternately with `./run.sh ab A.env B.env`, which gives the ratio with a 95% interval from pairs of windows.',
  );
  lines.push('', '| context | A | B | |', '|---|---|---|---|');
  for (const x of c.context)
    lines.push(`| ${x.label} | ${x.a ?? 'n/a'} | ${x.b ?? 'n/a'} | ${x.a !== x.b ? 'differs' : ''} |`);
  lines.push(...profileDiffSection(c.profile));
  return `${lines.join('\n')}\n`;
}

/** Writes compare.md and compare.json into outDir and returns the markdown. */
function writeCompare(c, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  if (c.profile) {
    const fg = writeDiffFlamegraph(c.profile, outDir);
    if (fg.file) c.profile.flamegraph = fg.file;
    else c.profile.flamegraph_error = fg.error;
  }
  const md = renderCompare(c);
  fs.writeFileSync(path.join(outDir, 'compare.md'), scrub(md));
  fs.writeFileSync(path.join(outDir, 'compare.json'), `${JSON.stringify(scrubDeep(c), null, 2)}\n`);
  return scrub(md);
}

module.exports = { compare, renderCompare, writeCompare };
