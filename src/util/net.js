'use strict';
const net = require('node:net');

function listenOnAny() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

const closeServer = (srv) => new Promise((resolve) => srv.close(() => resolve()));

/**
 * One free port per name, all different: every port is held until all are chosen, since two
 * freePort() calls in a row can return the same port (the kernel may hand a closed one out again),
 * and Docker then refuses the second container that publishes it ("port is already allocated").
 */
async function freePorts(names) {
  const servers = [];
  try {
    for (let i = 0; i < names.length; i += 1) servers.push(await listenOnAny());
    return Object.fromEntries(names.map((name, i) => [name, servers[i].address().port]));
  } finally {
    await Promise.all(servers.map(closeServer));
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
async function freePort() {
  return (await freePorts(['port'])).port;
}

module.exports = { freePort, freePorts };
