'use strict';
// Shared by the unit and integration tests.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const Ajv2020 = require('ajv/dist/2020');
const { seededRandom } = require('../src/util/random');

const ROOT = path.resolve(__dirname, '..');

const made = [];
// The tests' temporary folders go when the test process ends. When a test failed (the process exits non-zero), the
// report folders of its file's runs are kept first, node logs included, in chainperf-test-failures under the temporary
// directory: a failure seen once in CI can then be read, not only its test's output.
process.on('exit', (code) => {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const keep = code ? path.join(os.tmpdir(), 'chainperf-test-failures', `${stamp}-${process.pid}`) : null;
  let kept = 0;
  for (const dir of made) {
    const reports = path.join(dir, 'reports');
    try {
      if (keep && fs.existsSync(reports)) {
        fs.cpSync(reports, path.join(keep, path.basename(dir)), { recursive: true });
        kept++;
      }
    } catch {
      // keeping is a courtesy: the folder goes either way
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (kept) process.stderr.write(`the report folders of this file's runs are kept in ${keep}\n`);
});

function tmpDir(prefix = 'chainperf-test-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Writes a scenario file and returns its path. */
function writeScenario(dir, name, text) {
  const file = path.join(dir, `${name}.env`);
  fs.writeFileSync(file, text);
  return file;
}

/** Validates a run.json object against schema/run.schema.json; returns the errors (empty when valid). */
const validators = {};

/** Problems of a document against schema/<name>.schema.json (run.json by default; 'ab' for ab.json). */
function schemaErrors(doc, name = 'run') {
  if (!validators[name]) {
    const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    validators[name] = ajv.compile(
      JSON.parse(fs.readFileSync(path.join(ROOT, 'schema', `${name}.schema.json`), 'utf8')),
    );
  }
  const validate = validators[name];
  return validate(doc) ? [] : validate.errors.map((e) => `${e.instancePath} ${e.message}`);
}

/**
 * A local HTTP server playing a JSON-RPC node for the generator's unit tests.
 * node.answer(body) returns [status, body] (an object is sent as JSON), or null
 * to never answer; node.bodies collects what was received.
 */
async function startFakeNode() {
  const node = { bodies: [], answer: () => null };
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => {
      data += c;
    });
    req.on('end', () => {
      const body = JSON.parse(data);
      node.bodies.push(body);
      // an answer, or a promise of one (a node that answers late)
      Promise.resolve(node.answer(body)).then((a) => {
        if (!a) return; // hang: the client times out
        res.writeHead(a[0], { 'content-type': 'application/json' });
        res.end(typeof a[1] === 'string' ? a[1] : JSON.stringify(a[1]));
      });
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  node.url = `http://127.0.0.1:${server.address().port}/`;
  node.close = () => {
    server.closeAllConnections();
    server.close();
  };
  return node;
}

/**
 * A local WebSocket server playing a JSON-RPC node. node.answer(body, conn)
 * returns the answer (an object is sent as JSON, a string as it is), or null
 * to never answer; node.received collects {conn, body} with conn the
 * connection's number; node.sockets are the server's side of each connection.
 */
async function startFakeWsNode() {
  const { WebSocketServer } = require('ws');
  const node = { received: [], sockets: [], answer: () => null };
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (sock) => {
    const conn = node.sockets.push(sock) - 1;
    sock.on('message', (data) => {
      const body = JSON.parse(data);
      node.received.push({ conn, body });
      const a = node.answer(body, conn);
      if (a !== null && a !== undefined) sock.send(typeof a === 'string' ? a : JSON.stringify(a));
    });
  });
  node.url = `ws://127.0.0.1:${wss.address().port}`;
  node.close = () =>
    new Promise((r) => {
      for (const s of wss.clients) s.terminate();
      wss.close(r);
    });
  return node;
}

/**
 * Writes a parameter pool and a generator spec for rpcUrl, and points
 * CHAINPERF_GENERATOR_SPEC at it, as the toolkit does for artillery's workers.
 */
function writeGeneratorSpec(rpcUrl, pool, over) {
  const dir = tmpDir();
  fs.writeFileSync(path.join(dir, 'pool.json'), JSON.stringify(pool));
  fs.mkdirSync(path.join(dir, 'samples'));
  const now = Date.now();
  const spec = {
    rpc_url: rpcUrl,
    pool_file: path.join(dir, 'pool.json'),
    timeout_ms: 500,
    seed: 1,
    start_at: now,
    end_at: now + 60000,
    samples_dir: path.join(dir, 'samples'),
    ...over,
  };
  fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
  process.env.CHAINPERF_GENERATOR_SPEC = path.join(dir, 'spec.json');
  return { dir, spec };
}

/** Standard normal draws from a seeded source, so the tests are repeatable. */
function normal(seed) {
  const rnd = seededRandom(seed);
  return () => {
    let u = 0;
    while (!u) u = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
  };
}

/**
 * A process that has exited and is not reaped (a zombie) for about 10 s: a shell's child, the shell replaced by a sleep
 * that never waits for it. Resolves to {pid, parent} once /proc shows it in state Z.
 */
async function startZombie() {
  const { spawn } = require('node:child_process');
  // The child outlives the shell's last moments before exec by far (0.2 s): a child that ends before the exec may
  // be reaped by the shell itself, and its /proc entry is gone.
  const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 10'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = Number(await new Promise((resolve) => parent.stdout.once('data', (d) => resolve(String(d).trim()))));
  for (let i = 0; i < 300; i++) {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return { pid, parent };
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`process ${pid} did not become a zombie`);
}

module.exports = {
  ROOT,
  startZombie,
  tmpDir,
  writeScenario,
  schemaErrors,
  startFakeNode,
  startFakeWsNode,
  writeGeneratorSpec,
  normal,
};
