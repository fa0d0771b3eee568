'use strict';
// Node clients. Each module gives its defaults, the chains it serves, how to
// install it, and the command line that starts it for a scenario.
module.exports = {
  geth: require('./geth'),
  chopsticks: require('./chopsticks'),
  'polkadot-omni-node': require('./polkadot-omni-node'),
  polkadot: require('./polkadot'),
};
