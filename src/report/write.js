'use strict';
// Writes a run's report folder: run.json (schema/run.schema.json),
// series.json (per-second data behind the charts), summary.md and charts/.
// renderReport() rebuilds summary.md and the charts from run.json and
// series.json alone, so a report folder can be re-rendered later.

const fs = require('node:fs');
const path = require('node:path');
const { lineChart, barChart } = require('./charts');
const { scrub, scrubDeep } = require('../util/scrub');
const { charts } = require('./run-charts');
const { summary } = require('./summary');

/** Every file of a report passes the scrubber: no secret of the run is written out. */
function writeJson(file, data) {
  fs.writeFileSync(file, `${JSON.stringify(scrubDeep(data), null, 2)}\n`);
}

function writeText(file, text) {
  fs.writeFileSync(file, scrub(text));
}

/** Writes summary.md and charts/ from run.json and series.json in dir. */
function renderReport(dir) {
  const run = JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8'));
  const seriesFile = path.join(dir, 'series.json');
  const series = fs.existsSync(seriesFile) ? JSON.parse(fs.readFileSync(seriesFile, 'utf8')) : {};
  fs.mkdirSync(path.join(dir, 'charts'), { recursive: true });
  for (const [name, svg] of Object.entries(charts(run, series))) writeText(path.join(dir, 'charts', name), svg);
  if (run.saturation) {
    const steps = [...run.saturation.steps].sort((a, b) => a.target_rps - b.target_rps);
    writeText(
      path.join(dir, 'charts', 'saturation-latency.svg'),
      lineChart({
        title: 'p99 latency against offered rate',
        xLabel: 'requests/s offered',
        yLabel: 'p99 ms',
        series: [
          { name: 'p99', points: steps.map((x) => [x.target_rps, x.p99_ms]), markers: true },
          { name: 'bound', points: steps.map((x) => [x.target_rps, run.saturation.bounds.max_p99_ms]), dashed: true },
        ],
        note: 'one window per step, open loop',
      }),
    );
    writeText(
      path.join(dir, 'charts', 'saturation-cpu.svg'),
      lineChart({
        title: 'Node CPU time per request against rate',
        xLabel: 'requests/s answered',
        yLabel: 'CPU ms per request',
        series: [
          {
            name: 'CPU ms/request',
            points: [...steps]
              .sort((a, b) => a.achieved_rps - b.achieved_rps)
              .map((x) => [x.achieved_rps, x.cpu_ms_per_request]),
            markers: true,
          },
        ],
        note: "node CPU from counters at each step's edges",
      }),
    );
  }
  if (run.methods_profile) {
    const bars = Object.entries(run.methods_profile)
      .map(([label, x]) => ({ label, value: x.cpu_ms_per_request }))
      .sort((a, b) => b.value - a.value);
    writeText(
      path.join(dir, 'charts', 'methods.svg'),
      barChart({
        title: 'Node CPU time per request, each method alone',
        xLabel: 'CPU ms per request (gross)',
        bars,
        note: 'one window per method on the warm node',
      }),
    );
  }
  writeText(path.join(dir, 'summary.md'), summary(run));
}

function writeReport(dir, run, series) {
  fs.mkdirSync(dir, { recursive: true });
  writeJson(path.join(dir, 'run.json'), run);
  writeJson(path.join(dir, 'series.json'), series || {});
  renderReport(dir);
}

module.exports = { writeReport, renderReport, summary };
