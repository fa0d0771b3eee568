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
