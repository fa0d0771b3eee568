#!/usr/bin/env node
'use strict';
// chainperf command line. run.sh hands over to this file.
//
//   chainperf <scenario.env>          run a scenario (same as: run <scenario.env>)
//   chainperf render <report-folder>  rebuild summary.md and charts from run.json
//   chainperf install <scenario.env>  install what the scenario needs (client, Prometheus, images) and stop
//   chainperf images <scenario.env>   make sure every image a compose scenario needs is here (build locally)
//   chainperf config <scenario.env>   print the resolved scenario and what would run, start nothing
//   chainperf <plan.env>              run a plan (a file with BASE= and SWEEP=), resuming an interrupted one
//   chainperf compare <a> <b>         compare two runs or two plans
//   chainperf ab <a.env> <b.env>      interleaved A/B session: ratio B/A with a 95% interval from pairs of windows
//   chainperf saturate <scenario.env> search the highest sustainable request rate (SATURATE=yes)
//   chainperf capacity <scenario.env> which instance, how many replicas, at what cost for TARGET_RPS (src/capacity)
//   chainperf record --to URL --out FILE   a recording JSON-RPC proxy (src/record)
//   chainperf mix FILE [--name NAME]  a workload file from a capture
//   chainperf clean                   reclaim what killed runs left (src/reclaim.js)
//
// Exit status: 0 run ok, 1 run failed (report written), 2 invalid input.

const fs = require('node:fs');
const path = require('node:path');
const { runScenario } = require('./run');
const { runPlan } = require('./plan/run');
const { runCapacity } = require('./capacity/run');
const { isPlanFile } = require('./plan/parse');
const { compare, writeCompare } = require('./compare');
const { runAb } = require('./ab/run');
const { renderReport } = require('./report/write');
const { resolveScenario } = require('./scenario/resolve');
const clients = require('./clients');
const chains = require('./chains');
const runtimes = require('./runtime');
const { ensureProfileTools } = require('./measure/profilers');
const { log } = require('./util/log');
const { scrub } = require('./util/scrub');
const { reportProblems } = require('./util/problems');

const USAGE = `usage: ./run.sh <scenario.env>            run a scenario, print its report folder last
       ./run.sh render <report-folder>    rebuild summary.md and charts from run.json
       ./run.sh install <scenario.env>    install what the scenario needs (client, Prometheus, images) now
       ./run.sh images <scenario.env>     build the images a compose scenario needs where none can be pulled
       ./run.sh config <scenario.env>     print the resolved scenario, the node's command line or compose
                                          configuration and the images, without starting anything
       ./run.sh <plan.env>                run a plan: every point of its sweep (resumes when run again)
       ./run.sh compare <a> <b>           compare two run folders or two plan folders
       ./run.sh ab <a.env> <b.env>        measure A and B alternately, pair after pair, until B/A is known to ±AB_TARGET_PCT
       ./run.sh saturate <scenario.env>   search the highest sustainable request rate
       ./run.sh capacity <scenario.env>   the cheapest fleet of INSTANCES for TARGET_RPS under the bounds, verified
                                          (resumes when run again)
       ./run.sh record --listen [HOST:]PORT --to URL --out FILE   record JSON-RPC traffic through a proxy (until Ctrl-C)
       ./run.sh mix FILE [--name NAME]    write workloads/<NAME>.yml from a capture's methods
       ./run.sh clean                     list the runs on this host; reclaim those that were killed (processes,
                                          cgroups, compose projects, work folders; run.json with status killed)
Scenario keys: docs/scenario-keys.md. Override any key from the environment: DURATION_S=20 ./run.sh scenarios/geth-dev.env`;

// A closed pipe on standard output or error (`| head`, a closed terminal, a
// killed parent) must not end a run before it has torn down what it started.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

const usage = () => {
  process.stderr.write(`${USAGE}\n`);
  return 2;
};

/**
 * The subcommands: args is how many arguments one takes (checked here), when its function does not check them itself.
 */
const COMMANDS = {
  render: {
    args: 1,
    run: (rest) => {
      renderReport(rest[0]);
      process.stdout.write(`${rest[0]}\n`);
      return 0;
    },
  },
  install: { run: (rest) => install(rest) },
  images: { run: (rest) => install(rest, { runtime: 'compose', keep: ['swarm'] }) },
  compare: { run: (rest) => compareCommand(rest) },
  ab: { args: 2, run: async (rest) => (await runAb(rest[0], rest[1])).exitCode },
  config: { args: 1, run: (rest) => require('./config').configCommand(rest) },
  record: { run: (rest) => require('./record/cli').record(rest) },
  mix: {
    run: (rest) => require('./record/cli').mix(rest, { workloadsDir: require('./util/paths').WORKLOADS_DIR }),
  },
  clean: { args: 0, run: () => require('./reclaim').cleanCommand() },
  capacity: { args: 1, run: async (rest) => (await runCapacity(rest[0])).exitCode },
  saturate: {
    args: 1,
    run: async (rest) => (await runScenario(rest[0], { env: { ...process.env, SATURATE: 'yes' } })).exitCode,
  },
};

async function main(argv) {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    process.stderr.write(`${USAGE}\n`);
    return cmd ? 0 : 2;
  }
  const command = Object.prototype.hasOwnProperty.call(COMMANDS, cmd) ? COMMANDS[cmd] : null;
  if (command) {
    if (command.args !== undefined && rest.length !== command.args) return usage();
    return command.run(rest);
  }
  const file = cmd === 'run' ? rest[0] : cmd;
  const extra = cmd === 'run' ? rest.slice(1) : rest;
  if (!file || extra.length) return usage();
  const { exitCode } = fs.existsSync(file) && isPlanFile(file) ? await runPlan(file) : await runScenario(file);
  return exitCode;
}

function compareCommand(args) {
  if (args.length !== 2) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let c;
  try {
    c = compare(args[0], args[1]);
  } catch (err) {
    process.stderr.write(`chainperf compare: ${scrub(err.message)}\n`);
    return 2;
  }
  const root = path.resolve(process.env.REPORTS_DIR || 'reports');
  const out = path.join(
    root,
    'compare',
    `${path.basename(path.resolve(args[0]))}-vs-${path.basename(path.resolve(args[1]))}`,
  );
  process.stdout.write(writeCompare(c, out));
  process.stdout.write(`${out}\n`);
  return 0;
}

/** Builds or installs the scenario's client and Prometheus, so a first run starts measuring at once. */
async function install(args, { runtime: only, keep = [] } = {}) {
  if (args.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  // images: a compose scenario's, or a swarm one's as it is (its keys name images of its own: SWARM_GENERATOR_NODES)
  const asIs = only && keep.includes(resolveScenario(args[0]).scenario.RUNTIME);
  const { scenario, errors } = resolveScenario(
    args[0],
    only && !asIs ? { env: { ...process.env, RUNTIME: only } } : {},
  );
  if (errors.length) {
    reportProblems('the scenario is not valid.', errors);
    return 2;
  }
  const client = clients[scenario.CLIENT];
  if (scenario.NODE_PROFILE === 'cpu') await ensureProfileTools(scenario, client, log);
  const runtime = runtimes[scenario.RUNTIME];
  for (const line of await runtime.install(scenario, { log, client, chain: chains[scenario.CHAIN] }))
    log(`${runtime.name === 'attach' ? 'RUNTIME=attach: ' : ''}${line}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`chainperf: ${scrub(err.stack || err.message)}\n`);
    process.exit(1);
  },
);
