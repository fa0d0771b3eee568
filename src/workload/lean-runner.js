'use strict';
// Runs a GENERATOR=lean pass without artillery (LEAN_RUNNER=chainperf, the
// default): the same script, the same engine (engines/artillery-engine-chainperf),
// the same spec and samples, but none of artillery's CLI, plugins and cloud
// platforms to load. artillery takes about 6 s and 5 CPU-seconds to start a
// pass; this runner a fraction of a second (docs/generator.md, `npm run bench:startup`).
//
//   node src/workload/lean-runner.js run --output FILE SCRIPT.yml
//
// The arguments are artillery's, so every place that starts a pass (here, or an
// agent on another machine) starts either. The script's phases give each virtual
// user its arrival instant (arrivalCount users evenly over the phase, as
// artillery spaces them); the users are shared between worker threads, one per
// core the process may run on (at most one per user), where the engine keeps its
// pools. The output file has artillery's shape for what the engine counts
// ({aggregate: {counters}}), written when the last user is done.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { EventEmitter } = require('node:events');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const yaml = require('js-yaml');

const ENGINE = path.join(__dirname, 'engines', 'artillery-engine-chainperf');

/** The instants (ms after the start) at which the script's phases bring in their virtual users. */
function arrivals(phases) {
  const out = [];
  let t0 = 0;
  for (const p of phases || []) {
    if (!(p.arrivalCount >= 0) || p.arrivalRate !== undefined)
      throw new Error(`the lean runner takes phases of arrivalCount only, not ${JSON.stringify(p)}`);
    const ms = (p.duration || 0) * 1000;
    for (let i = 0; i < p.arrivalCount; i++) out.push(t0 + (ms * i) / p.arrivalCount);
    t0 += ms;
  }
  return out;
}

/** Deals the arrivals round-robin to `threads` workers (every worker gets at least one user). */
function deal(times, threads) {
  const n = Math.max(1, Math.min(threads, times.length));
  const parts = Array.from({ length: n }, () => []);
  times.forEach((t, i) => parts[i % n].push(t));
  return parts;
}

/** Adds the counters of `more` into `into`. */
function addCounters(into, more) {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] || 0) + v;
  return into;
}

/** The script's scenario the engine runs (the lean generator writes one). */
function leanScenario(script) {
  const scenario = (script.scenarios || []).find((s) => s.engine === 'chainperf');
  if (!scenario) throw new Error('the script has no scenario for the chainperf engine (GENERATOR=lean)');
  return scenario;
}

/** In a worker: runs its users' scenarios at their instants; posts the counters once they are all done. */
function runWorker({ script, times, startedAt }) {
  const Engine = require(ENGINE);
  const ee = new EventEmitter();
  const counters = {};
  const add = (name, n = 1) => (counters[name] = (counters[name] || 0) + n);
  ee.on('counter', (name, n) => add(name, n));
  ee.on('started', () => {});
  const scenario = new Engine(script).createScenario(leanScenario(script), ee);
  let left = times.length;
  const report = () => parentPort.postMessage({ counters, lastAt: Date.now() });
  const finish = () => {
    if (--left === 0) report();
  };
  if (!left) report(); // phases that bring no user
  for (const t of times)
    setTimeout(
      () => {
        add('vusers.created');
        scenario({ vars: {} }, (err) => {
          if (err) {
            add('vusers.failed');
            add(`errors.${err.code || err.message}`);
            process.stderr.write(`a virtual user failed: ${err.stack || err}\n`);
          } else add('vusers.completed');
          finish();
        });
      },
      Math.max(0, startedAt + t - Date.now()),
    );
}

/** The runner's main thread: `run --output FILE SCRIPT`, as artillery takes them; resolves its exit status. */
async function main(argv) {
  const args = argv.slice(argv[0] === 'run' ? 1 : 0);
  const o = args.indexOf('--output');
  const output = o >= 0 ? args[o + 1] : null;
  const scriptFile = args.filter((a, i) => i !== o && i !== o + 1).pop();
  if (!scriptFile) throw new Error('usage: lean-runner.js run [--output FILE] SCRIPT');
  const script = yaml.load(fs.readFileSync(scriptFile, 'utf8'));
  leanScenario(script); // refused here, before any worker starts
  const times = arrivals(script.config && script.config.phases);
  const parts = deal(times, os.availableParallelism());
  const startedAt = Date.now();
  console.log(
    `chainperf lean runner: ${times.length} virtual user(s) on ${parts.length} worker thread(s), ${scriptFile}`,
  );
  const results = await Promise.all(
    parts.map(
      (part) =>
        new Promise((resolve, reject) => {
          let result = null;
          const w = new Worker(__filename, { workerData: { script, times: part, startedAt } });
          // its users are done: the engine's keep-alive sockets would keep the thread alive, as artillery's workers
          w.on('message', (m) => {
            result = m;
            w.terminate();
          });
          w.on('error', reject);
          w.on('exit', (code) =>
            result ? resolve(result) : reject(new Error(`a worker thread exited (status ${code}) before its users`)),
          );
        }),
    ),
  );
  const counters = results.reduce((acc, r) => addCounters(acc, r.counters), {});
  const lastAt = Math.max(...results.map((r) => r.lastAt));
  const report = {
    runner: 'chainperf lean runner (LEAN_RUNNER=chainperf)',
    aggregate: { counters, firstCounterAt: startedAt, lastCounterAt: lastAt },
    intermediate: [],
  };
  if (output) fs.writeFileSync(output, JSON.stringify(report, null, 2));
  for (const [k, v] of Object.entries(counters).sort()) console.log(`  ${k}: ${v}`);
  return 0; // as artillery: a failed user is counted (vusers.failed, errors.*) and logged, the pass goes on
}

if (!isMainThread) runWorker(workerData);
else if (require.main === module)
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`chainperf lean runner: ${err.message}`);
      process.exit(2);
    },
  );

module.exports = { arrivals, deal, addCounters, leanScenario, main };
