'use strict';
// npm run bench's second part: the default run as a user runs it (its
// generator's CPU per request against the node's), how much a run's CPU per
// request varies over REPEAT windows of the default mix, and the machine's
// floor for that variation (the same CPU-bound work timed in windows as long
// on the node's core).

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { ROOT } = require('../../src/scenario/resolve');
const { summarize } = require('../../src/stats');
const { runScenario } = require('../../src/run');
const { log } = require('../../src/util/log');

const CV_REPEAT = Number(process.env.BENCH_CV_REPEAT ?? 5);

// A warm-up of a minute: geth --dev's memory and latency drift over its first
// minutes under load (docs/generator.md).
const CV_WARM_S = Number(process.env.BENCH_CV_WARM_S || 60);

const CV_WINDOW_S = Number(process.env.BENCH_CV_WINDOW_S || 30);

// Windows of the default run (geth-dev.env as it is: artillery + ethers over HTTP, the default mix).
const DEFAULT_REPEAT = Number(process.env.BENCH_DEFAULT_REPEAT ?? 3);

/**
 * Runs geth-dev.env on the host (unless RUNTIME says otherwise) with CV_WARM_S of warm-up, windows of CV_WINDOW_S and
 * idle baselines of 5 s (a window's length where that is shorter), plus `env`, into a report folder removed
 * afterwards; `figures(run)` reads what the bench prints.
 */
async function runGethDev(what, env, figures) {
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-run-'));
  try {
    const { run } = await runScenario(path.join(ROOT, 'scenarios', 'geth-dev.env'), {
      env: {
        RUNTIME: 'host',
        ...process.env,
        WARMUP_S: String(CV_WARM_S),
        DURATION_S: String(CV_WINDOW_S),
        // the default run's ratio is of gross figures: its idle baseline only has to be there (no longer than a window)
        IDLE_S: String(Math.min(5, CV_WINDOW_S)),
        REPORTS_DIR: reports,
        ARCHIVE: 'none',
        ...env,
      },
      out: () => {},
      index: false,
    });
    if (!run || run.status !== 'ok') throw new Error(`${what} failed: ${run ? run.error : 'no report'}`);
    return figures(run);
  } finally {
    fs.rmSync(reports, { recursive: true, force: true });
  }
}

/**
 * Repeatability: the default mix on geth --dev, REPEAT=CV_REPEAT windows of
 * CV_WINDOW_S on the warm stack with the lean generator; returns the CV of CPU
 * time per request across them (the goal is 3% or less), or null when
 * CV_REPEAT is under 2.
 */
async function repeatability() {
  if (CV_REPEAT < 2) return null;
  log(
    `repeatability: REPEAT=${CV_REPEAT} windows of ${CV_WINDOW_S} s after a ${CV_WARM_S} s warm-up, default mix, GENERATOR=lean`,
  );
  return runGethDev('the repeatability run', { REPEAT: String(CV_REPEAT), GENERATOR: 'lean', CORES: '1' }, (run) => {
    const s = run.summary.cpu_ms_per_request;
    const each = run.repetitions.map((r) => r.figures.cpu_ms_per_request.toFixed(4)).join(', ');
    process.stdout.write(
      `\nrepeatability: CPU ms per request over ${s.n} windows (${each}): median ${s.median.toFixed(4)}, 95% interval ${s.ci95.map((x) => x.toFixed(4)).join(' .. ')}, CV ${(s.cv * 100).toFixed(2)}%\n`,
    );
    const g = run.summary.generator_us_per_request;
    if (g)
      process.stdout.write(
        `  the generator's own CPU per request for the same requests, window by window (${run.repetitions.map((r) => r.generator.cpu_us_per_request.toFixed(1)).join(', ')} us): CV ${(g.cv * 100).toFixed(2)}%\n`,
      );
    for (const o of run.outliers)
      process.stdout.write(
        `  repetition ${o.repetition} flagged, ${(o.deviation * 100).toFixed(1)}% from the median: ${o.reasons.join('; ')}\n`,
      );
    return { cv: s.cv, generatorCv: g ? g.cv : null };
  });
}

/**
 * The default run, DEFAULT_REPEAT windows of CV_WINDOW_S after CV_WARM_S: the generator's CPU per request over the
 * node's, window by window (the goal is at most 0.5: the generator is never the limit). Returns the medians, or null
 * when DEFAULT_REPEAT is 0.
 */
async function defaultRun() {
  if (DEFAULT_REPEAT < 1) return null;
  log(`the default run: geth-dev.env as it is, ${DEFAULT_REPEAT} windows of ${CV_WINDOW_S} s`);
  return runGethDev('the default run', { REPEAT: String(DEFAULT_REPEAT) }, (run) => {
    const windows = (run.repetitions || [run]).map((r) => ({
      generator: r.generator.cpu_us_per_request,
      node: r.figures.cpu_ms_per_request * 1000,
    }));
    const ratios = windows.map((w) => w.generator / w.node);
    const each = windows.map((w, i) => `${w.generator.toFixed(1)} / ${w.node.toFixed(1)} us = ${ratios[i].toFixed(3)}`);
    const { GENERATOR, TRANSPORT } = run.provenance.scenario;
    process.stdout.write(
      `\nthe default run (${GENERATOR} over ${TRANSPORT}): generator / node CPU per request, window by window: ${each.join('; ')}\n`,
    );
    const mid = (xs) => summarize(xs).median;
    return {
      generator: mid(windows.map((w) => w.generator)),
      node: mid(windows.map((w) => w.node)),
      ratio: mid(ratios),
    };
  });
}

/**
 * The machine's noise floor: the same CPU-bound work timed in CV_REPEAT
 * windows of CV_WINDOW_S on the node's cores (scripts/lib/cpu-floor.js);
 * returns the CV of its CPU time across windows, or null when CV_REPEAT is under 2.
 */
async function cpuFloor(cpus) {
  if (CV_REPEAT < 2) return null;
  log(`machine floor: fixed CPU-bound work in ${CV_REPEAT} windows of ${CV_WINDOW_S} s on cpus ${cpus}`);
  const out = execFileSync(
    'taskset',
    ['-c', cpus, process.execPath, path.join(__dirname, 'cpu-floor.js'), String(CV_REPEAT), String(CV_WINDOW_S)],
    { encoding: 'utf8' },
  );
  const xs = JSON.parse(out).window_cpu_s;
  const s = summarize(xs);
  process.stdout.write(
    `machine floor: the same work took ${xs.map((x) => x.toFixed(2)).join(', ')} s of CPU in its ${xs.length} windows: CV ${(s.cv * 100).toFixed(2)}% (no CPU-time figure over windows this long on this core can vary less)\n`,
  );
  return s.cv;
}

module.exports = { CV_REPEAT, CV_WARM_S, CV_WINDOW_S, repeatability, cpuFloor, defaultRun };
