#!/usr/bin/env node
'use strict';
// npm run bench:soak: a long run at a steady rate, watched from outside.
// Runs ./run.sh on a scenario (scenarios/geth-dev.env, host runtime) with
// RATE requests/s for SOAK_S seconds (default 1800) and samples, every 10 s,
// chainperf's own memory (the toolkit's process and its load generator's
// processes, resident set) and its disk use (the run's work folder, with the
// node's data and Prometheus' storage in it, and the report folder). Prints
// the samples, each figure's first, peak and last value, and the growth of
// the toolkit's memory over the second half of the run; then checks that the
// report holds the same files and run.json fields as a short run's.
//
//   SOAK_S=1800 SOAK_RATE=500 npm run bench:soak [-- scenarios/geth-dev.env]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const SOAK_S = Number(process.env.SOAK_S || 1800);
const RATE = Number(process.env.SOAK_RATE || 500);
const SHORT_S = 20;
const EVERY_MS = 10000;

/** Resident memory of a process in bytes (0 when gone). */
function rss(pid) {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    return 0;
  }
}

/** PIDs whose command line mentions marker, with their command lines. */
function processesWith(marker) {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(marker)) out.push({ pid: Number(d), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const du = (dir) => {
  try {
    return Number(
      execFileSync('du', ['-sb', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\t')[0],
    );
  } catch {
    return 0;
  }
};
const mib = (b) => Number((b / 2 ** 20).toFixed(1));

/** One run of the scenario for seconds; samples what it uses while it runs. */
async function run(scenario, seconds, { sample }) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'chainperf-soak-'));
  const reports = path.join(tmp, 'reports');
  const env = { ...process.env, TMPDIR: tmp, REPORTS_DIR: reports, RUNTIME: 'host', RATE: String(RATE) };
  Object.assign(env, { DURATION_S: String(seconds), WARMUP_S: '10', IDLE_S: '5', ARCHIVE: 'none' });
  const child = spawn(path.join(ROOT, 'run.sh'), [scenario], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => process.stderr.write(d));
  const samples = [];
  const t0 = Date.now();
  const timer = setInterval(() => {
    if (!sample) return;
    const gen = processesWith(tmp).filter((p) => /artillery/.test(p.cmd) && !p.cmd.startsWith('sh '));
    const work = fs.readdirSync(tmp).filter((f) => f.startsWith('chainperf-'));
    samples.push({
      t_s: Math.round((Date.now() - t0) / 1000),
      toolkit_rss_mib: mib(rss(child.pid)),
      generator_rss_mib: mib(gen.reduce((n, p) => n + rss(p.pid), 0)),
      work_mib: mib(work.reduce((n, f) => n + du(path.join(tmp, f)), 0)),
      prometheus_mib: mib(work.reduce((n, f) => n + du(path.join(tmp, f, 'prometheus')), 0)),
      reports_mib: mib(du(reports)),
    });
    const s = samples[samples.length - 1];
    process.stdout.write(`${JSON.stringify(s)}\n`);
  }, EVERY_MS);
  const code = await new Promise((r) => child.on('close', r));
  clearInterval(timer);
  const reportDir = stdout.trim().split('\n').pop();
  return { code, reportDir, samples, tmp };
}

/** The shape of a report: its files and run.json's field paths (two levels). */
function shape(dir) {
  const run = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
  const fields = new Set();
  for (const [k, v] of Object.entries(run)) {
    fields.add(k);
    if (v && typeof v === 'object' && !Array.isArray(v) && k !== 'provenance')
      for (const k2 of Object.keys(v)) fields.add(`${k}.${k2}`);
  }
  return { files: fs.readdirSync(dir).sort(), fields };
}

function summarize(samples, key) {
  const v = samples.map((s) => s[key]);
  const half = samples.filter((s) => s.t_s >= samples[samples.length - 1].t_s / 2);
  const growth = half.length > 1 ? half[half.length - 1][key] - half[0][key] : null;
  return { first: v[0], peak: Math.max(...v), last: v[v.length - 1], growth_second_half: growth };
}

async function main() {
  const scenario = process.argv[2] || path.join(ROOT, 'scenarios', 'geth-dev.env');
  process.stdout.write(`bench:soak: ${scenario}, RATE=${RATE}/s for ${SOAK_S} s, sampled every ${EVERY_MS / 1000} s\n`);
  const long = await run(scenario, SOAK_S, { sample: true });
  if (long.code !== 0) throw new Error(`the soak run exited with status ${long.code}`);
  const short = await run(scenario, SHORT_S, { sample: false });
  if (short.code !== 0) throw new Error(`the short run exited with status ${short.code}`);
  const [a, b] = [shape(long.reportDir), shape(short.reportDir)];
  const missing = [...b.fields].filter((f) => !a.fields.has(f));
  const extra = [...a.fields].filter((f) => !b.fields.has(f));
  const figures = JSON.parse(fs.readFileSync(path.join(long.reportDir, 'run.json'), 'utf8')).figures;
  const result = {
    seconds: SOAK_S,
    rate: RATE,
    achieved_rps: figures.rps,
    requests_ok: figures.requests_ok,
    machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.cpus()[0].model.trim()}`,
    toolkit_rss_mib: summarize(long.samples, 'toolkit_rss_mib'),
    generator_rss_mib: summarize(long.samples, 'generator_rss_mib'),
    work_folder_mib: summarize(long.samples, 'work_mib'),
    prometheus_mib: summarize(long.samples, 'prometheus_mib'),
    report_folder_mib: mib(du(long.reportDir)),
    same_report_files: JSON.stringify(a.files) === JSON.stringify(b.files),
    run_json_fields_missing_from_soak: missing,
    run_json_fields_only_in_soak: extra,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  for (const t of [long.tmp, short.tmp]) fs.rmSync(t, { recursive: true, force: true });
}

main().catch((err) => {
  process.stderr.write(`bench:soak: ${err.message}\n`);
  process.exit(1);
});
