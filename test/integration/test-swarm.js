'use strict';
// The swarm the swarm tests run on, made with `docker swarm init` on the Docker
// bridge's address when the engine is in none, and left again after.
//
// Leaving is what needs care: on Docker 20.10 (which Debian ships), `docker swarm
// leave` stops the engine's embedded DNS answering on every network that
// existed while it was in the swarm (moby/moby#45144), so a compose run up at
// that moment loses its service names (Prometheus's DNS discovery of cAdvisor
// finds none, and the window's samples stop). The integration runner
// (scripts/test-integration.js) therefore makes the swarm before its first file
// and leaves it after its last; swarm.test.js alone makes and leaves its own.

const { execFileSync } = require('node:child_process');
const swarm = require('../../src/platform/swarm');
const { bridgeAddress } = require('./swarm-worker');

/** A swarm this engine manages: the one it is in, or one made now; {made, leave()} (leave does nothing if not made). */
async function holdSwarm() {
  if ((await swarm.swarmState()).active) return { made: false, leave: () => {} };
  // on the bridge's address, which a worker in a container reaches (127.0.0.1 would be its own)
  execFileSync('docker', ['swarm', 'init', '--advertise-addr', bridgeAddress()], { stdio: 'pipe' });
  return { made: true, leave: () => execFileSync('docker', ['swarm', 'leave', '--force'], { stdio: 'pipe' }) };
}

module.exports = { holdSwarm };
