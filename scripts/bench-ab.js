#!/usr/bin/env node
'use strict';
// npm run bench:ab: how trustworthy ./run.sh ab's verdicts are on this
// machine. It runs BENCH_AB_SESSIONS (10) A/A sessions, the same scenario on
// both sides, and counts how often they call the two sides different for CPU
// time per request (a 95% interval should do so in about 5% of sessions).
// Then one A/B session with a real difference (B changed by BENCH_AB_B,
// default WORKLOAD=eth-reads-light against the default mix) and its ratio.
//
// Every session is a real ./run.sh ab on geth --dev in the host runtime with
// the lean generator; BENCH_AB_ENV adds or changes keys for all of them
// (default: 10 s windows, 3 s idle, 5 s warm-ups (one after each restart), at most 8 minutes of pairs).
// Each session prints its line as it ends; the last line is key=value pairs:
//   aa_sessions aa_false_positive_rate ci_halfwidth_pct (median over A/A sessions)
//   aa_false_positive_upper95 (the rate's one-sided 95% upper bound over these sessions)
//   aa_reached_target (A/A sessions within AB_TARGET_PCT) minutes_measuring (median, pairs only)
//   aa_target_within_10_min (A/A sessions within AB_TARGET_PCT in 10 minutes, setup included)
//   aa_window_changed (A/A sessions whose AB_WINDOW=auto left the first stage's length)
//   aa_interleaved (A/A sessions whose pairs were interleaved in slices: AB_SLICE_S)
//   aa_burn_in_below_1 aa_first_pair_below_1 (A/A sessions whose burn-in pair, or first pair in the interval, had
//   B/A below 1)
//   aa_second_window_pct aa_second_window_ci_low aa_second_window_ci_high (how much dearer the second window of a
//   pair was than the first, % of CPU per request, with its 95% interval over the A/A sessions)
//   aa_pair_sd_pct aa_gen_correlation aa_pair_sd_without_gen_pct (the spread of the A/A pairs' log B/A, its
//   correlation with the generator's CPU per request B/A, the spread left without the part that predicts)
//   aa_memory_called_different (memory is never decided: 0)
//   minutes_per_session (median, all sessions, setup included)
//   pairs_per_session (median; a pilot's and the burn-in's pairs included)
//   ab_ratio ab_ci_low ab_ci_high ab_verdict ab_halfwidth_pct
//   with BENCH_AB_PROBE=1, a gauge of the machine's speed beside the sessions (lib/speed-probe.js, on the last core,
//   the generator's by default, or on BENCH_AB_PROBE_CPU, e.g. 0, the node's): aa_probe_pairs aa_probe_sd_pct
//   aa_probe_correlation aa_pair_sd_without_probe_pct aa_probe_gen_correlation ab_probe_shift_pct
//   ab_probe_shift_ci_low ab_probe_shift_ci_high (its units in the reports folder, speed-probe.txt)
// Sessions run one after another; nothing else should run on the machine meanwhile.
// Ctrl-C (SIGINT) or SIGTERM is passed on to the running session (in a process
// group of its own, so that each signal reaches it once), which tears its nodes
// down and writes its report, as ./run.sh does on its own; the figures are then
// printed over the sessions that had ended (not the interrupted one), and
// bench:ab exits 130.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { median, mean, sd, t95 } = require('../src/stats');
const { parseKv, kvLine } = require('./lib/kv');
const { machineSpeed } = require('../src/ab/machine-speed');
const { startProbe, probeCpu, saveUnits, probeShare, allPairs } = require('./lib/speed-probe');

const ROOT = path.join(__dirname, '..');
const SCENARIO = path.join(ROOT, 'scenarios', 'geth-dev.env');
const SESSIONS = Number(process.env.BENCH_AB_SESSIONS || 10);
const DEFAULTS = 'RUNTIME=host GENERATOR=lean DURATION_S=10 IDLE_S=3 WARMUP_S=5 AB_MAX_S=480 AB_MAX_PAIRS=40';

/** B/A of CPU per request in one pair. */
const cpuRatio = (pair) => pair.b.figures.cpu_ms_per_request / pair.a.figures.cpu_ms_per_request;

/** The session running now, and the signal that interrupted bench:ab (passed on to that session). */
const state = { child: null, interrupted: null };
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (!state.interrupted) process.stderr.write(`bench:ab: ${sig}: passed on to the running session\n`);
    state.interrupted = sig;
    if (state.child) state.child.kill(sig); // each one: the session's third forces its exit, as ./run.sh's does
  });
}

/** One ./run.sh ab session; resolves with its ab.json and how long it took. */
function session(a, b, env) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(path.join(ROOT, 'run.sh'), ['ab', a, b], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: a terminal's Ctrl-C reaches bench:ab, which passes it on once
    });
    state.child = child;
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
      const progress = String(d)
        .split('\n')
        .filter((l) => /pairs? in [\d.]+ min|asks for/.test(l));
      for (const l of progress) process.stderr.write(`  ${l.trim()}\n`);
    });
    child.on('close', (code) => {
      state.child = null;
      const dir = out.trim().split('\n').pop();
      const file = path.join(dir || '', 'ab.json');
      if (!dir || !fs.existsSync(file))
        return reject(new Error(`./run.sh ab exited ${code} without a report:\n${err.slice(-3000)}`));
      resolve({ doc: JSON.parse(fs.readFileSync(file, 'utf8')), minutes: (Date.now() - t0) / 60000, dir });
    });
  });
}

/** Minutes from the first pair to the last (the session's progress record). */
const measuringMinutes = (doc) => (doc.progress.length ? doc.progress[doc.progress.length - 1].elapsed_s / 60 : 0);
/** One-sided 95% upper bound of a rate of k in n (Clopper-Pearson), by bisection on the binomial tail. */
function fpUpper95(judged) {
  const n = judged.length;
  const k = judged.filter((x) => x.r.verdict !== 'same').length;
  if (k === n) return 1;
  const tail = (p) => {
    let sum = 0;
    let term = (1 - p) ** n; // P(X = 0)
    for (let i = 0; i <= k; i++) {
      sum += term;
      term *= ((n - i) / (i + 1)) * (p / (1 - p));
    }
    return sum; // P(X <= k)
  };
  let lo = k / n;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (tail(mid) > 0.05) lo = mid;
    else hi = mid;
  }
  return hi;
}
const memoryVerdict = (doc) => (doc.figures.memory_peak_bytes || {}).verdict || null;

const fmtR = (r) =>
  `B/A ${r.ratio.toFixed(4)} [${r.ci95[0].toFixed(4)}, ${r.ci95[1].toFixed(4)}] ±${r.halfwidth_pct.toFixed(2)}% ${r.verdict}`;

/** B: a copy of the scenario with BENCH_AB_B's keys set (a key the file has is replaced: one set twice is an error). */
function scenarioB(reports, env) {
  const bFile = path.join(reports, 'b.env');
  const bKeys = parseKv(process.env.BENCH_AB_B || 'WORKLOAD=eth-reads-light', 'BENCH_AB_B');
  let text = `${fs.readFileSync(SCENARIO, 'utf8')}\nNAME=geth-dev-b\n`;
  for (const [k, v] of Object.entries(bKeys)) {
    const line = new RegExp(`^${k}=.*$`, 'm');
    text = line.test(text) ? text.replace(line, `${k}=${v}`) : `${text}${k}=${v}\n`;
  }
  fs.writeFileSync(bFile, text);
  const envB = { ...env };
  for (const k of Object.keys(bKeys)) delete envB[k]; // the environment would override B's file
  return { bFile, bKeys, envB };
}

/** The A/B session with a real difference (BENCH_AB_B), its line printed; null when bench:ab was interrupted in it. */
async function abSession(reports, env) {
  const { bFile, bKeys, envB } = scenarioB(reports, env);
  const ab = await session(SCENARIO, bFile, envB);
  if (state.interrupted) return null;
  const r = ab.doc.figures.cpu_ms_per_request;
  const keys = Object.entries(bKeys).map(([k, v]) => `${k}=${v}`);
  process.stdout.write(
    `A/B (${keys.join(' ')}): ${ab.doc.pairs.length} pairs, ${ab.minutes.toFixed(1)} min: ${r.ci95 ? fmtR(r) : 'no interval'}\n`,
  );
  return ab;
}

/** The A/B session's figures, n/a without one. */
function abFigures(ab) {
  const r = ab ? ab.doc.figures.cpu_ms_per_request : { ratio: null, ci95: null, verdict: null };
  return {
    ab_ratio: r.ratio === null ? 'n/a' : r.ratio.toFixed(4),
    ab_ci_low: r.ci95 ? r.ci95[0].toFixed(4) : 'n/a',
    ab_ci_high: r.ci95 ? r.ci95[1].toFixed(4) : 'n/a',
    ab_verdict: r.verdict || 'n/a',
    ab_halfwidth_pct: r.ci95 ? r.halfwidth_pct.toFixed(2) : 'n/a',
  };
}

/**
 * The order effect: how much dearer in CPU per request (in %, negative: cheaper) the window measured second in a pair
 * was than the first. Per A/A session the mean over its interval's pairs (log B/A for AB, log A/B for BA), then the
 * mean over sessions with its 95% interval over them (the session is the unit). ABBA order cancels it in a session
 * with as many AB as BA pairs; in one with an odd number it shifts the ratio by about this much over the pair count.
 */
function secondWindowEffect(aa) {
  const perSession = aa
    .map((x) => x.doc.pairs.map((p) => (p.order === 'AB' ? 1 : -1) * Math.log(cpuRatio(p))).filter(Number.isFinite))
    .filter((logs) => logs.length)
    .map(mean);
  const out = { aa_second_window_pct: 'n/a', aa_second_window_ci_low: 'n/a', aa_second_window_ci_high: 'n/a' };
  if (perSession.length < 2) return out;
  const m = mean(perSession);
  const h = (t95(perSession.length - 1) * sd(perSession)) / Math.sqrt(perSession.length);
  const pct = (x) => ((Math.exp(x) - 1) * 100).toFixed(2);
  return { aa_second_window_pct: pct(m), aa_second_window_ci_low: pct(m - h), aa_second_window_ci_high: pct(m + h) };
}

/**
 * How much of the pairs' spread the machine's own speed explains. In an A/A session the generator sends the same
 * requests to both sides, so its CPU per request moves between the windows of a pair only with the machine (another
 * tenant, the host's clock). Over every pair of the A/A sessions' intervals: the spread (sd) of the node's log B/A,
 * its correlation with the generator's log B/A, and the spread left once the part the generator's predicts is taken
 * out (least squares). No verdict uses it: it says what an interval corrected for the machine's speed could gain.
 */
function machineSpeedShare(aa) {
  const m = machineSpeed(aa.flatMap((s) => s.doc.pairs));
  if (!m) return { aa_pair_sd_pct: 'n/a', aa_gen_correlation: 'n/a', aa_pair_sd_without_gen_pct: 'n/a' };
  return {
    aa_pair_sd_pct: m.pair_sd_pct.toFixed(2),
    aa_gen_correlation: m.correlation.toFixed(2),
    aa_pair_sd_without_gen_pct: m.pair_sd_without_generator_pct.toFixed(2),
  };
}

/** The figures of the last line: the A/A sessions', then the A/B session's (n/a without one). */
function benchFigures(aa, ab) {
  const all = ab ? [...aa, ab] : aa;
  const judged = aa.filter((x) => x.r.verdict);
  return {
    aa_sessions: judged.length,
    aa_without_verdict: aa.length - judged.length, // failed, or ended before two pairs: not in the rate
    aa_false_positive_rate: judged.length
      ? (judged.filter((x) => x.r.verdict !== 'same').length / judged.length).toFixed(3)
      : 'n/a',
    ci_halfwidth_pct: judged.length ? median(judged.map((x) => x.r.halfwidth_pct)).toFixed(2) : 'n/a',
    // how many A/A sessions ended within AB_TARGET_PCT, and the median time their pairs took (setup not counted)
    aa_reached_target: judged.filter((x) => x.r.halfwidth_pct <= x.doc.settings.target_pct).length,
    minutes_measuring: aa.length ? median(aa.map((x) => measuringMinutes(x.doc))).toFixed(1) : 'n/a',
    // memory is reported, never decided (ab/figures.js): sessions that called it different, which must stay 0
    aa_memory_called_different: aa.filter((x) => ['lower', 'higher'].includes(memoryVerdict(x.doc))).length,
    // the rate's one-sided 95% upper bound (Clopper-Pearson): what the sessions can rule out, not only what they saw
    aa_false_positive_upper95: judged.length ? fpUpper95(judged).toFixed(3) : 'n/a',
    // A/A sessions that reached the target within 10 minutes of the command (setup included)
    aa_target_within_10_min: judged.filter((x) => x.r.halfwidth_pct <= x.doc.settings.target_pct && x.minutes <= 10)
      .length,
    // AB_WINDOW=auto: sessions that left their first stage's window length for a longer one (a pilot)
    aa_window_changed: aa.filter((x) => x.doc.pilot).length,
    // AB_SLICE_S: sessions whose pairs ran interleaved in slices (after the burn-in: settings.interleave)
    aa_interleaved: aa.filter((x) => x.doc.settings.interleave).length,
    minutes_per_session: all.length ? median(all.map((x) => x.minutes)).toFixed(1) : 'n/a',
    // A/A sessions whose burn-in pair, and whose first pair in the interval, had B/A below 1 (about half each where
    // neither pair is odd): what AB_BURN_IN_PAIRS is for
    aa_burn_in_below_1: aa.filter(
      (x) => x.doc.burn_in && x.doc.burn_in.pairs.length && cpuRatio(x.doc.burn_in.pairs[0]) < 1,
    ).length,
    aa_first_pair_below_1: aa.filter((x) => x.doc.pairs.length && cpuRatio(x.doc.pairs[0]) < 1).length,
    ...secondWindowEffect(aa),
    ...machineSpeedShare(aa),
    // every pair measured: the interval's, a pilot's and the burn-in's
    pairs_per_session: all.length ? median(all.map((x) => allPairs(x.doc).length)) : 'n/a',
    ...abFigures(ab),
  };
}

async function main() {
  const env = { ...parseKv(DEFAULTS, 'defaults'), ...parseKv(process.env.BENCH_AB_ENV || '', 'BENCH_AB_ENV') };
  const reports = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-bench-ab-'));
  env.REPORTS_DIR = reports;
  process.stderr.write(
    `bench:ab: ${SESSIONS} A/A sessions of ${path.relative(ROOT, SCENARIO)} then one A/B (B: ${process.env.BENCH_AB_B || 'WORKLOAD=eth-reads-light'}); ${Object.entries(
      env,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}\n`,
  );
  const probe = process.env.BENCH_AB_PROBE === '1' ? startProbe(probeCpu()) : null;
  try {
    await allSessions(reports, env, probe);
  } finally {
    if (probe) {
      probe.stop();
      saveUnits(probe.units, path.join(reports, 'speed-probe.txt'));
    }
  }
  if (state.interrupted) process.exit(130);
}

/** The A/A sessions, the A/B one, and the figures' line. */
async function allSessions(reports, env, probe) {
  const aa = [];
  for (let i = 1; i <= SESSIONS && !state.interrupted; i++) {
    const s = await session(SCENARIO, SCENARIO, env);
    if (state.interrupted) break; // the interrupted session's report is kept, not counted
    const r = s.doc.figures.cpu_ms_per_request;
    aa.push({ ...s, r });
    process.stdout.write(
      `A/A ${i} of ${SESSIONS}: ${s.doc.status}, ${s.doc.pairs.length} pairs, ${s.minutes.toFixed(1)} min: ${r.ci95 ? fmtR(r) : 'no interval'}\n`,
    );
  }
  const ab = state.interrupted ? null : await abSession(reports, env);
  const figures = { ...benchFigures(aa, ab), ...(probe ? probeShare(probe.units, aa, ab) : {}) };
  if (state.interrupted)
    process.stderr.write(
      `bench:ab: interrupted (${state.interrupted}): the figures are over the ${aa.length} A/A sessions that ended\n`,
    );
  process.stdout.write(`reports: ${reports}\n`);
  process.stdout.write(`${kvLine(figures)}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench:ab: ${err.message}\n`);
  process.exit(1);
});
