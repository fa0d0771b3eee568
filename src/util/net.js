'use strict';
// Free TCP ports for what a run starts (a node's RPC, metrics and p2p ports, a
// container's published ports, Prometheus, HAProxy). A port the kernel hands
// out for bind(0) is an ephemeral one: between this process closing it and the
// node binding it, the kernel can give it to any other socket on the machine,
// an outgoing connection's or another run's bind(0) (seen in CI: a swarm
// task's published port "already in use" while three test files ran). So
// ports are drawn at random below the ephemeral range, where the kernel hands
// none out, checked free on every interface, and reserved for a while across
// chainperf processes by a file each (O_EXCL), so that two runs starting at
// once do not draw the same one.

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

/** Ports are drawn from [FLOOR, the ephemeral range's start). */
const FLOOR = 20000;
/** How long a drawn port stays reserved for its run: long enough for a stack to come up and bind it. */
const RESERVE_MS = 10 * 60 * 1000;
const RESERVATIONS = process.env.CHAINPERF_PORTS_DIR || '/tmp/chainperf-ports';

/** The first port of the kernel's ephemeral range (ports bind(0) and outgoing connections take). */
function ephemeralStart(file = '/proc/sys/net/ipv4/ip_local_port_range') {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim().split(/\s+/)[0]) || null;
  } catch {
    return null;
  }
}

function listenOn(port, host) {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(port, host, () => resolve(srv));
  });
}

const closeServer = (srv) => new Promise((resolve) => srv.close(() => resolve()));

/** The reservations folder, writable by every user (like /tmp), or null when it cannot be made. */
function reservationsDir(dir = RESERVATIONS) {
  try {
    if (!fs.existsSync(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      fs.chmodSync(dir, 0o1777);
    }
    return dir;
  } catch {
    return null;
  }
}

/** Reserves port for RESERVE_MS: true when no other chainperf process holds a reservation on it that is still young. */
function reserve(dir, port, now = Date.now()) {
  if (!dir) return true;
  const file = path.join(dir, String(port));
  try {
    fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (err) {
    if (err.code !== 'EEXIST') return true; // no reservations on this machine: the free-check alone
  }
  try {
    if (now - fs.statSync(file).mtimeMs < RESERVE_MS) return false;
    fs.rmSync(file, { force: true }); // an old reservation: its run has bound the port, or never will
    fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch {
    return false; // another process took it meanwhile
  }
}

/** A port below the ephemeral range, free on every interface now and reserved; its check server still open. */
async function drawPort(dir, low, high) {
  for (let tries = 0; tries < 200; tries++) {
    const port = low + Math.floor(Math.random() * (high - low));
    let srv;
    try {
      srv = await listenOn(port, '0.0.0.0');
    } catch {
      continue; // in use
    }
    if (reserve(dir, port)) return srv;
    await closeServer(srv);
  }
  throw new Error(`no free TCP port found in ${low}-${high - 1} after 200 tries`);
}

/**
 * One free port per name, all different: every port is held until all are chosen, so that this process never
 * returns one twice, and reserved for other chainperf processes for RESERVE_MS. Where the ephemeral range leaves no
 * room below it, the kernel chooses (bind to port 0).
 */
async function freePorts(names) {
  const start = ephemeralStart();
  const dir = reservationsDir();
  const servers = [];
  try {
    for (let i = 0; i < names.length; i += 1)
      servers.push(start && start - FLOOR >= 1000 ? await drawPort(dir, FLOOR, start) : await listenOn(0, '127.0.0.1'));
    return Object.fromEntries(names.map((name, i) => [name, servers[i].address().port]));
  } finally {
    await Promise.all(servers.map(closeServer));
  }
}

/** A TCP port that was free a moment ago, and is reserved for this run (see freePorts). */
async function freePort() {
  return (await freePorts(['port'])).port;
}

module.exports = { freePort, freePorts, ephemeralStart, reserve, RESERVE_MS };
