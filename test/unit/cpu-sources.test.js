'use strict';
const assert = require('node:assert/strict');
const http = require('node:http');
const { metricsSource, metricValue, readProcStat, pidSource } = require('../../src/measure/cpu');
const { startZombie } = require('../helpers');

describe('CPU sources', function () {
  this.timeout(20000);

  it('reads a sample from Prometheus text, with or without labels', () => {
    const text = '# TYPE x counter\nsystem_cpu_procload_total 3.25\nrpc_requests{run_id="a"} 17\n';
    assert.equal(metricValue(text, 'system_cpu_procload_total'), 3.25);
    assert.equal(metricValue(text, 'rpc_requests'), 17);
    assert.equal(metricValue(text, 'missing'), null);
    const summary = 'x{interval="1s",quantile="0.5"} 1.0\nx{interval="1s",quantile="0.99"} 6.25\n';
    assert.equal(metricValue(summary, 'x', ['quantile="0.99"']), 6.25, 'the sample whose labels hold those given');
    assert.equal(metricValue(summary, 'x', ['quantile="0.9"']), null);
  });

  it('/proc/PID/stat gives user and system seconds of a process', async () => {
    const end = Date.now() + 300;
    while (Date.now() < end); // burn some user CPU
    const c = readProcStat(process.pid);
    assert.ok(c.user_s > 0);
    const r = await pidSource(process.pid).read();
    assert.ok(r.total_s >= c.user_s);
  });

  it('a process that exited and is not reaped yet (a zombie) is gone, not read', async () => {
    const z = await startZombie();
    try {
      assert.throws(() => readProcStat(z.pid), new RegExp(`process ${z.pid} is gone \\(a zombie\\): the node exited`));
      await assert.rejects(pidSource(z.pid).read(), /a zombie/);
    } finally {
      z.parent.kill();
    }
  });

  it('a counter refreshed every 300 ms: windows align to refreshes and each edge reads the value published there', async () => {
    // The counter holds "seconds since t0", refreshed every 300 ms, like geth's every 3 s.
    const t0 = Date.now();
    const period = 300;
    const published = () => (Math.floor((Date.now() - t0) / period) * period) / 1000;
    const server = http.createServer((req, res) => res.end(`system_cpu_procload_total ${published()}\n`));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      const src = metricsSource(`http://127.0.0.1:${server.address().port}/`, 'system_cpu_procload_total', {
        pollMs: 10,
      });
      assert.equal(await src.calibrate(), 300);
      const start = src.align(Date.now() + 100);
      const end = start + 5 * period;
      const a = await src.readEdge(start);
      const b = await src.readEdge(end);
      assert.ok(Math.abs(b.total_s - a.total_s - 1.5) < 1e-9, `${b.total_s - a.total_s}`);
      // aligned: within half a period of the planned edge, where readEdge starts looking (the refresh times come from
      // calibrate's polls, which a loaded machine delays: CI saw 68 ms)
      assert.ok(Math.abs(a.seen_ms - start) < period / 2, `seen ${a.seen_ms - start} ms from the planned edge`);
    } finally {
      server.close();
    }
  });

  it('says so when the metrics endpoint lacks the counter', async () => {
    const server = http.createServer((req, res) => res.end('other 1\n'));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    try {
      const src = metricsSource(`http://127.0.0.1:${server.address().port}/`);
      await assert.rejects(src.calibrate(), /metrics endpoint \(METRICS_URL\) has no system_cpu_procload_total/);
    } finally {
      server.close();
    }
  });
});
