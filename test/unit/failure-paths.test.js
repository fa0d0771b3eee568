'use strict';
// The pieces of the failure paths that need no node: stall detection, the
// signal guard, other runs under the chainperf cgroup, the attach watcher,
// Prometheus query timeouts.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { findStall, judgeStalls } = require('../../src/measure/stall');
const { guardRun, leftoversOf } = require('../../src/session/signals');
const { otherRuns, watchOtherRuns } = require('../../src/runtime/others');
const { watchAttachedNode } = require('../../src/runtime/node-watch');
const { queryClient } = require('../../src/runtime/prometheus');
const { tmpDir, startZombie } = require('../helpers');

const sec = (t, ok, failed = 0) => ({ t_ms: t, ok, failed });

describe('stall detection', () => {
  const w = { start: 10500, end: 20500 };
  it('a window whose last seconds have no completion is a stall at its end, with the waiting requests', () => {
    const series = [sec(10000, 5), sec(11000, 50), sec(12000, 40), sec(13000, 3)];
    const stall = findStall({ series, in_flight_at_end: 32, first_request_at: 9000 }, w, 5);
    assert.deepEqual(stall, { seconds: 6.5, from_ms: 14000, to_ms: 20500, at_end: true, requests_waiting: 32 });
  });
  it('a pause inside the window that recovered is not at the end; failures count as completions', () => {
    const series = [sec(10000, 5), sec(11000, 5), sec(17000, 0, 32), sec(18000, 9), sec(19000, 9), sec(20000, 4)];
    const x = { series, in_flight_at_end: 0, first_request_at: 9000 };
    const stall = findStall(x, w, 5);
    assert.equal(stall.at_end, false);
    assert.equal(stall.seconds, 5);
    assert.equal(findStall(x, w, 6), null, 'shorter than STALL_S');
    assert.equal(findStall(x, w, 0), null, 'STALL_S=0 turns it off');
  });
  it('a generator that started late, or had nothing in flight, is no stall of the node', () => {
    assert.equal(
      findStall({ series: [], in_flight_at_end: 0, first_request_at: null }, w, 5),
      null,
      'no request in the window',
    );
    assert.equal(
      findStall({ series: [], in_flight_at_end: 32, first_request_at: 19000 }, w, 5),
      null,
      'started 1.5 s before the end',
    );
    assert.equal(
      findStall({ series: [sec(10000, 5), sec(11000, 50)], in_flight_at_end: 0, first_request_at: 9000 }, w, 5),
      null,
      'stopped early, nothing waiting',
    );
    const late = findStall({ series: [], in_flight_at_end: 32, first_request_at: 13000 }, w, 5);
    assert.deepEqual(
      late,
      { seconds: 7.5, from_ms: 13000, to_ms: 20500, at_end: true, requests_waiting: 32 },
      'counted from its first request',
    );
    assert.equal(
      findStall({ series: [], in_flight_at_end: 32, first_request_at: 5000 }, w, 5).seconds,
      10,
      'frozen from the start of a loaded window',
    );
  });
  it('a busy window has no stall', () => {
    const series = Array.from({ length: 11 }, (_, i) => sec(10000 + i * 1000, 10));
    assert.equal(findStall({ series, in_flight_at_end: 3, first_request_at: 9000 }, w, 1), null);
  });
  it('judgeStalls fails on a stall at the end and warns for a pause', () => {
    const warnings = [];
    const at = (stall) => ({ window: { start_ms: 0 }, generator: { stall } });
    const failure = judgeStalls(
      [
        at({ seconds: 6, from_ms: 4000, to_ms: 10000, at_end: true, requests_waiting: 32 }),
        at({ seconds: 5, from_ms: 1000, to_ms: 6000, at_end: false, requests_waiting: 0 }),
        { window: {}, generator: {} },
      ],
      warnings,
      5,
    );
    assert.match(
      failure,
      /the node stalled: no request completed in the last 6 s of the window \(from 4 s in\), 32 requests were waiting/,
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /no request completed for 5 s of the window \(from 1 s in\): the node paused/);
  });
});

describe('signal guard', () => {
  let guard;
  afterEach(() => guard && guard.release());
  const setup = () => {
    const logged = [];
    const aborted = [];
    const exits = [];
    guard = guardRun({
      log: (l) => logged.push(l),
      abort: (e) => aborted.push(e.message),
      leftovers: () => [{ what: 'work folder /x', command: 'rm -rf /x' }],
      exit: (c) => exits.push(c),
    });
    return { logged, aborted, exits };
  };
  it('the first signal stops the run; one during teardown is waited through; the third forces an exit and prints what is left', () => {
    const { logged, aborted, exits } = setup();
    process.emit('SIGTERM', 'SIGTERM');
    assert.deepEqual(aborted, ['interrupted by SIGTERM']);
    guard.tearingDown();
    process.emit('SIGINT', 'SIGINT');
    assert.deepEqual(exits, []);
    assert.match(logged.join('\n'), /SIGINT: still tearing down; chainperf exits once the report is written/);
    assert.match(guard.late()[0], /SIGINT received while tearing down/);
    process.emit('SIGINT', 'SIGINT');
    assert.deepEqual(exits, [130]);
    assert.match(logged.join('\n'), /left: work folder \/x; remove it with: rm -rf \/x/);
  });
  it('a signal after the measurement does not abort it; an unexpected rejection during the run does', () => {
    // mocha's own listeners would count the emitted rejection as a test failure: only the guard's listens here
    const others = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    const { aborted } = setup();
    try {
      process.emit('unhandledRejection', new Error('boom'), Promise.resolve());
    } finally {
      for (const fn of others) process.on('unhandledRejection', fn);
    }
    assert.deepEqual(aborted, ['unexpected error: boom']);
    guard.reporting();
    process.emit('SIGTERM', 'SIGTERM');
    assert.equal(aborted.length, 1);
  });
  it('released, it no longer listens', () => {
    const before = process.listenerCount('SIGTERM');
    setup();
    assert.equal(process.listenerCount('SIGTERM'), before + 1);
    guard.release();
    assert.equal(process.listenerCount('SIGTERM'), before);
    guard = null;
  });
  it("leftoversOf lists the stack's and the work folder while it exists", () => {
    const dir = tmpDir();
    const stack = {
      leftovers: [
        () => ({ what: 'a', command: 'b' }),
        () => null,
        () => {
          throw new Error('x');
        },
      ],
    };
    assert.deepEqual(leftoversOf(stack, dir), [
      { what: 'a', command: 'b' },
      { what: `work folder ${dir}`, command: `rm -rf ${dir}`, dir },
    ]);
    fs.rmSync(dir, { recursive: true });
    assert.deepEqual(leftoversOf(null, dir), []);
  });
});

describe('other runs on this machine', () => {
  it('a run with a process in its cgroups is seen; an empty one and this run are not', () => {
    const root = tmpDir();
    const mk = (p, procs) => {
      fs.mkdirSync(path.join(root, p), { recursive: true });
      fs.writeFileSync(path.join(root, p, 'cgroup.procs'), procs);
    };
    mk('me', '');
    mk('me/node', '123\n');
    mk('other', '');
    mk('other/generator', '456\n');
    mk('stale', '');
    mk('stale/node', '');
    assert.deepEqual(otherRuns('me', root), ['other']);
    const warnings = [];
    watchOtherRuns('me', warnings, () => {}, root);
    watchOtherRuns('me', warnings, () => {}, root);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /another chainperf run \(other\) was running on this machine during this run/);
  });
});

describe('attach watcher', () => {
  it('a NODE_PID that is gone is reported at once', async () => {
    const info = await new Promise((resolve) => watchAttachedNode({ pid: 2 ** 22 + 7, periodMs: 50 }, resolve));
    assert.match(info.message, /the node \(NODE_PID=4194311\) exited/);
  });
  it('a NODE_PID that exited and is not reaped yet (a zombie) is reported as gone', async () => {
    const z = await startZombie();
    try {
      const t0 = Date.now();
      const info = await new Promise((resolve) => watchAttachedNode({ pid: z.pid, periodMs: 50 }, resolve));
      assert.equal(info.message, `the node (NODE_PID=${z.pid}) exited`);
      assert.ok(Date.now() - t0 < 5000, 'while it is a zombie, not once it is reaped (10 s on)');
    } finally {
      z.parent.kill();
    }
  });
  it('endpoints that stop answering are reported after three checks; one that answers keeps it alive', async () => {
    const server = http.createServer((req, res) => res.end('{}'));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${server.address().port}/`;
    let gone = null;
    const stop = watchAttachedNode({ metricsUrl: url, rpcUrl: url, periodMs: 50, timeoutMs: 200 }, (i) => {
      gone = i;
    });
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(gone, null);
    await new Promise((r) => server.close(r));
    server.closeAllConnections();
    const t0 = Date.now();
    while (!gone && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    stop();
    assert.match(
      gone.message,
      /the node stopped answering: neither its metrics endpoint \(METRICS_URL\) nor RPC_URL answered 3 checks in a row/,
    );
  });
});

describe('Prometheus queries', () => {
  it('time out on a server that never answers', async () => {
    const server = http.createServer(() => {}); // accepts, never answers
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const t0 = Date.now();
    await assert.rejects(
      queryClient(`http://127.0.0.1:${server.address().port}`, { timeoutMs: 300 }).valueAt('up', Date.now()),
      /did not answer within 300 ms/,
    );
    assert.ok(Date.now() - t0 < 3000);
    server.closeAllConnections();
    server.close();
  });
});

describe('Docker engine lost', () => {
  const { withoutTraceback, engineLostError } = require('../../src/runtime/engine-lost');
  it("Compose's Python traceback is left out of the message, its last words kept", () => {
    const out = [
      'Stopping chainperf-x_node_1 ...',
      'Traceback (most recent call last):',
      '  File "urllib3/connectionpool.py", line 703, in urlopen',
      '    httplib_response = self._make_request(',
      'FileNotFoundError: [Errno 2] No such file or directory',
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "docker/api/client.py", line 214, in _retrieve_server_version',
      'docker.errors.DockerException: Error while fetching server API version',
      '[12345] Failed to execute script docker-compose',
    ].join('\n');
    const kept = withoutTraceback(out);
    assert.ok(!kept.some((l) => /Traceback|File "/.test(l)), kept.join('\n'));
    assert.equal(kept[kept.length - 1], 'docker.errors.DockerException: Error while fetching server API version');
  });
  it('names the project left and the command to run once the engine is back', () => {
    assert.match(
      engineLostError('chainperf-x', 'docker compose -p chainperf-x down -v').message,
      /the Docker engine stopped answering \(.*\); compose project chainperf-x is left behind: once the engine is back, run: docker compose -p chainperf-x down -v/,
    );
  });
});

describe('the reason a run failed', () => {
  const { recordFailure } = require('../../src/session/run-record');
  const failing = (stack) => {
    const controller = new AbortController();
    return { run: { phase: 'measure', warnings: [] }, series: {}, held: { stack }, controller };
  };
  it("a node exit not seen yet by the watch is the reason, not the engine's error it caused", async () => {
    const r = failing({});
    r.held.stack.lookForNodeExit = async () =>
      r.controller.abort(new Error('the node exited during measure (status 137)'));
    await recordFailure(r, new Error('Docker engine: GET /containers/x/stats timed out after 10000 ms'));
    assert.equal(r.run.status, 'failed');
    assert.equal(r.run.error, 'the node exited during measure (status 137)');
  });
  it('a node still running: the error itself; a look that fails changes nothing', async () => {
    const r = failing({ lookForNodeExit: async () => {} });
    await recordFailure(r, new Error('the generator crashed'));
    assert.equal(r.run.error, 'the generator crashed');
    const r2 = failing({ lookForNodeExit: async () => Promise.reject(new Error('engine busy')) });
    await recordFailure(r2, new Error('the generator crashed'));
    assert.equal(r2.run.error, 'the generator crashed');
  });
});
