'use strict';
// A gauge of the machine's speed that neither side of an A/B session can
// move: every 100 ms, one fixed unit of work timed in CPU time (getrusage),
// so that being preempted does not count. The unit has two parts: what a
// generator and a node compute per request (JSON in and out, a buffer copy,
// map lookups, a few reads of a small file; about 1 ms of CPU), and what they
// ask of the kernel's network stack (round trips of a small message over a
// loopback TCP connection to an echo in this process). Its cost per unit rises
// when the machine is slower (another tenant on the host's cores, caches, the
// clock, the network stack's softirqs), the same for both sides. npm run
// bench:ab with BENCH_AB_PROBE=1 runs it on the generator's core beside the
// sessions (about 2% of that core) and asks whether the pairs' B/A follows its
// B/A: if it does, a session could correct for it without letting a real
// difference of the sides in (see bench-ab.js).
//
// Run as a script it is the probe: one line per unit on stdout, "unix_ms
// cpu_us compute_us tcp_us" (the unit's CPU time, then its two parts').
// Required, it starts one pinned to a core and keeps its units.

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { machineSpeed } = require('../../src/ab/machine-speed');
const { mean, sd, t95 } = require('../../src/stats');

const PERIOD_MS = 100;

// the loopback part: this many round trips of a message of this many bytes, one after the other
const ROUND_TRIPS = 20;
const MESSAGE_BYTES = 256;

/** The compute part of a unit: a function doing the same work at every call. */
function computeUnit() {
  const response = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    result: { number: '0x1b4', hash: `0x${'ab'.repeat(32)}`, logsBloom: `0x${'00'.repeat(256)}` },
  });
  const src = Buffer.alloc(1 << 20, 7);
  const dst = Buffer.alloc(1 << 20);
  const map = new Map();
  for (let i = 0; i < 20000; i++) map.set(`k${i}`, i);
  const fd = fs.openSync(__filename, 'r');
  const small = Buffer.alloc(512);
  const sink = { n: 0 };
  process.on('exit', () => sink.n); // keeps the work from being optimized away
  return () => {
    for (let i = 0; i < 12; i++) {
      const o = JSON.parse(response);
      o.id = i;
      sink.n += JSON.stringify(o).length;
    }
    for (let i = 0; i < 4; i++) sink.n += src.copy(dst, 0, i * 1024);
    for (let i = 0; i < 1500; i++) sink.n += map.get(`k${(i * 7919) % 20000}`);
    for (let i = 0; i < 40; i++) sink.n += fs.readSync(fd, small, 0, small.length, 0);
  };
}

/** The loopback part: resolves to a function that makes ROUND_TRIPS round trips to an echo in this process. */
function loopbackUnit() {
  const message = Buffer.alloc(MESSAGE_BYTES, 0x61);
  return new Promise((resolve, reject) => {
    const server = net.createServer((s) => {
      s.setNoDelay(true);
      s.on('data', (d) => s.write(d));
    });
    server.unref(); // the echo never keeps the probe alive on its own
    server.listen(0, '127.0.0.1', () => {
      const client = net.connect(server.address().port, '127.0.0.1');
      client.setNoDelay(true);
      let back = 0;
      let echoed = () => {};
      client.on('data', (d) => {
        back += d.length; // an echo may come back in pieces
        if (back >= MESSAGE_BYTES) {
          back = 0;
          echoed();
        }
      });
      const one = () => new Promise((r) => ((echoed = r), client.write(message)));
      client.once('connect', () =>
        resolve(async () => {
          for (let i = 0; i < ROUND_TRIPS; i++) await one();
        }),
      );
      client.on('error', reject);
    });
  });
}

/** The probe's loop: one unit every PERIOD_MS, its CPU time and its parts' printed. */
async function probeLoop() {
  const compute = computeUnit();
  const loopback = await loopbackUnit();
  const cpuUs = () => {
    const c = process.cpuUsage();
    return c.user + c.system;
  };
  for (;;) {
    const t = Date.now();
    const c0 = cpuUs();
    compute();
    const c1 = cpuUs();
    await loopback();
    const c2 = cpuUs();
    process.stdout.write(`${Date.now()} ${c2 - c0} ${c1 - c0} ${c2 - c1}\n`);
    await new Promise((r) => setTimeout(r, Math.max(1, PERIOD_MS - (Date.now() - t))));
  }
}

/** The core the speed probe runs on: BENCH_AB_PROBE_CPU, or the last (the generator's in the host runtime). */
function probeCpu() {
  const n = os.cpus().length;
  const v = process.env.BENCH_AB_PROBE_CPU;
  if (v === undefined || v === '') return n - 1;
  if (!/^\d+$/.test(v) || Number(v) >= n)
    throw new Error(`BENCH_AB_PROBE_CPU=${v}: not a core of this machine (0 to ${n - 1})`);
  return Number(v);
}

/**
 * Starts the probe pinned to `cpu`; {units (each [unix_ms, cpu_us, compute_us, tcp_us]), stop()}. Says so on stderr
 * if it ends early.
 */
function startProbe(cpu) {
  const child = spawn('taskset', ['-c', String(cpu), process.execPath, path.resolve(__filename)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const units = [];
  let rest = '';
  child.stdout.on('data', (d) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop();
    for (const l of lines) units.push(l.split(' ').map(Number));
  });
  let stopped = false;
  const ended = (why) => {
    if (!stopped) process.stderr.write(`speed probe: ended (${why}); the windows after it have no probe figure\n`);
  };
  child.on('exit', (code, sig) => ended(sig || code));
  child.on('error', (err) => ended(err.message));
  return {
    units,
    stop() {
      stopped = true;
      child.kill('SIGTERM');
    },
  };
}

/**
 * The mean CPU per unit of the units inside a window ({start_ms, end_ms}); null with fewer than 5. The mean, not the
 * median: the node's figure is its whole CPU over the window's requests, so a burst of slowness counts in it, and a
 * median would leave that burst out of the gauge (the first measurement used the median: docs/results.md).
 */
function windowProbeUs(units, window) {
  const xs = units.filter((u) => u[0] >= window.start_ms && u[0] <= window.end_ms).map((u) => u[1]);
  return xs.length < 5 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Writes the units to `file`, one "unix_ms cpu_us compute_us tcp_us" line each, for a later look at any window. */
function saveUnits(units, file) {
  fs.writeFileSync(file, units.map((u) => u.join(' ')).join('\n') + '\n');
}

/** Every pair a session measured: a pilot's, the burn-in's and the interval's. */
const allPairs = (doc) => [
  ...(doc.pilot ? doc.pilot.pairs : []),
  ...(doc.burn_in ? doc.burn_in.pairs : []),
  ...doc.pairs,
];

/**
 * bench:ab's probe figures. Over the A/A sessions' pairs (every pair measured): the probe's log B/A spread, its
 * correlation with the node's and with the generator's, and the node's spread without the part the probe's predicts.
 * Over the A/B session's: the probe's mean B/A, in %, with its 95% interval (t over pairs), about 0 when neither
 * side moves the probe, the condition for correcting a session with it.
 */
function probeShare(units, aa, ab) {
  const probeUs = (w) => windowProbeUs(units, w.window);
  const pairs = aa.flatMap((s) => allPairs(s.doc));
  const m = machineSpeed(pairs, probeUs);
  const g = machineSpeed(pairs.map((p) => ({ a: gaugeAsNode(p.a, probeUs), b: gaugeAsNode(p.b, probeUs) })));
  const out = {
    aa_probe_pairs: m ? m.pairs : 0,
    aa_probe_sd_pct: m ? m.generator_sd_pct.toFixed(2) : 'n/a',
    aa_probe_correlation: m ? m.correlation.toFixed(2) : 'n/a',
    aa_pair_sd_without_probe_pct: m ? m.pair_sd_without_generator_pct.toFixed(2) : 'n/a',
    aa_probe_gen_correlation: g ? g.correlation.toFixed(2) : 'n/a',
    ab_probe_shift_pct: 'n/a',
    ab_probe_shift_ci_low: 'n/a',
    ab_probe_shift_ci_high: 'n/a',
  };
  const logs = ab
    ? allPairs(ab.doc)
        .map((p) => Math.log(probeUs(p.b) / probeUs(p.a)))
        .filter(Number.isFinite)
    : [];
  if (logs.length >= 2) {
    const [mu, h] = [mean(logs), (t95(logs.length - 1) * sd(logs)) / Math.sqrt(logs.length)];
    const pct = (x) => ((Math.exp(x) - 1) * 100).toFixed(2);
    Object.assign(out, {
      ab_probe_shift_pct: pct(mu),
      ab_probe_shift_ci_low: pct(mu - h),
      ab_probe_shift_ci_high: pct(mu + h),
    });
  }
  return out;
}

/** A window whose "node" figure is the probe's, so that machineSpeed correlates the probe with the generator. */
const gaugeAsNode = (w, probeUs) => ({ ...w, figures: { cpu_ms_per_request: probeUs(w) } });

if (require.main === module)
  probeLoop().catch((err) => {
    process.stderr.write(`speed probe: ${err.message}\n`);
    process.exit(1);
  });

module.exports = { startProbe, probeCpu, windowProbeUs, saveUnits, probeShare, allPairs, PERIOD_MS };
