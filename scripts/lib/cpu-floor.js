'use strict';
// The machine's own noise floor for CPU time: a fixed amount of CPU-bound work
// (integer arithmetic over a 2 MiB table, so caches count too), done once per
// window, timed by this process's CPU time. On a quiet, dedicated core every
// window takes the same CPU time; on a shared virtual machine it does not, and
// the CV of those times is the least CV any CPU-time figure can have over
// windows of that length on that core.
//
// Run pinned to the core to measure: node cpu-floor.js <windows> <seconds>
// Prints one line of JSON: {"unit_us": ..., "units": ..., "window_cpu_s": [...]}.

const [windows, seconds] = process.argv.slice(2).map(Number);
if (!(windows >= 2 && seconds > 0)) {
  process.stderr.write('usage: cpu-floor.js <windows (2 or more)> <seconds per window>\n');
  process.exit(2);
}

const table = new Uint32Array(512 * 1024);
for (let i = 0; i < table.length; i++) table[i] = (i * 2654435761) >>> 0;
let sink = 0;
function unit() {
  let x = 1;
  let j = 0;
  for (let i = 0; i < 20000; i++) {
    j = (j + table[j & 524287] + i) & 524287;
    x = (x * 31 + table[j]) | 0;
  }
  sink ^= x;
}
const cpuS = (from) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1e6;
};

// Warm up (the JIT settles), then size a window: how many units fill `seconds` of CPU.
for (let k = 0; k < 2000; k++) unit();
const c0 = process.cpuUsage();
let n = 0;
while (cpuS(c0) < 2) {
  unit();
  n++;
}
const units = Math.max(1, Math.round((n / cpuS(c0)) * seconds));
const windowCpu = [];
for (let w = 0; w < windows; w++) {
  const c = process.cpuUsage();
  for (let k = 0; k < units; k++) unit();
  windowCpu.push(Number(cpuS(c).toFixed(4)));
}
process.stdout.write(
  `${JSON.stringify({ unit_us: Number(((seconds / units) * 1e6).toFixed(2)), units, window_cpu_s: windowCpu, sink: sink & 1 })}\n`,
);
