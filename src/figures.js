'use strict';
// The figures of a run, from counter values read at the edges of the measured
// window (README, "How the figures are measured"). Pure functions: unit-tested with known counters.

const round = (x, digits = 4) =>
  x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(digits));

/** CPU seconds between two readings of a source; user and system apart when the source has them. */
function cpuDelta(start, end) {
  const d = (k) => (start[k] === null || end[k] === null || start[k] === undefined ? null : end[k] - start[k]);
  return { user_s: round(d('user_s'), 6), system_s: round(d('system_s'), 6), total_s: round(d('total_s'), 6) };
}

/**
 * @param {object} o
 * @param {{start_ms:number, end_ms:number}} o.window
 * @param {{user_s,system_s,total_s}} o.cpu node CPU over the window (cpuDelta)
 * @param {{cpu_s:number, seconds:number}|null} o.idle idle baseline
 * @param {object} o.samples merged generator samples (samples.mergeSamples)
 */
function computeFigures({ window, cpu, idle, samples, cpuWindow = null, idleChain = null }) {
  // A window of slices (an interleaved A/B pair's) sent only in its slices: its time is theirs (active_ms).
  const windowS = (window.active_ms || window.end_ms - window.start_ms) / 1000;
  const ok = samples.ok;
  const failed = samples.failed;
  const idleRate = idle && idle.seconds > 0 && idle.cpu_s !== null ? idle.cpu_s / idle.seconds : null;
  // CPU read at sample instants inside the window (cAdvisor) is divided by the requests completed between those
  // instants.
  const cpuOk = cpuWindow ? cpuWindow.requests_ok : ok;
  const cpuS = cpuWindow ? (cpuWindow.active_ms || cpuWindow.end_ms - cpuWindow.start_ms) / 1000 : windowS;
  const perRequest = (x) => (cpuOk > 0 && x !== null ? (x * 1000) / cpuOk : null);
  const netCpu = idleRate === null || cpu.total_s === null ? null : cpu.total_s - idleRate * cpuS;
  // CHAIN_LOAD: a second baseline, idle under the same chain traffic; net of it, what the requests alone cost
  const chainRate =
    idleChain && idleChain.seconds > 0 && idleChain.cpu_s !== null ? idleChain.cpu_s / idleChain.seconds : null;
  const netOfChain = chainRate === null || cpu.total_s === null ? null : cpu.total_s - chainRate * cpuS;
  const methods = {};
  for (const [name, m] of Object.entries(samples.methods)) {
    methods[name] = { ...m, rps: round(m.requests_ok / windowS, 3) };
  }
  return {
    window_s: round(windowS, 3),
    requests_ok: ok,
    requests_failed: failed,
    failures: samples.failures,
    error_rate: ok + failed > 0 ? round(failed / (ok + failed), 6) : null,
    cpu_ms_per_request: round(perRequest(cpu.total_s), 6),
    cpu_ms_per_request_net: round(perRequest(netCpu), 6),
    idle_cpu_s_per_s: round(idleRate, 6),
    ...(idleChain
      ? {
          cpu_ms_per_request_net_of_chain: round(perRequest(netOfChain), 6),
          chain_idle_cpu_s_per_s: round(chainRate, 6),
        }
      : {}),
    rps: round(ok / windowS, 3),
    latency_ms: samples.latency_ms,
    methods,
  };
}

/**
 * CPU per request over time: for every second with both a CPU reading and requests,
 * the node's CPU in that second divided by the requests completed in it.
 * @param {{t_ms:number, total_s:number}[]} cpuTicks cumulative CPU readings, in time order
 * @param {{t_ms:number, ok:number}[]} series requests per epoch second
 */
function cpuPerRequestSeries(cpuTicks, series) {
  const okBySecond = new Map(series.map((p) => [Math.floor(p.t_ms / 1000), p.ok]));
  const out = [];
  for (let i = 1; i < cpuTicks.length; i++) {
    const a = cpuTicks[i - 1];
    const b = cpuTicks[i];
    const sec = Math.floor(a.t_ms / 1000);
    const ok = okBySecond.get(sec);
    // only whole seconds: ticks on consecutive second boundaries
    if (b.t_ms - a.t_ms < 900 || b.t_ms - a.t_ms > 1100 || !ok) continue;
    out.push({ t_ms: a.t_ms, cpu_ms_per_request: round(((b.total_s - a.total_s) * 1000) / ok, 6) });
  }
  return out;
}

/**
 * CPU per request between consecutive CPU samples taken at arbitrary instants
 * (cAdvisor's), with the requests completed between the same instants.
 * @param {{t_ms:number, total_s:number}[]} samples cumulative CPU readings, in time order
 * @param {{okBetween:(a:number, b:number)=>number}} requests merged generator samples
 */
function cpuPerRequestBetween(samples, requests) {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const ok = requests.okBetween(a.t_ms, b.t_ms);
    if (ok > 0) out.push({ t_ms: b.t_ms, cpu_ms_per_request: round(((b.total_s - a.total_s) * 1000) / ok, 6) });
  }
  return out;
}

module.exports = { computeFigures, cpuDelta, cpuPerRequestSeries, cpuPerRequestBetween, round };
