'use strict';
const assert = require('node:assert/strict');
const net = require('node:net');
const { freePorts } = require('../../src/util/net');

describe('freePorts', () => {
  it('gives each name its own port, and each port can be bound once it returns', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `p${i}`);
    const ports = await freePorts(names);
    assert.deepStrictEqual(Object.keys(ports), names);
    assert.strictEqual(new Set(Object.values(ports)).size, names.length);
    const servers = [];
    try {
      for (const port of Object.values(ports)) {
        servers.push(
          await new Promise((resolve, reject) => {
            const srv = net.createServer();
            srv.on('error', reject);
            srv.listen(port, '127.0.0.1', () => resolve(srv));
          }),
        );
      }
    } finally {
      await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
    }
  });
});

describe('freePorts: below the ephemeral range, reserved across processes', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const { ephemeralStart, reserve, RESERVE_MS } = require('../../src/util/net');
  const { tmpDir } = require('../helpers');

  it('draws ports the kernel never hands out for bind(0) or an outgoing connection, and reserves each one', async () => {
    const start = ephemeralStart();
    assert.ok(start > 21000, `the ephemeral range starts at ${start}`);
    const ports = Object.values(await freePorts(['a', 'b', 'c']));
    for (const p of ports) {
      assert.ok(p >= 20000 && p < start, `${p} below ${start}`);
      assert.ok(fs.existsSync(path.join('/tmp/chainperf-ports', String(p))), `${p} reserved`);
    }
  });

  it('a port another process reserved is not taken until its reservation is old; one that is old is taken over', () => {
    const dir = tmpDir();
    assert.equal(reserve(dir, 25000), true, 'the first reservation');
    assert.equal(reserve(dir, 25000), false, 'reserved a moment ago');
    assert.equal(reserve(dir, 25000, Date.now() + RESERVE_MS + 1000), true, 'an old reservation is taken over');
    assert.equal(reserve(null, 25000), true, 'no reservations folder: the free-check alone');
  });

  it('reads the start of the ephemeral range from the kernel, null where the file is missing', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'range'), '32768\t60999\n');
    assert.equal(ephemeralStart(path.join(dir, 'range')), 32768);
    assert.equal(ephemeralStart(path.join(dir, 'missing')), null);
  });
});
