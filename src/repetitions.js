'use strict';
// REPEAT=N: the measured window N times on the warm stack, each with its own
// idle baseline. Every headline figure gets its median, a 95% confidence
// interval and its coefficient of variation; a repetition that falls outside
// the rest is flagged with what differed in it, never silently averaged.

const { summarize, median } = require('./stats');

const HEADLINES = {
  cpu_ms_per_request: (f) => f.cpu_ms_per_request,
  cpu_ms_per_request_net: (f) => f.cpu_ms_per_request_net,
  rps: (f) => f.rps,
  p50_ms: (f) => f.latency_ms.p50,
  p99_ms: (f) => f.latency_ms.p99,
  error_rate: (f) => f.error_rate,
};

/** The generator's own CPU per request in a repetition, or null when it was not measured. */
const generatorCost = (r) =>
  r.generator && Number.isFinite(r.generator.cpu_us_per_request) ? r.generator.cpu_us_per_request : null;

/**
 * {figure: {n, median, mean, ci95, cv}} over the repetitions' figures. When
 * the generator's CPU was measured in every one, generator_us_per_request too:
 * the same requests sent from the other cores, so its spread is the machine's
 * own noise, measured during the run.
 */
function summarizeRepetitions(reps) {
  const out = {};
  for (const [key, get] of Object.entries(HEADLINES)) out[key] = summarizeMedianRep(reps.map((r) => get(r.figures)));
  if (reps.every((r) => generatorCost(r) !== null))
    out.generator_us_per_request = summarizeMedianRep(reps.map(generatorCost));
  return out;
}

/**
 * summarize() with the median defined as the headline is: the value of a
 * repetition, the lower middle one for an even count (never the midpoint of
 * two windows, which no window measured).
 */
function summarizeMedianRep(values) {
  const out = summarize(values);
  const xs = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length) out.median = xs[Math.floor((xs.length - 1) / 2)];
  return out;
}

/** Index of the repetition whose CPU time per request is the median (the lower middle for an even count). */
function medianIndex(reps) {
  const order = reps.map((r, i) => [r.figures.cpu_ms_per_request, i]).sort((a, b) => a[0] - b[0]);
  return order[Math.floor((order.length - 1) / 2)][1];
}

/** How far x is from the median of xs, as a share of it. */
const relDev = (x, xs) => {
  const m = median(xs);
  return m ? (x - m) / m : 0;
};

/**
 * Flags repetitions whose CPU time per request lies outside the rest: each
 * is compared with the median of the others (leave one out, so that with three
 * repetitions one far from the other two is not hidden by its own weight),
 * and flagged when it is more than 3 scaled median absolute deviations of the
 * others and more than 5% away from it. Each flag says what else differed.
 */
function flagOutliers(reps) {
  if (reps.length < 3) return [];
  const cpu = reps.map((r) => r.figures.cpu_ms_per_request);
  const flags = [];
  reps.forEach((r, i) => {
    const others = cpu.filter((_, j) => j !== i);
    const m = median(others);
    const mad = 1.4826 * median(others.map((x) => Math.abs(x - m)));
    const dev = Math.abs(cpu[i] - m);
    if (dev <= 3 * mad || dev <= 0.05 * m) return;
    const reasons = [...nodeReasons(reps, i), ...machineReasons(reps, i)];
    if (r.figures.requests_failed > 0) reasons.push(`${r.figures.requests_failed} requests failed in it`);
    if (!reasons.length) reasons.push('nothing else measured differed');
    flags.push({
      repetition: i + 1,
      cpu_ms_per_request: cpu[i],
      deviation: Number(((cpu[i] - m) / m).toFixed(4)),
      reasons,
    });
  });
  return flags;
}

/** What the node did differently in repetition i: idle CPU before it, garbage collections in it. */
function nodeReasons(reps, i) {
  const reasons = [];
  const idle = reps.map((x) => (x.idle ? x.idle.cpu_s / x.idle.seconds : null));
  if (
    idle[i] !== null &&
    Math.abs(
      relDev(
        idle[i],
        idle.filter((v) => v !== null),
      ),
    ) > 0.5
  )
    reasons.push(
      `the node's idle CPU before it was ${(relDev(idle[i], idle) * 100).toFixed(0)}% off the others' (background work: GC, compaction, a sync burst)`,
    );
  const gcPerRequest = reps.map((x) =>
    Number.isFinite(x.node && x.node.gc_cycles) && x.figures.requests_ok
      ? x.node.gc_cycles / x.figures.requests_ok
      : null,
  );
  if (gcPerRequest.every((v) => v !== null) && Math.abs(relDev(gcPerRequest[i], gcPerRequest)) > 0.25)
    reasons.push(
      `the node ran ${reps[i].node.gc_cycles} garbage collections in it, ${(relDev(gcPerRequest[i], gcPerRequest) * 100).toFixed(0)}% off the median per request`,
    );
  return reasons;
}

/** What the machine and the generator did differently in repetition i: busy share, steal, own cost, throughput. */
function machineReasons(reps, i) {
  const reasons = [];
  const gen = reps.map((x) => x.generator.cpu_utilization).filter((v) => v !== undefined);
  if (gen.length === reps.length && Math.abs(relDev(gen[i], gen)) > 0.15)
    reasons.push(
      `the generator was ${(gen[i] * 100).toFixed(0)}% busy against a median of ${(median(gen) * 100).toFixed(0)}%`,
    );
  const steal = reps.map((x) => (x.node && x.node.steal ? x.node.steal.share : null));
  if (steal.every((v) => v !== null) && Math.abs(steal[i] - median(steal)) > 0.02)
    reasons.push(
      `the hypervisor took ${(steal[i] * 100).toFixed(1)}% of the node's cores in it (steal time), against a median of ${(median(steal) * 100).toFixed(1)}%`,
    );
  const genCost = reps.map(generatorCost);
  if (genCost.every((v) => v !== null) && Math.abs(relDev(genCost[i], genCost)) > 0.1)
    reasons.push(
      `the generator's own CPU per request was ${(relDev(genCost[i], genCost) * 100).toFixed(0)}% off its median: the same requests cost its cores more or less too, so the machine itself ran slower or faster then`,
    );
  const rps = reps.map((x) => x.figures.rps);
  if (Math.abs(relDev(rps[i], rps)) > 0.1)
    reasons.push(`its throughput was ${(relDev(rps[i], rps) * 100).toFixed(0)}% off the median`);
  return reasons;
}

module.exports = { summarizeRepetitions, medianIndex, flagOutliers, HEADLINES };
