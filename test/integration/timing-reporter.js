'use strict';
// mocha's spec reporter, plus the wall time each test file took (its hooks
// included), and the slowest files at the end: where the integration suite's
// minutes go, printed in every CI log.

const Mocha = require('mocha');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;

class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const started = new Map();
    const files = [];
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent && suite.parent.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (!started.has(suite)) return;
      const s = (Date.now() - started.get(suite)) / 1000;
      files.push({ title: suite.title, s });
      process.stdout.write(`    [${s.toFixed(0)} s for this suite, hooks included]\n`);
    });
    runner.once(EVENT_RUN_END, () => {
      const top = [...files].sort((a, b) => b.s - a.s).slice(0, 12);
      const total = files.reduce((n, f) => n + f.s, 0);
      process.stdout.write(`\n  Slowest suites (of ${files.length}, ${(total / 60).toFixed(1)} min in all):\n`);
      for (const f of top) process.stdout.write(`    ${f.s.toFixed(0).padStart(5)} s  ${f.title}\n`);
    });
  }
}

module.exports = TimingReporter;
