'use strict';
// The balancer's configuration, its exporter's per-server counters and its
// access log, from known texts.

const assert = require('node:assert/strict');
const { renderConfig, serverCounts, accessLog } = require('../../src/runtime/haproxy');

describe('HAProxy in front of the replicas', () => {
  it('one server line per replica, each with a JSON-RPC health check, the algorithm and the exporter', () => {
    const text = renderConfig({
      port: 8000,
      statsPort: 8001,
      servers: [
        { name: 'r1', host: '127.0.0.1', port: 9001 },
        { name: 'r2', host: '127.0.0.1', port: 9002 },
      ],
      algorithm: 'leastconn',
      healthBody: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
    });
    assert.match(text, /^ {2}bind 127\.0\.0\.1:8000$/m);
    assert.match(text, /^ {2}balance leastconn$/m);
    assert.match(text, /^ {2}server r1 127\.0\.0\.1:9001 check$/m);
    assert.match(text, /^ {2}server r2 127\.0\.0\.1:9002 check$/m);
    assert.match(
      text,
      /http-check send meth POST .*body "\{\\"jsonrpc\\":\\"2\.0\\",\\"id\\":1,\\"method\\":\\"eth_blockNumber\\"/,
    );
    assert.match(text, /http-check expect rstring/);
    assert.match(text, /use-service prometheus-exporter if \{ path \/metrics \}/);
    // the clients' frontend cannot take every connection the process has: the stats stay readable when it is full
    const global = Number(/^global\n {2}maxconn (\d+)$/m.exec(text)[1]);
    const clients = Number(/^frontend rpc\n.*\n {2}maxconn (\d+)$/m.exec(text)[1]);
    assert.ok(global > clients, `global maxconn ${global}, clients' frontend ${clients}`);
  });

  it("LB_LAG_CHECK: each server line gets its agent's check beside the health check; none without one", () => {
    const text = renderConfig({
      port: 8000,
      statsPort: 8001,
      servers: [
        { name: 'r1', host: '127.0.0.1', port: 9001, agent: { addr: '127.0.0.1', port: 7101 } },
        { name: 'r2', host: '127.0.0.1', port: 9002, agent: { addr: '127.0.0.1', port: 7102 } },
        { name: 'r3', host: '127.0.0.1', port: 9003 },
      ],
      algorithm: 'roundrobin',
      healthBody: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
      agentInterMs: 1000,
    });
    assert.match(
      text,
      /^ {2}server r1 127\.0\.0\.1:9001 check agent-check agent-addr 127\.0\.0\.1 agent-port 7101 agent-inter 1000$/m,
    );
    assert.match(
      text,
      /^ {2}server r2 127\.0\.0\.1:9002 check agent-check agent-addr 127\.0\.0\.1 agent-port 7102 agent-inter 1000$/m,
    );
    assert.match(text, /^ {2}server r3 127\.0\.0\.1:9003 check$/m);
    assert.match(text, /http-check expect rstring/, 'the JSON-RPC health check stays');
  });

  it("reads each server's responses, errors and state from the exporter", () => {
    const text = [
      '# HELP haproxy_server_http_responses_total x',
      'haproxy_server_http_responses_total{proxy="replicas",server="r1",code="2xx"} 120',
      'haproxy_server_http_responses_total{proxy="replicas",server="r1",code="5xx"} 3',
      'haproxy_server_http_responses_total{proxy="replicas",server="r2",code="2xx"} 80',
      'haproxy_server_http_responses_total{proxy="other",server="x",code="2xx"} 999',
      'haproxy_server_connection_errors_total{proxy="replicas",server="r2"} 4',
      'haproxy_server_status{proxy="replicas",server="r1",state="UP"} 1',
      'haproxy_server_status{proxy="replicas",server="r2",state="UP"} 0',
      'haproxy_server_status{proxy="replicas",server="r2",state="DOWN"} 1',
    ].join('\n');
    const c = serverCounts(text);
    assert.deepEqual(Object.keys(c).sort(), ['r1', 'r2']);
    assert.equal(c.r1.responses, 123);
    assert.equal(c.r1.by_code['5xx'], 3);
    assert.equal(c.r2.errors, 4);
    assert.equal(c.r1.up, true);
    assert.equal(c.r2.up, false);
  });

  it('takes the access log lines that ended inside the window, by server', () => {
    const log = [
      '[NOTICE] a line HAProxy writes itself',
      '1000.000 r1 2 3 200', // ends at 1000.003 s: before the window
      '1001.000 r1 4 5 200',
      '1001.500 r2 -1 7 503',
      '1002.000 r2 1 1 200', // ends at 1002.001 s: after
    ].join('\n');
    const a = accessLog(log, 1000500, 1002000);
    assert.deepEqual(a.r1, { tr_ms: [4], ta_ms: [5], status: { 200: 1 } });
    assert.deepEqual(a.r2, { tr_ms: [], ta_ms: [7], status: { 503: 1 } });
  });
});

describe('a replica out of rotation: seen from the balancer during the window', () => {
  const { watchRotation, downReasons, rotationProblems } = require('../../src/runtime/fleet-hooks');

  it("reads HAProxy's view at each look: a replica taken out and put back gives two events, in order", async () => {
    const states = [
      { 'replica-1': true, 'replica-2': true },
      { 'replica-1': true, 'replica-2': false },
      { 'replica-1': true, 'replica-2': false },
      { 'replica-1': true, 'replica-2': true },
    ];
    let i = 0;
    const lb = {
      counts: async () => {
        const st = states[Math.min(i++, states.length - 1)];
        return Object.fromEntries(Object.entries(st).map(([n, up]) => [n, { responses: 0, errors: 0, up }]));
      },
    };
    const watch = watchRotation(lb, ['replica-1', 'replica-2'], 50);
    await new Promise((r) => setTimeout(r, 330));
    const events = await watch.stop();
    assert.deepEqual(
      events.map((e) => [e.replica, e.state]),
      [
        ['replica-2', 'down'],
        ['replica-2', 'up'],
      ],
    );
    assert.ok(events[1].seen_at_ms - events[0].seen_at_ms >= 75, 'a look every 50 ms here');
  });

  it('a balancer that does not answer a look is no change; a replica missing from its counters is down', async () => {
    let n = 0;
    const lb = {
      counts: async () => {
        n++;
        if (n === 2) throw new Error('stats unreachable');
        return n >= 3 ? {} : { 'replica-1': { up: true } };
      },
    };
    const watch = watchRotation(lb, ['replica-1'], 50);
    await new Promise((r) => setTimeout(r, 220));
    const events = await watch.stop();
    assert.deepEqual(
      events.map((e) => e.state),
      ['down'],
    );
  });

  it("takes the reason from HAProxy's log, and says it in the run's warnings with the return", () => {
    const log = [
      '1795000000.100 replica-1 0 1 200',
      'Server replicas/replica-2 is DOWN, reason: Layer7 timeout, check duration: 3001ms. 1 active and 0 backup servers left.',
      'Server replicas/replica-2 is UP, reason: Layer7 check passed, code: 200, check duration: 2ms.',
    ].join('\n');
    assert.deepEqual(downReasons(log), { 'replica-2': 'Layer7 timeout' });
    const [w] = rotationProblems([
      { replica: 'replica-2', state: 'down', seen_at_ms: 1795000001000, reason: 'Layer7 timeout' },
      { replica: 'replica-2', state: 'up', seen_at_ms: 1795000009000 },
    ]);
    assert.match(w, /HAProxy took replica-2 out of rotation \(seen at .*; Layer7 timeout\), and back at /);
  });

  it('names a replica drained by its agent (LB_LAG_CHECK) as such; the last reason logged wins', () => {
    const log = [
      'Server replicas/replica-2 is DOWN, reason: Layer7 timeout, check duration: 3001ms.',
      'Server replicas/replica-2 is UP, reason: Layer7 check passed, code: 200, check duration: 2ms.',
      '[WARNING]  (20782) : Server replicas/replica-2 enters drain state. 1 active and 0 backup servers online.',
      '[WARNING]  (20782) : Server replicas/replica-2 is UP (leaving forced drain).',
    ].join('\n');
    assert.deepEqual(downReasons(log), {
      'replica-2': "drained by its agent (LB_LAG_CHECK: the replica's head lagged)",
    });
  });
});
