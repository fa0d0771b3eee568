'use strict';
// What ws-node-floor.js and http-node-floor.js share around their loops: the
// connections opened at once, the answers counted, the count printed when the
// seconds are up, and a socket error that ends the floor with its message.

/**
 * Runs a floor: open(counter, fail) is called once per connection; it adds the answers it reads to counter.answers
 * and hands a socket error to fail.
 */
function runFloor(name, { connections, seconds, open }) {
  const counter = { answers: 0 };
  const fail = (err) => {
    process.stderr.write(`${name}: ${err.message}\n`);
    process.exit(1);
  };
  for (let i = 0; i < Number(connections); i++) open(counter, fail);
  setTimeout(
    () => {
      process.stdout.write(`${counter.answers}\n`);
      process.exit(0);
    },
    Number(seconds) * 1000,
  );
}

module.exports = { runFloor };
