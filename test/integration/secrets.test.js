'use strict';
// No secret in any artifact. A real geth, started by the test, sits behind a
// small reverse proxy that answers only requests carrying the sentinel
// credentials (Basic auth) and keys (a path token and a query key), as a
// provider's endpoint does. chainperf attaches to it through RPC_URL and
// METRICS_URL with those sentinels, archives in git, and then a plan sweeps
// RPC_URL over two keyed URLs. Every file, folder name, the git history and
// the captured output are searched for every sentinel.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const WebSocket = require('ws');
const { freePort } = require('../../src/util/net');
const { startRun, readRun } = require('./harness');
const { startGeth } = require('./node');
const { tmpDir, writeScenario } = require('../helpers');

const S = {
  user: 'sentuser7x',
  pass: 'Sentinel-Pass-91',
  path: 'SentPathTok3n4321',
  query: 'SentQueryKey777',
  muser: 'sentmuser8',
  mpass: 'SentMPass-62',
  mpath: 'SentMPathTok9876',
  mquery: 'SentMQueryKey555',
  planA: 'SentPlanTokA111',
  planB: 'SentPlanTokB222',
};
const basic = (u, p) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/**
 * A reverse proxy to geth that forwards only requests with the right
 * credentials and keys: POST /<token>?apikey=<key> to the RPC endpoint, a
 * WebSocket to /<token>?apikey=<key> to geth's WebSocket, GET
 * /<metrics token>/debug/metrics/prometheus?token=<key> to the metrics one.
 * Counts what it forwarded and what it refused.
 */
async function startProxy(node, wsPort) {
  const rpc = new URL(node.rpcUrl);
  const metrics = new URL(node.metricsUrl);
  const tokens = new Set([S.path, S.planA, S.planB]);
  const counts = { rpc: 0, ws: 0, metrics: 0, refused: 0, refusedWhy: [] };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const forward = (req, res, target, targetPath) => {
    const up = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: targetPath,
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] || 'application/json' },
        agent,
      },
      (r) => {
        res.writeHead(r.statusCode, { 'content-type': r.headers['content-type'] || 'application/json' });
        r.pipe(res);
      },
    );
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://proxy');
    const seg = u.pathname.split('/')[1];
    if (
      req.method === 'POST' &&
      tokens.has(seg) &&
      u.searchParams.get('apikey') === S.query &&
      req.headers.authorization === basic(S.user, S.pass)
    ) {
      counts.rpc++;
      return forward(req, res, rpc, '/');
    }
    if (
      req.method === 'GET' &&
      seg === S.mpath &&
      u.searchParams.get('token') === S.mquery &&
      req.headers.authorization === basic(S.muser, S.mpass)
    ) {
      counts.metrics++;
      return forward(req, res, metrics, metrics.pathname);
    }
    counts.refused++;
    if (counts.refusedWhy.length < 5)
      counts.refusedWhy.push(`${req.method} ${u.pathname.length} auth:${Boolean(req.headers.authorization)}`);
    req.resume();
    return res.writeHead(401).end();
  });
  const wss = new WebSocket.Server({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url, 'http://proxy');
    if (
      !tokens.has(u.pathname.split('/')[1]) ||
      u.searchParams.get('apikey') !== S.query ||
      req.headers.authorization !== basic(S.user, S.pass)
    ) {
      counts.refused++;
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    counts.ws++;
    wss.handleUpgrade(req, socket, head, (client) => {
      const up = new WebSocket(`ws://127.0.0.1:${wsPort}`);
      const queued = [];
      up.on('open', () => queued.splice(0).forEach((m) => up.send(m)));
      up.on('message', (m) => client.send(m.toString()));
      client.on('message', (m) =>
        up.readyState === WebSocket.OPEN ? up.send(m.toString()) : queued.push(m.toString()),
      );
      const close = () => {
        client.terminate();
        up.terminate();
      };
      up.on('close', close);
      up.on('error', close);
      client.on('close', close);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `127.0.0.1:${server.address().port}`;
  return {
    counts,
    rpcUrl: (token = S.path, scheme = 'http') => `${scheme}://${S.user}:${S.pass}@${base}/${token}?apikey=${S.query}`,
    metricsUrl: `http://${S.muser}:${S.mpass}@${base}/${S.mpath}/debug/metrics/prometheus?token=${S.mquery}`,
    close: () => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
}

/** Every path under dir (files and folders), skipping .git (its history is searched through git). */
function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '.git') continue;
    const p = path.join(dir, e.name);
    out.push(p);
    if (e.isDirectory()) walk(p, out);
  }
  return out;
}

/** Where each sentinel appears: file contents, path names, git history, captured output. */
function findSentinels(reports, outputs) {
  const hits = [];
  const search = (where, text) => {
    for (const [name, value] of Object.entries(S)) if (text.includes(value)) hits.push(`${name} in ${where}`);
  };
  for (const p of walk(reports)) {
    search(`the name ${path.relative(reports, p)}`, p);
    if (fs.statSync(p).isFile()) search(path.relative(reports, p), fs.readFileSync(p, 'latin1'));
  }
  const git = execFileSync('git', ['log', '-p', '--all', '--format=%H%n%B'], {
    cwd: reports,
    encoding: 'utf8',
    maxBuffer: 512 * 2 ** 20,
  });
  search('git log -p --all', git);
  outputs.forEach((o, i) => search(`the output of run ${i + 1}`, o));
  return hits;
}

describe('secrets: sentinel credentials and keys in RPC_URL and METRICS_URL reach no artifact', () => {
  let node;
  let proxy;
  let reports;
  let single;
  let plan;
  let planState;
  const tmps = [];

  before(async () => {
    const wsPort = await freePort();
    node = await startGeth({
      extra: ['--ws', '--ws.addr', '127.0.0.1', '--ws.port', String(wsPort), '--ws.api', 'eth,net,web3'],
    });
    proxy = await startProxy(node, wsPort);
    const dir = tmpDir();
    reports = path.join(dir, 'reports');
    const file = writeScenario(
      dir,
      'keyed-endpoint',
      [
        'RUNTIME=attach',
        `RPC_URL=${proxy.rpcUrl()}`,
        `METRICS_URL=${proxy.metricsUrl}`,
        'CREATE_HISTORY=yes',
        'ALLOW_WRITES=yes', // history is transactions: a node chainperf did not start gets them only when allowed
        'HISTORY_TRANSFERS=16',
        'HISTORY_CONTRACT_CALLS=8',
        'CONCURRENCY=4',
        'WARMUP_S=1',
        'IDLE_S=3',
        'DURATION_S=6',
        'ARCHIVE=git',
      ].join('\n'),
    );
    const h = startRun(file, { REPORTS_DIR: reports });
    tmps.push(h.tmp);
    single = await h.done;
    if (single.code !== 0) process.stderr.write(single.stderr);

    // A plan sweeping RPC_URL over two keyed URLs, over HTTP and over WebSocket, with the lean engine; the history is
    // already on the chain.
    const planFile = writeScenario(
      dir,
      'keyed-plan',
      [
        `BASE=${file}`,
        'SWEEP=RPC_URL',
        `RPC_URL=${proxy.rpcUrl(S.planA)},${proxy.rpcUrl(S.planB, 'ws')}`,
        'RUNTIME=attach',
        'CREATE_HISTORY=no',
        'GENERATOR=lean',
        'REPETITIONS=1',
        'WARMUP_S=0',
        'IDLE_S=0',
      ].join('\n'),
    );
    const hp = startRun(planFile, { REPORTS_DIR: reports });
    tmps.push(hp.tmp);
    plan = await hp.done;
    if (plan.code !== 0) process.stderr.write(plan.stderr);
    planState = JSON.parse(fs.readFileSync(path.join(plan.reportDir, 'plan.json'), 'utf8'));
  });
  after(() => {
    if (proxy) proxy.close();
    return node && node.stop();
  });

  it('the credentials work: every request went through the proxy authorized, none was refused', () => {
    assert.equal(single.code, 0);
    const run = readRun(single.reportDir);
    assert.equal(run.status, 'ok');
    assert.equal(run.node.cpu_source.kind, 'metrics');
    assert.ok(run.figures.requests_ok > 50, `${run.figures.requests_ok} requests`);
    assert.equal(run.figures.requests_failed, 0);
    assert.ok(proxy.counts.rpc >= run.figures.requests_ok, `${proxy.counts.rpc} forwarded`);
    assert.ok(proxy.counts.metrics > 5, `${proxy.counts.metrics} metrics reads`);
    assert.equal(proxy.counts.refused, 0, proxy.counts.refusedWhy.join('; '));
  });

  it('the plan ran both keyed URLs, over HTTP and WebSocket, with the lean engine, its points named by position', () => {
    assert.equal(plan.code, 0);
    assert.equal(planState.status, 'complete');
    assert.deepEqual(
      planState.points.map((p) => p.name),
      ['keyed-plan-RPC_URL-1', 'keyed-plan-RPC_URL-2'],
    );
    const transports = planState.points.map((p) => {
      const run = readRun(path.join(plan.reportDir, p.runs[0].dir));
      assert.equal(run.status, 'ok');
      assert.equal(run.provenance.scenario.GENERATOR, 'lean');
      assert.ok(run.figures.requests_ok > 50);
      assert.equal(run.figures.requests_failed, 0);
      return run.provenance.scenario.TRANSPORT;
    });
    assert.deepEqual(transports, ['http', 'ws']);
    // the control connection and the generator's
    assert.ok(proxy.counts.ws >= 2, `${proxy.counts.ws} WebSockets opened`);
    assert.equal(proxy.counts.refused, 0, proxy.counts.refusedWhy.join('; '));
  });

  it('the reports still say where the node was, redacted', () => {
    const run = readRun(single.reportDir);
    assert.match(
      run.provenance.scenario.RPC_URL,
      /^http:\/\/<redacted>@127\.0\.0\.1:\d+\/<redacted>\?apikey=<redacted>$/,
    );
    assert.match(fs.readFileSync(path.join(single.reportDir, 'artillery.yml'), 'utf8'), /target: from-generator-spec/);
  });

  it('no sentinel in any file, folder name, the git history (git log -p --all) or the captured output', () => {
    const hits = findSentinels(reports, [single.stdout, single.stderr, plan.stdout, plan.stderr]);
    assert.deepEqual(hits, []);
    // the search can fail: a planted file, folder name, commit message and output are found
    const planted = tmpDir();
    fs.mkdirSync(path.join(planted, S.path));
    fs.writeFileSync(path.join(planted, 'f.txt'), `x ${S.pass} y`);
    execFileSync('git', ['init', '-q'], { cwd: planted });
    execFileSync(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', S.mquery],
      { cwd: planted },
    );
    assert.deepEqual(findSentinels(planted, [`a ${S.user}`]), [
      `path in the name ${S.path}`,
      'pass in f.txt',
      'mquery in git log -p --all',
      'user in the output of run 1',
    ]);
    assert.ok(
      execFileSync('git', ['log', '--all', '--oneline'], { cwd: reports, encoding: 'utf8' }).trim().split('\n')
        .length >= 2,
    );
  });

  it("the work folders (which held the generator's spec, with the URL) are gone", () => {
    for (const tmp of tmps)
      assert.deepEqual(
        fs.readdirSync(tmp).filter((d) => d.startsWith('chainperf-')),
        [],
        tmp,
      );
  });
});
