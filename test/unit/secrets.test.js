'use strict';
// The output boundary (src/util/scrub.js), credentials in URLs on the wire
// (src/util/url-auth.js and every client that uses it), and the checks of
// names and folders that become paths (src/scenario/paths.js).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { WebSocketServer } = require('ws');
const scrubber = require('../../src/util/scrub');
const { splitAuth } = require('../../src/util/url-auth');
const { formatProblems, escapeControl } = require('../../src/util/problems');
const { reportsDirProblem, folderNameProblem, isInside } = require('../../src/scenario/paths');
const { resolveScenario } = require('../../src/scenario/resolve');
const { parsePlan } = require('../../src/plan/parse');
const { rpcCall, closeRpcConnections } = require('../../src/util/rpc');
const { metricsSource } = require('../../src/measure/cpu');
const { prepareRequest } = require('../../src/workload/engines/artillery-engine-chainperf/http');
const { WsPool, bodyTail } = require('../../src/workload/engines/artillery-engine-chainperf/ws');
const { buildScript, TARGET } = require('../../src/workload/artillery');
const { ethersProvider } = require('../../src/chains/ethereum/provider');
const { ROOT, tmpDir, writeScenario } = require('../helpers');

const { scrub, scrubDeep, scrubName, addSecretValue, urlSecrets, redactUrl, resetSecrets } = scrubber;
const URL_SPEC = { type: 'url', secret: true };

describe('the scrubber: every secret of the run replaced in what is written out', () => {
  beforeEach(() => resetSecrets());
  after(() => resetSecrets());

  it('knows the user, the password, token-like path segments and subdomains, and query values of a URL', () => {
    const parts = urlSecrets(
      'https://alice9:s3cr%40t@k3yinsub0main.rpc.example.com/v3/0123456789abcdef?apikey=QKEY&network=mainnet&limit=100',
    );
    for (const p of [
      'alice9',
      's3cr%40t',
      's3cr@t',
      'k3yinsub0main',
      '0123456789abcdef',
      'QKEY',
      Buffer.from('alice9:s3cr@t').toString('base64'),
    ]) {
      assert.ok(parts.includes(p), `${p} in ${parts}`);
    }
    for (const word of ['v3', 'rpc', 'example', 'mainnet', '100'])
      assert.ok(!parts.includes(word), `${word} is not a secret`);
    assert.deepEqual(urlSecrets('http://127.0.0.1:6060/debug/metrics/prometheus'), []);
  });

  it('replaces them in text, in JSON values and keys (the JSON stays valid), and in names', () => {
    addSecretValue(URL_SPEC, 'http://u5er:pa55word@127.0.0.1:8545/T0KEN123456?key=QUERYKEY9');
    addSecretValue({ type: 'string', secret: true }, 'plainsecret');
    assert.equal(
      scrub('GET http://u5er:pa55word@127.0.0.1:8545/T0KEN123456?key=QUERYKEY9 failed; plainsecret'),
      'GET <redacted> failed; <redacted>',
    );
    assert.equal(
      scrub('GET http://u5er:pa55word@127.0.0.1:9/T0KEN123456?x=1&key=QUERYKEY9'),
      'GET http://<redacted>@127.0.0.1:9/<redacted>?x=1&key=<redacted>',
    );
    const doc = scrubDeep({
      errors: { 'auth pa55word refused': 3 },
      list: ['x T0KEN123456 y', 7, null, true],
      quoted: 'say "QUERYKEY9"',
    });
    assert.deepEqual(doc, {
      errors: { 'auth <redacted> refused': 3 },
      list: ['x <redacted> y', 7, null, true],
      quoted: 'say "<redacted>"',
    });
    assert.equal(scrub(JSON.stringify({ a: 'QUERYKEY9' })), '{"a":"<redacted>"}');
    assert.deepEqual(scrubDeep({ at: new Date(0), n: undefined }), { at: '1970-01-01T00:00:00.000Z', n: undefined });
    assert.equal(scrubName('plan-RPC_URL-T0KEN123456'), 'plan-RPC_URL-redacted');
  });

  it('ignores values too short to replace safely, and is a no-op with no secret', () => {
    assert.equal(scrub('nothing known yet: pa55word'), 'nothing known yet: pa55word');
    addSecretValue(URL_SPEC, 'http://a:b@127.0.0.1:1/');
    assert.equal(scrub('a b'), 'a b');
    addSecretValue(URL_SPEC, 'http://127.0.0.1:8545');
    assert.equal(scrub('at http://127.0.0.1:8545'), 'at http://127.0.0.1:8545');
  });

  it('redactUrl keeps an IP host but no subdomain, credential, token or query value', () => {
    assert.equal(
      redactUrl('wss://me:pw@KEYSUB123.eth.provider.io:8443/ws/v2/abcdef123456?apikey=zzz#frag'),
      'wss://<redacted>@<redacted>.provider.io:8443/ws/v2/<redacted>?apikey=<redacted>',
    );
    assert.equal(
      redactUrl('http://127.0.0.1:6060/debug/metrics/prometheus'),
      'http://127.0.0.1:6060/debug/metrics/prometheus',
    );
  });

  it('resolving a scenario registers its secrets before validation messages are printed', () => {
    const dir = tmpDir();
    const file = writeScenario(
      dir,
      'sec',
      'RUNTIME=attach\nRPC_URL=http://user1:Pw0rd-xyz@127.0.0.1:1/\nNODE_PID=notanumber\n',
    );
    const r = resolveScenario(file, { env: {}, cpuCount: 2, dockerEngine: null });
    assert.ok(r.errors.length > 0);
    assert.equal(scrub('Pw0rd-xyz user1'), '<redacted> <redacted>');
  });
});

describe('validation output: capped, control characters escaped, scrubbed', () => {
  it('lists at most 50 problems, then how many more', () => {
    const errors = Array.from({ length: 120 }, (_, i) => `f.env:${i + 1}: not a setting`);
    const lines = formatProblems(errors).split('\n');
    assert.equal(lines.length, 51);
    assert.equal(lines[50], '  ... and 70 more');
  });

  it('escapes control characters and cuts long lines', () => {
    assert.equal(escapeControl('a\x1b[31mb\x00\x7f\u0085'), 'a\\x1b[31mb\\x00\\x7f\\x85');
    assert.ok(escapeControl('x'.repeat(1000)).length <= 303);
  });

  it('a 1 MB file of random bytes as a scenario: exit 2, at most 52 lines, no raw control character', () => {
    const file = path.join(tmpDir(), 'random.env');
    fs.writeFileSync(file, crypto.randomBytes(1 << 20));
    const r = spawnSync(process.execPath, [path.join(ROOT, 'src', 'cli.js'), file], {
      encoding: 'utf8',
      env: { ...process.env, RUNTIME: 'host' },
    });
    assert.equal(r.status, 2);
    const lines = r.stderr.trimEnd().split('\n');
    assert.ok(lines.length <= 52, `${lines.length} lines`);
    assert.match(lines[lines.length - 1], /^ {2}\.\.\. and \d+ more$/);
    // eslint-disable-next-line no-control-regex -- what must not be there
    assert.doesNotMatch(r.stderr.replace(/\n/g, ''), /[\u0000-\u001f\u007f-\u009f]/);
    assert.equal(r.stdout, '');
  });
});

describe('names and folders that become paths', () => {
  const resolve = (file, env) => resolveScenario(file, { env, cpuCount: 2, dockerEngine: null });
  let dir;
  beforeEach(() => {
    dir = tmpDir();
  });

  it('NAME=.. and NAME=. and hidden names are refused as a/b is', () => {
    const file = writeScenario(dir, 'n', 'DURATION_S=5\n');
    for (const name of ['..', '.', '.hidden', 'a/b', '../x']) {
      const r = resolve(file, { NAME: name, REPORTS_DIR: path.join(dir, 'reports') });
      assert.ok(
        r.errors.some((e) => /NAME: /.test(e)),
        `${name}: ${r.errors}`,
      );
    }
    assert.deepEqual(resolve(file, { NAME: 'ok.name-1', REPORTS_DIR: path.join(dir, 'reports') }).errors, []);
    assert.equal(folderNameProblem('...x'), folderNameProblem('.x') && folderNameProblem('...x'));
    assert.equal(isInside('/r', '..'), false);
    assert.equal(isInside('/r', 'a'), true);
  });

  it('NAME=.. through ./run.sh: exit 2, nothing written above REPORTS_DIR', () => {
    const reports = path.join(dir, 'inner', 'reports');
    const file = writeScenario(dir, 'n', 'DURATION_S=5\n');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'src', 'cli.js'), file], {
      encoding: 'utf8',
      env: { ...process.env, NAME: '..', REPORTS_DIR: reports, RUNTIME: 'host' },
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /NAME: must not start with a dot/);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['n.env']);
  });

  it('PLAN_NAME=../../x is refused, and a plan file name is made a folder name', () => {
    const base = path.join(ROOT, 'scenarios', 'geth-dev.env');
    const plan = writeScenario(dir, 'p', `BASE=${base}\nSWEEP=DB_CACHE_MB\nDB_CACHE_MB=32,64\nPLAN_NAME=../../x\n`);
    const r = parsePlan(plan, { env: { RUNTIME: 'host', REPORTS_DIR: path.join(dir, 'reports') } });
    assert.equal(r.plan, null);
    assert.match(r.errors[0], /PLAN_NAME: /);
    const cli = spawnSync(process.execPath, [path.join(ROOT, 'src', 'cli.js'), plan], {
      encoding: 'utf8',
      env: { ...process.env, RUNTIME: 'host', REPORTS_DIR: path.join(dir, 'reports') },
    });
    assert.equal(cli.status, 2);
    assert.ok(!fs.existsSync(path.join(dir, 'reports')));
    const spaced = writeScenario(dir, 'my plan', `BASE=${base}\nSWEEP=DB_CACHE_MB\nDB_CACHE_MB=32,64\n`);
    assert.equal(
      parsePlan(spaced, { env: { RUNTIME: 'host', REPORTS_DIR: path.join(dir, 'reports') } }).plan.name,
      'my_plan',
    );
  });

  it('a swept secret key names its points by position, never by value', () => {
    const base = writeScenario(dir, 'b', 'RUNTIME=attach\nNODE_PID=1\n');
    const plan = writeScenario(
      dir,
      'p',
      `BASE=${base}\nSWEEP=RPC_URL\nRPC_URL=http://127.0.0.1:1/?apikey=SWEPTKEY1,http://127.0.0.1:2/?apikey=SWEPTKEY2\n`,
    );
    const r = parsePlan(plan, { env: { REPORTS_DIR: path.join(dir, 'reports') } });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.plan.points.map((p) => p.name),
      ['p-RPC_URL-1', 'p-RPC_URL-2'],
    );
    assert.equal(scrub('SWEPTKEY1 SWEPTKEY2'), '<redacted> <redacted>');
  });

  it('REPORTS_DIR that is a file, under a file, not writable or full is refused before anything starts', () => {
    const file = path.join(dir, 'afile');
    fs.writeFileSync(file, 'x');
    assert.match(reportsDirProblem(file), /is not a folder/);
    assert.match(reportsDirProblem(path.join(file, 'sub')), /cannot be created: .* is not a folder/);
    assert.equal(reportsDirProblem(path.join(dir, 'new', 'reports')), null);
    assert.match(reportsDirProblem('/proc/1/reports'), /is not writable/);
    const access = fs.accessSync;
    fs.accessSync = () => {
      throw Object.assign(new Error('read-only file system'), { code: 'EROFS' });
    };
    try {
      assert.match(reportsDirProblem(dir), /is not writable \(EROFS\)/);
    } finally {
      fs.accessSync = access;
    }
    const statfs = fs.statfsSync;
    fs.statfsSync = () => ({ bavail: 10, bsize: 4096 });
    try {
      assert.match(reportsDirProblem(dir), /has 0\.0 MB free; a run needs at least 64 MB/);
    } finally {
      fs.statfsSync = statfs;
    }
    const scen = writeScenario(dir, 's', 'DURATION_S=5\n');
    const cli = spawnSync(process.execPath, [path.join(ROOT, 'src', 'cli.js'), scen], {
      encoding: 'utf8',
      env: { ...process.env, RUNTIME: 'host', REPORTS_DIR: file },
    });
    assert.equal(cli.status, 2);
    assert.match(cli.stderr, /REPORTS_DIR: .*afile is not a folder/);
    assert.doesNotMatch(cli.stderr, /\n\s+at /); // no stack trace
  });

  it('BIND_ADDR must be an IPv4 address', () => {
    const file = writeScenario(dir, 'c', 'RUNTIME=compose\n');
    for (const bad of ['localhost', '0.0.0.0; rm', '127.0.0.1:80', '999.1.1.1', '::1']) {
      const r = resolve(file, { BIND_ADDR: bad, REPORTS_DIR: path.join(dir, 'reports') });
      assert.ok(
        r.errors.some((e) => /BIND_ADDR: expected an IPv4 address/.test(e)),
        `${bad}: ${r.errors}`,
      );
    }
    for (const good of ['0.0.0.0', '192.168.1.5']) {
      const r = resolve(file, { BIND_ADDR: good, REPORTS_DIR: path.join(dir, 'reports') });
      assert.ok(!r.errors.some((e) => /BIND_ADDR/.test(e)), `${good}: ${r.errors}`);
    }
  });
});

/** An HTTP and WebSocket server that answers only requests carrying user:pass as Basic auth; records what it saw. */
async function startAuthNode(user, pass) {
  const want = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ url: req.url, auth: req.headers.authorization });
      if (req.headers.authorization !== want) {
        res.writeHead(401).end();
        return;
      }
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('system_cpu_procload_total 12.5\n');
        return;
      }
      const { id } = JSON.parse(body);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
  });
  const wss = new WebSocketServer({
    server,
    verifyClient: (info) => {
      seen.push({ url: info.req.url, auth: info.req.headers.authorization, ws: true });
      return info.req.headers.authorization === want;
    },
  });
  wss.on('connection', (sock) =>
    sock.on('message', (d) => {
      const { id } = JSON.parse(d);
      sock.send(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    }),
  );
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  return {
    seen,
    http: `http://${user}:${pass}@127.0.0.1:${port}/k3y0123456?apikey=QK`,
    ws: `ws://${user}:${pass}@127.0.0.1:${port}/k3y0123456?apikey=QK`,
    close: () => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('credentials in URLs on the wire: Basic auth as a header, keys kept in path and query', () => {
  let node;
  before(async () => {
    node = await startAuthNode('us3r', 'p@ss:w0rd');
    node.http = node.http.replace('p@ss:w0rd', encodeURIComponent('p@ss:w0rd'));
    node.ws = node.ws.replace('p@ss:w0rd', encodeURIComponent('p@ss:w0rd'));
  });
  after(() => {
    closeRpcConnections();
    node.close();
  });

  it('splitAuth moves user and password (decoded) into an Authorization header', () => {
    const r = splitAuth('https://a%40b:c%3Ad@h.io/p?k=1');
    assert.equal(r.url, 'https://h.io/p?k=1');
    assert.equal(r.headers.authorization, `Basic ${Buffer.from('a@b:c:d').toString('base64')}`);
    assert.deepEqual(splitAuth('http://h.io/x'), { url: 'http://h.io/x', headers: {} });
  });

  it('the control client (sync check, harvest, history) over HTTP and WebSocket', async () => {
    assert.equal(await rpcCall(node.http, 'eth_blockNumber'), '0x10');
    assert.equal(await rpcCall(node.ws, 'eth_blockNumber'), '0x10');
    assert.ok(node.seen.some((s) => s.ws && s.url === '/k3y0123456?apikey=QK'));
    assert.ok(node.seen.some((s) => !s.ws && s.url === '/k3y0123456?apikey=QK'));
  });

  it('ethers providers over HTTP and WebSocket', async () => {
    for (const url of [node.http, node.ws]) {
      const p = ethersProvider(url, undefined, { staticNetwork: true, batchMaxCount: 1 });
      try {
        assert.equal(await p.send('eth_blockNumber', []), '0x10');
      } finally {
        p.destroy();
      }
    }
  });

  it('the lean engine: the Authorization header in the prepared HTTP request, and on its WebSockets', async () => {
    const head = prepareRequest(node.http, '{}').toString('latin1');
    assert.match(head, /^POST \/k3y0123456\?apikey=QK HTTP\/1\.1\r\n/);
    assert.match(head, new RegExp(`\r\nAuthorization: Basic ${Buffer.from('us3r:p@ss:w0rd').toString('base64')}\r\n`));
    assert.doesNotMatch(head, /us3r/);
    let t = 0;
    const pool = new WsPool(node.ws, { connections: 1, timeoutMs: 2000, now: () => t++ });
    try {
      assert.equal(await pool.request(bodyTail('eth_blockNumber', []), 0), null);
    } finally {
      pool.close();
    }
  });

  it("@polkadot/api's WsProvider (Substrate control calls and generator) with the headers from the URL", async function () {
    this.timeout(30000); // loading @polkadot/api takes seconds on a busy machine
    const { WsProvider } = require('@polkadot/api');
    const target = splitAuth(node.ws);
    const before = node.seen.filter((s) => s.ws).length;
    const p = new WsProvider(target.url, 1000, target.headers, 2000, 0);
    try {
      await p.isReady;
      assert.equal(await p.send('eth_blockNumber', []), '0x10');
    } finally {
      await p.disconnect();
    }
    const opened = node.seen.filter((s) => s.ws).slice(before);
    assert.ok(
      opened.length >= 1 && opened.every((s) => s.auth === `Basic ${Buffer.from('us3r:p@ss:w0rd').toString('base64')}`),
    );
  });

  it('METRICS_URL reads', async () => {
    const src = metricsSource(node.http.replace('/k3y0123456', '/metrics'));
    // the counter never changes here: only the auth matters
    await src.calibrate(AbortSignal.timeout(300)).catch(() => {});
    assert.ok(node.seen.some((s) => s.url === '/metrics?apikey=QK' && s.auth && s.auth.startsWith('Basic ')));
    assert.ok(!node.seen.some((s) => s.url.startsWith('/metrics') && !s.auth));
  });

  it('the artillery script holds no URL', () => {
    for (const GENERATOR of ['ethers', 'lean']) {
      const script = buildScript(
        { GENERATOR, CONCURRENCY: 2, RAMP_S: 0, WORKLOAD: 'eth-default' },
        { processor: '/p.js', totalS: 5 },
      );
      assert.equal(script.config.target, TARGET);
      assert.doesNotMatch(JSON.stringify(script), /:\/\//);
    }
  });
});
