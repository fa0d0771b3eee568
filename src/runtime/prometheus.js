'use strict';
// A Prometheus server beside a node started on the host: it scrapes the
// node's metrics every second, with every series labelled by the run id (and
// with REPLICAS, each replica's, labelled by its name).

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { sleep } = require('../util/time');

/** targets: host:port strings, or {address, replica} for the replicas of a fleet. */
function scrapeConfig({ runId, targets, metricsPath }) {
  const lines = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 15s',
    'scrape_configs:',
    '  - job_name: node',
    `    metrics_path: ${metricsPath}`,
    '    static_configs:',
  ];
  for (const t of targets) {
    const { address, replica } = typeof t === 'string' ? { address: t, replica: null } : t;
    lines.push(`      - targets: ['${address}']`, '        labels:', `          run_id: '${runId}'`);
    if (replica) lines.push(`          replica: '${replica}'`);
  }
  return [...lines, ''].join('\n');
}

/** Starts Prometheus; resolves once it answers /-/ready. */
async function startPrometheus({ bin, workDir, port, runId, targets, metricsPath, signal }) {
  const dir = path.join(workDir, 'prometheus');
  fs.mkdirSync(dir, { recursive: true });
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(config, scrapeConfig({ runId, targets, metricsPath }));
  const logFd = fs.openSync(path.join(dir, 'prometheus.log'), 'a');
  const child = spawn(
    bin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1d',
    ],
    { stdio: ['ignore', logFd, logFd] },
  );
  fs.closeSync(logFd);
  const url = `http://127.0.0.1:${port}`;
  let exited = null;
  child.on('exit', (code) => {
    exited = code;
  });
  const deadline = Date.now() + 30000;
  for (;;) {
    if (exited !== null)
      throw new Error(`Prometheus exited with status ${exited}; see ${path.join(dir, 'prometheus.log')}`);
    try {
      if ((await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('Prometheus did not become ready in 30 s');
    }
    await sleep(200, signal);
  }
  return {
    url,
    child,
    ...queryClient(url),
    async stop() {
      if (exited !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGCONT'); // a frozen Prometheus could not act on SIGTERM
      child.kill('SIGTERM');
      await Promise.race([gone, sleep(5000)]);
      if (exited === null) child.kill('SIGKILL');
    },
  };
}

/** How long a query may take: a frozen Prometheus must not hold the run. */
const QUERY_TIMEOUT_MS = 5000;

/** Instant queries against the Prometheus at url; each times out after timeoutMs. */
function queryClient(url, { timeoutMs = QUERY_TIMEOUT_MS } = {}) {
  const instant = async (query, ms) => {
    const q = new URLSearchParams({ query, time: String(ms / 1000) });
    let res;
    try {
      res = await fetch(`${url}/api/v1/query?${q}`, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw new Error(
        `Prometheus at ${url} did not answer${err.name === 'TimeoutError' ? ` within ${timeoutMs} ms` : `: ${(err.cause && err.cause.code) || err.message}`}`,
      );
    }
    if (!res.ok) throw new Error(`Prometheus at ${url}: HTTP ${res.status}`);
    const body = await res.json();
    return (body.data && body.data.result) || [];
  };
  return {
    /** The value of an instant vector query at time ms (the last sample before it), or null. */
    async valueAt(query, ms) {
      const r = (await instant(query, ms))[0];
      return r ? Number(r.value[1]) : null;
    },
    /** An instant vector at time ms as {label value: number}, keyed by `label`, or null. */
    async vectorAt(query, ms, label = 'method') {
      const rows = await instant(query, ms);
      if (!rows.length) return null;
      return Object.fromEntries(rows.map((r) => [r.metric[label] || '', Number(r.value[1])]));
    },
  };
}

module.exports = { startPrometheus, scrapeConfig, queryClient, QUERY_TIMEOUT_MS };
