#!/usr/bin/env node
'use strict';
// Where a command's CPU goes, by kind of process: runs the command, reads every
// process's CPU time from /proc every 2 s while it runs, and prints the
// CPU-seconds of each kind (geth, the load generators, chainperf itself, the
// test runner, containers' processes by their name), how many processes of
// each kind it saw, with the machine's busy and idle CPU over the same span
// and its busy share over each 10 s. Every process on the machine is
// counted, not only the command's: run it on a machine doing nothing else.
//
//   node scripts/cpu-by-process.js -- .ci/run
//   node scripts/cpu-by-process.js --json out.json -- npm run test:integration -- ab.test.js
//   node scripts/cpu-by-process.js --every 500 -- ...    # read every 500 ms (default 2000)
//
// A process that starts and ends between two reads is missed, and one that
// ends loses its CPU since the last read: the printed "seen" total is a lower
// bound, the machine's busy CPU the whole.

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { machineCpu } = require('./lib/idle-lane');

const HZ = 100; // USER_HZ: /proc's clock ticks per second on Linux

/** The kind of a process, from its name and command line. */
function kindOf(comm, cmd) {
  if (!/^node\b/.test(comm) && !/(^|\/)node /.test(cmd.slice(0, 60))) return comm.replace(/[/:]\d+.*$/, '');
  const kinds = [
    [/lean-runner\.js/, 'lean runner (generator)'], // before artillery: its script is a .artillery.yml
    [/artillery/, 'artillery (generator)'],
    [/mocha/, 'mocha (test runner)'],
    [/chopsticks/, 'chopsticks'],
    [/eslint|prettier|tsc /, 'lint'],
    [/scripts\/|src\/cli|cli\.js/, 'chainperf and its scripts'],
  ];
  const hit = kinds.find(([re]) => re.test(cmd));
  return hit ? hit[1] : 'node (other)';
}

/** {key: {kind, cpu}} of every process now, key = pid and start time (a reused pid is another process). */
function readAll() {
  const out = {};
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out[`${pid}:${f[19]}`] = { kind: kindOf(comm, cmd), cpu: (Number(f[11]) + Number(f[12])) / HZ };
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** The machine's busy and idle CPU-seconds since boot (/proc/stat, as the test runner's idle lane reads it). */
function machine() {
  const c = machineCpu();
  return { busy: c.busy / HZ, idle: (c.total - c.busy) / HZ };
}

/**
 * The machine's busy share over each span of about 10 s (at the reads' pace): when its cores idled. look() at every
 * read; spans: [{from_s, busy_share}]; summary(): a line with how many spans were under 50, 70 and 90% busy, and
 * the busy share of each minute.
 */
function busyTimeline(t0, m0) {
  const spans = [];
  let mark = { at: t0, ...m0 };
  const look = () => {
    const m = machine();
    if (Date.now() - mark.at < 10000) return;
    const busy = m.busy - mark.busy;
    const all = busy + (m.idle - mark.idle);
    if (all > 0) spans.push({ from_s: Math.round((mark.at - t0) / 1000), busy_share: Number((busy / all).toFixed(3)) });
    mark = { at: Date.now(), ...m };
  };
  const summary = () => {
    const under = (share) => spans.filter((t) => t.busy_share < share).length;
    const minutes = [];
    for (let i = 0; i < spans.length; i += 6) {
      const m = spans.slice(i, i + 6);
      minutes.push(Math.round((100 * m.reduce((a, t) => a + t.busy_share, 0)) / m.length));
    }
    return `the cores' busy share over ${spans.length} spans of about 10 s: under 50% in ${under(0.5)}, under 70% in ${under(0.7)}, under 90% in ${under(0.9)}; by minute (%): ${minutes.join(' ')}`;
  };
  return { spans, look, summary };
}

/** {command, jsonFile, everyMs} from the arguments; the usage and exit status 2 without a command. */
function parseArgs(argv) {
  const dash = argv.indexOf('--');
  const opts = argv.slice(0, dash < 0 ? 0 : dash);
  const command = argv.slice(dash + 1);
  if (dash < 0 || !command.length) {
    process.stderr.write('usage: node scripts/cpu-by-process.js [--json FILE] [--every MS] -- COMMAND [ARGS...]\n');
    process.exit(2);
  }
  const opt = (name) => (opts.includes(name) ? opts[opts.indexOf(name) + 1] : null);
  return { command, jsonFile: opt('--json'), everyMs: Number(opt('--every') || 2000) };
}

function main(argv) {
  const { command, jsonFile, everyMs } = parseArgs(argv);
  const before = readAll(); // what ran before the command: only its CPU from now on counts
  const seen = {};
  const m0 = machine();
  const t0 = Date.now();
  const timeline = busyTimeline(t0, m0);
  const look = () => {
    timeline.look();
    for (const [key, p] of Object.entries(readAll())) {
      const base = before[key] ? before[key].cpu : 0;
      seen[key] = { kind: p.kind, cpu: p.cpu - base };
    }
  };
  const timer = setInterval(look, everyMs);
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    clearInterval(timer);
    look();
    const m1 = machine();
    const kinds = {};
    const counts = {}; // processes of each kind seen
    for (const p of Object.values(seen)) {
      kinds[p.kind] = (kinds[p.kind] || 0) + p.cpu;
      counts[p.kind] = (counts[p.kind] || 0) + 1;
    }
    const rows = Object.entries(kinds)
      .filter(([, s]) => s >= 0.5)
      .sort((a, b) => b[1] - a[1]);
    const doc = {
      command: command.join(' '),
      wall_s: (Date.now() - t0) / 1000,
      machine_busy_cpu_s: m1.busy - m0.busy,
      machine_idle_cpu_s: m1.idle - m0.idle,
      seen_cpu_s: Object.values(kinds).reduce((a, b) => a + b, 0),
      kinds: Object.fromEntries(rows.map(([k, s]) => [k, Number(s.toFixed(2))])),
      processes: Object.fromEntries(rows.map(([k]) => [k, counts[k]])),
      timeline: timeline.spans,
    };
    const lines = [
      `cpu-by-process: ${doc.wall_s.toFixed(0)} s; the machine busy ${doc.machine_busy_cpu_s.toFixed(0)} CPU-s, idle ${doc.machine_idle_cpu_s.toFixed(0)}; seen in processes ${doc.seen_cpu_s.toFixed(0)}`,
      timeline.summary(),
      ...rows.map(
        ([k, s]) =>
          `${s.toFixed(1).padStart(9)} CPU-s  ${((s / doc.machine_busy_cpu_s) * 100).toFixed(1).padStart(5)}%  ${String(counts[k]).padStart(5)} processes  ${k}`,
      ),
    ];
    process.stderr.write(`${lines.join('\n')}\n`);
    if (jsonFile) fs.writeFileSync(jsonFile, `${JSON.stringify(doc, null, 1)}\n`);
    process.exitCode = code === null ? 128 + (signal === 'SIGINT' ? 2 : 15) : code;
  });
}

if (require.main === module) main(process.argv.slice(2));

module.exports = { kindOf };
