'use strict';
// One run, step by step (DESIGN.md "One run"): resolve the scenario, start the
// runtime, wait for sync, create history on a dev chain, harvest parameters,
// warm up, measure the idle baseline, measure the workload, compute the
// figures, write the report, archive it, tear down. Whatever happens after the
// scenario is valid, a report folder is written, marked failed with the reason
// when the run did not complete, with what was measured until then.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync } = require('node:child_process');
const chains = require('./chains');
const { resolveScenario, redactScenario } = require('./scenario/resolve');
const { startHost } = require('./runtime/host');
const { startAttach } = require('./runtime/attach');
const { loadMix, runArtillery, STARTUP_S } = require('./workload/artillery');
const { computeFigures } = require('./figures');
const { verdict } = require('./verdict');
const { summarizeRepetitions, medianIndex, flagOutliers } = require('./repetitions');
const { searchSaturation, costPerMillion, DEFAULT_BOUNDS } = require('./saturation');
const { measureWorkload, measureIdle } = require('./measure/window');
const { writeReport } = require('./report/write');
const { archiveGit } = require('./report/archive');
const { writeIndex } = require('./report/index');
const { provenance } = require('./report/provenance');
const { log, logTo } = require('./util/log');

/** A shallow copy of o without key. */
function omit(o, key) {
  const copy = { ...o };
  delete copy[key];
  return copy;
}

function newRunId(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${stamp}-${crypto.randomBytes(2).toString('hex')}`;
}

/**
 * @param {string} file scenario path
 * @param {{env?: object, out?: (line:string)=>void}} opts
 * @returns {Promise<{exitCode:number, reportDir?:string}>}
 */
async function runScenario(file, { env = process.env, out = (l) => process.stdout.write(`${l}\n`), index = true } = {}) {
  const { scenario: s, sources, errors } = resolveScenario(file, { env });
  if (errors.length) {
    process.stderr.write(`chainperf: the scenario is not valid; nothing was started.\n${errors.map((e) => `  ${e}`).join('\n')}\n`);
    return { exitCode: 2 };
  }
  const chain = chains[s.CHAIN];
  const runId = newRunId();
  const reportsRoot = path.resolve(s.REPORTS_DIR);
  const reportDir = path.join(reportsRoot, s.NAME, runId);
  fs.mkdirSync(reportDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `chainperf-${runId}-`));
  logTo(path.join(reportDir, 'run.log'));
  log(`run ${runId}: scenario ${file} (${s.CHAIN}/${s.CLIENT}, RUNTIME=${s.RUNTIME}, WORKLOAD=${s.WORKLOAD}, ${s.RATE ? `RATE=${s.RATE}/s` : `CONCURRENCY=${s.CONCURRENCY}`}, DURATION_S=${s.DURATION_S})`);
  log(`report folder: ${reportDir}`);

  const controller = new AbortController();
  const { signal } = controller;
  let interrupts = 0;
  const onSignal = (name) => {
    interrupts++;
    if (interrupts === 1) {
      log(`${name}: stopping the run, tearing down and writing the report (press again to force)`);
      controller.abort(new Error(`interrupted by ${name}`));
    } else {
      log(`${name} again: exiting now; processes may be left behind`);
      process.exit(130);
    }
  };
  const sigint = () => onSignal('SIGINT');
  const sigterm = () => onSignal('SIGTERM');
  process.on('SIGINT', sigint);
  process.on('SIGTERM', sigterm);

  const started = new Date();
  const run = {
    schema_version: 1,
    run_id: runId,
    scenario_name: s.NAME,
    status: 'running',
    started_at: started.toISOString(),
    ended_at: null,
    phase: 'starting',
    warnings: [],
  };
  const series = {};
  let stack = null;
  const phase = (name) => {
    run.phase = name;
  };

  try {
    const mix = loadMix(s.WORKLOAD);
    phase('provision');
    stack = s.RUNTIME === 'host'
      ? await startHost(s, { runId, workDir, log, signal })
      : await startAttach(s, { signal });
    run.node = { pid: stack.node.pid, cpus: stack.node.cpus || null };
    stack.onNodeExit((info) => {
      controller.abort(new Error(`the node exited during ${run.phase} (${info.signal ? `signal ${info.signal}` : `status ${info.code}`}); see node.log`));
    });

    phase('sync');
    log(`waiting for the node at ${s.RUNTIME === 'attach' ? '(RPC_URL)' : stack.rpcUrl} to be synced (SYNC_TIMEOUT_S=${s.SYNC_TIMEOUT_S})`);
    run.sync = await chain.waitForSync(stack.rpcUrl, { timeoutS: s.SYNC_TIMEOUT_S, signal, log });
    log(`synced after ${run.sync.seconds.toFixed(1)} s at block ${run.sync.head}`);

    if (s.CREATE_HISTORY === 'yes' || (s.CREATE_HISTORY === 'auto' && stack.runtime === 'host')) {
      phase('history');
      run.history = await chain.createHistory(stack.rpcUrl, {
        accounts: s.HISTORY_ACCOUNTS, transfers: s.HISTORY_TRANSFERS, calls: s.HISTORY_CONTRACT_CALLS, seed: s.SEED, signal, log,
      });
    }

    phase('harvest');
    const pool = await chain.harvest(stack.rpcUrl, { signal, log });
    const poolFile = path.join(reportDir, 'params.json');
    fs.writeFileSync(poolFile, `${JSON.stringify(pool)}\n`);
    log(`parameter pool: ${pool.blocks.length} blocks, ${pool.tx_hashes.length} transactions, ${pool.addresses.length} addresses, contract ${pool.contract || 'none'}`);
    const missing = chain.missingForMix(pool, Object.keys(mix));
    if (missing.length) throw new Error(`the chain lacks what the workload needs: ${missing.join('; ')}`);

    const spec = (over) => ({
      rpc_url: stack.rpcUrl, pool_file: poolFile, mix, timeout_ms: s.REQUEST_TIMEOUT_MS, seed: s.SEED, samples_dir: null, ...over,
    });

    if (s.WARMUP_S > 0) {
      phase('warmup');
      log(`warming up for ${s.WARMUP_S} s (not measured)`);
      const due = Date.now() + STARTUP_S * 1000 + s.RAMP_S * 1000 + s.WARMUP_S * 1000;
      const r = await runArtillery({ scenario: s, spec: spec({ start_at: due, end_at: due }), dir: workDir, name: 'warmup', processor: chain.processor, group: stack.generatorGroup, signal });
      if (r.code !== 0) throw new Error(`the load generator failed during warm-up (status ${r.code}); see ${r.logFile}`);
    }

    if (stack.cpu.calibrate) {
      phase('calibrate');
      const period = await stack.cpu.calibrate(signal);
      log(`the node's CPU counter refreshes every ${(period / 1000).toFixed(1)} s; windows are aligned to its refreshes`);
    }

    if (s.IDLE_S > 0) {
      phase('idle');
      run.idle = await measureIdle(stack, s.IDLE_S, signal);
    }

    phase('measure');
    const reps = [];
    if (s.SATURATE === 'yes') {
      const steps = [];
      const result = await searchSaturation({
        start: s.SATURATE_START_RPS,
        factor: s.SATURATE_FACTOR,
        maxSteps: s.SATURATE_MAX_STEPS,
        bisect: s.SATURATE_BISECT,
        bounds: {
          max_p99_ms: s.MAX_P99_MS ?? DEFAULT_BOUNDS.max_p99_ms,
          max_error_rate: s.MAX_ERROR_RATE ?? DEFAULT_BOUNDS.max_error_rate,
          min_achieved_ratio: DEFAULT_BOUNDS.min_achieved_ratio,
        },
        measure: async (rate, k) => {
          const m = await measureWorkload({ s: { ...s, RATE: rate, RAMP_S: 0, DURATION_S: s.SATURATE_STEP_S }, stack, chain, spec, workDir, reportDir, runId, signal, name: `step${k}` });
          steps.push({ ...m, idle: run.idle || null, figures: computeFigures({ window: m.window, cpu: m.cpu, idle: run.idle || null, samples: m.samples }) });
          return steps[steps.length - 1];
        },
        log,
      });
      // The report's window and figures are those of the highest rate that held (the last step when none did).
      const bestIndex = result.best ? result.steps.indexOf(result.best) : steps.length - 1;
      reps.push(steps[bestIndex]);
      run.saturation = {
        ...omit(result, 'best'),
        steps: result.steps.map((row) => omit(row, 'figures')), // each step's full figures stay out of run.json
        cost_per_million_at_max: costPerMillion(s.HOURLY_PRICE, result.max_sustainable_rps),
      };
      if (!result.reached_limit) run.warnings.push(`the saturation search stopped after ${s.SATURATE_MAX_STEPS} steps without crossing a bound: the node's limit is above ${result.max_sustainable_target_rps}/s`);
      if (result.steps.some((x) => !x.holds && x.generator_limited)) run.warnings.push('a failing saturation step had the load generator over 90% busy: the limit found may be the generator\'s (try GENERATOR=lean)');
      log(result.max_sustainable_rps === null ? `saturation: even ${s.SATURATE_START_RPS}/s did not hold` : `saturation: ${result.max_sustainable_rps.toFixed(0)} requests/s sustainable at ${result.cpu_ms_per_request_at_max.toFixed(3)} ms CPU/request`);
    }
    for (let r = 1; s.SATURATE !== 'yes' && r <= s.REPEAT; r++) {
      const idle = r === 1 ? run.idle || null : s.IDLE_S > 0 ? await measureIdle(stack, s.IDLE_S, signal) : null;
      if (s.DROP_CACHES === 'yes') dropPageCache(run.warnings);
      const m = await measureWorkload({ s, stack, chain, spec, workDir, reportDir, runId, signal, name: s.REPEAT > 1 ? `rep${r}` : 'measure' });
      reps.push({ ...m, idle, figures: computeFigures({ window: m.window, cpu: m.cpu, idle, samples: m.samples }) });
      if (s.REPEAT > 1) log(`repetition ${r} of ${s.REPEAT}: ${fmtHeadline(reps[r - 1].figures)}`);
    }
    // The report's window and figures are the median repetition's; every repetition is kept beside them.
    const m = reps[s.REPEAT > 1 ? medianIndex(reps) : 0];
    run.window = m.window;
    run.node = { ...run.node, ...m.node };
    run.figures = m.figures;
    run.figures.cost_per_million_requests = costPerMillion(s.HOURLY_PRICE, m.figures.rps);
    run.errors = m.samples.errors;
    run.generator = m.generator;
    Object.assign(series, m.series);
    if (s.REPEAT > 1) {
      run.repetitions = reps.map((x) => ({ window: x.window, idle: x.idle, node: x.node, generator: x.generator, figures: x.figures }));
      run.summary = summarizeRepetitions(reps);
      run.outliers = flagOutliers(reps);
      for (const o of run.outliers) run.warnings.push(`repetition ${o.repetition} is an outlier (${(o.deviation * 100).toFixed(1)}% from the median CPU time per request): ${o.reasons.join('; ')}`);
    }
    addWarnings(run, s, m.samples);
    if (s.PROFILE === 'methods') {
      phase('profile');
      run.methods_profile = await profileMethods({ s, stack, chain, spec, workDir, reportDir, runId, signal, mix, idle: run.idle || null });
    }
    run.status = 'ok';
    log(`done: ${fmtHeadline(run.figures)}`);
  } catch (err) {
    run.status = 'failed';
    run.error = signal.aborted && signal.reason ? signal.reason.message : err.message;
    log(`run failed during ${run.phase}: ${run.error}`);
  } finally {
    process.off('SIGINT', sigint);
    process.off('SIGTERM', sigterm);
    if (stack) {
      log('tearing down');
      await stack.teardown();
      if (stack.nodeLog && fs.existsSync(stack.nodeLog)) copyTail(stack.nodeLog, path.join(reportDir, 'node.log'), 400);
    }
    for (const f of ['measure.artillery.log', 'measure.artillery.yml', 'warmup.artillery.log']) {
      const src = path.join(workDir, f);
      if (fs.existsSync(src)) fs.copyFileSync(src, path.join(reportDir, f.replace('measure.', '')));
    }
    fs.rmSync(workDir, { recursive: true, force: true });
  }

  run.verdict = verdict(s, run.figures) || undefined;
  if (run.verdict) {
    log(run.verdict.pass ? `verdict: pass (${run.verdict.checks.map((c) => c.key).join(', ')})` : `verdict: FAIL: ${run.verdict.failed.join('; ')}`);
  }
  run.ended_at = new Date().toISOString();
  run.provenance = provenance({
    scenario: redactScenario(s),
    sources,
    client: stack ? stack.client : { name: s.CLIENT, version: null },
    runtime: s.RUNTIME,
    tools: stack && stack.prometheus ? { prometheus: stack.prometheus.version } : {},
  });
  writeReport(reportDir, run, series);
  logTo(null); // the folder is complete: what follows is not part of it
  if (index) writeIndex(reportsRoot);
  if (s.ARCHIVE === 'git') {
    try {
      const archived = archiveGit({ reportsRoot, reportDir, message: `chainperf: ${s.NAME} ${run.status}: ${run.figures ? fmtHeadline(run.figures) : run.error}`, log, extra: index ? ['INDEX.md'] : [] });
      log(`archived in git: ${archived.repository} ${archived.commit.slice(0, 12)}`);
    } catch (err) {
      log(`ARCHIVE=git failed, the report is only on disk: ${err.message}`);
      if (run.status === 'ok') run.status = 'failed';
      run.error = run.error || `archiving in git failed: ${err.message}`;
      writeReport(reportDir, run, series);
      if (index) writeIndex(reportsRoot);
    }
  }
  out(reportDir);
  return { exitCode: run.status === 'ok' && (!run.verdict || run.verdict.pass) ? 0 : 1, reportDir, run };
}

function fmtHeadline(f) {
  const net = f.cpu_ms_per_request_net === null ? '' : ` (${f.cpu_ms_per_request_net.toFixed(3)} net)`;
  return `${f.cpu_ms_per_request === null ? 'n/a' : f.cpu_ms_per_request.toFixed(3)} ms CPU/request${net}, ${f.rps.toFixed(0)} requests/s, p99 ${f.latency_ms.p99 === null ? 'n/a' : f.latency_ms.p99.toFixed(2)} ms`;
}

/** Things a reader of the figures must know. */
function addWarnings(run, s, samples) {
  const w = run.warnings;
  if (samples.before_window === 0) w.push('the load generator completed no request before the window opened: the window may start with idle time');
  if (samples.ok === 0) w.push('no request succeeded in the window: CPU time per request is not defined');
  if (samples.failed > 0) w.push(`${samples.failed} requests failed in the window (see Errors seen)`);
  if (samples.skipped > 0) w.push(`the open loop could not start ${samples.skipped} requests in the window (over 8192 unanswered at once): the node was far behind the rate offered`);
  if (!run.generator.cpus && s.RUNTIME === 'host') w.push(`the load generator shares the node's cores (CORES=${s.CORES} of ${os.cpus().length}): its CPU competes with the node's`);
  const g = run.generator;
  if (g.cpu_utilization > 0.9) w.push(`the load generator used ${(g.cpu_utilization * 100).toFixed(0)}% of its ${g.cores} core(s): it, not the node, may have been the limit`);
  const check = run.node.cpu_check;
  if (check && run.node.cpu_total_s > 0.5) {
    const diff = Math.abs(check.total_s - run.node.cpu_total_s) / run.node.cpu_total_s;
    if (diff > 0.05) w.push(`the node's CPU from /proc/PID/stat (${check.total_s.toFixed(3)} s) differs from the cgroup's (${run.node.cpu_total_s.toFixed(3)} s) by ${(diff * 100).toFixed(1)}%`);
  }
}

/**
 * PROFILE=methods: each method of the mix alone in its own window, heaviest
 * weight first, on the warm node. Net figures use the run's idle baseline.
 */
async function profileMethods({ s, stack, chain, spec, workDir, reportDir, runId, signal, mix, idle }) {
  const out = {};
  const methods = Object.keys(mix).sort((a, b) => mix[b] - mix[a]);
  for (const [i, method] of methods.entries()) {
    log(`profile: ${method} (${i + 1} of ${methods.length})`);
    const m = await measureWorkload({
      s: { ...s, DURATION_S: s.PROFILE_DURATION_S }, stack, chain, spec, workDir, reportDir, runId, signal, name: `method-${method}`, mix: { [method]: 1 },
    });
    const f = computeFigures({ window: m.window, cpu: m.cpu, idle, samples: m.samples });
    out[method] = {
      window: m.window,
      requests_ok: f.requests_ok,
      requests_failed: f.requests_failed,
      cpu_ms_per_request: f.cpu_ms_per_request,
      cpu_ms_per_request_net: f.cpu_ms_per_request_net,
      rps: f.rps,
      latency_ms: f.latency_ms,
      generator_cpu_utilization: m.generator.cpu_utilization === undefined ? null : m.generator.cpu_utilization,
    };
    log(`profile: ${method}: ${fmtHeadline(f)}`);
  }
  return out;
}

/** Drops the kernel's page cache (DROP_CACHES=yes); a failure is a warning, not the end of the run. */
function dropPageCache(warnings) {
  try {
    execFileSync('sync');
    fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
    log('dropped the page cache');
  } catch (err) {
    const w = `DROP_CACHES=yes but the page cache could not be dropped (${err.code || err.message}): the window ran warm`;
    if (!warnings.includes(w)) warnings.push(w);
  }
}

function copyTail(src, dst, lines) {
  const text = fs.readFileSync(src, 'utf8').split('\n');
  fs.writeFileSync(dst, text.slice(-lines).join('\n'));
}

module.exports = { runScenario, newRunId };
