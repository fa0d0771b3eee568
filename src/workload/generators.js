// @ts-check
'use strict';
// The load generators (GENERATOR): what writes the artillery script a pass
// runs, and how a report names it. Each is an entry here; a new one is an
// entry and its engine or processor (docs/architecture.md).
//   ethers: artillery's own virtual users call the chain's processor
//           (src/workload/processors/<chain>.js), which sends each request
//           through the chain's client library, as a wallet or a dapp does.
//   lean:   chainperf's artillery engine (src/workload/engines/), keep-alive
//           sockets and requests prepared ahead: figures at full speed; run by
//           chainperf's lean runner (lean-runner.js) or by artillery (LEAN_RUNNER).

const { shapeOf } = require('./shapes');
const { leanRunnerOf } = require('./pass-command');

/** artillery phases for the load shape; they run from artillery's start until after endAt. */
/**
 * @param {import('../contracts').Scenario} s
 * @param {number} totalS
 */
function phases(s, totalS) {
  const shape = shapeOf(s);
  if (shape) {
    // Arrivals at the peak rate throughout; the processor lets through what the shape asks at each instant (shapes.js).
    return [
      {
        duration: Math.max(1, totalS),
        arrivalRate: Math.ceil(shape.peak_rps),
        name: `${shape.kind} shape (arrivals at its peak rate)`,
      },
    ];
  }
  if (s.RATE) {
    const out = [];
    if (s.RAMP_S) out.push({ duration: s.RAMP_S, arrivalRate: 1, rampTo: s.RATE, name: 'ramp' });
    out.push({ duration: Math.max(1, totalS - s.RAMP_S), arrivalRate: s.RATE, name: 'open loop' });
    return out;
  }
  return [{ duration: Math.max(1, s.RAMP_S), arrivalCount: s.CONCURRENCY, name: 'closed loop' }];
}

const name = (s) => `chainperf ${s.WORKLOAD}`;
/** One virtual user that paces a replay or an open loop itself. */
const paced = (why) => [{ duration: 1, arrivalCount: 1, name: why }];

/** @type {Object<string, import('../contracts').Generator>} */
const generators = {
  ethers: {
    name: 'ethers',
    label: (s) => `artillery + ethers over ${s.TRANSPORT === 'ws' ? 'WebSocket' : 'HTTP'}`,
    script(s, { target, processor, totalS, replay }) {
      if (replay)
        // One virtual user replays the capture on its own clock (replay.js).
        return {
          config: { target, processor, phases: paced('replay (paced by the generator)') },
          scenarios: [{ name: name(s), flow: [{ function: 'replay' }, { function: 'afterScenario' }] }],
        };
      const flow = s.RATE
        ? [{ function: 'sendRequest' }, { function: 'afterScenario' }]
        : [{ loop: [{ function: 'sendRequest' }], whileTrue: 'keepGoing' }, { function: 'afterScenario' }];
      return { config: { target, processor, phases: phases(s, totalS) }, scenarios: [{ name: name(s), flow }] };
    },
  },
  lean: {
    name: 'lean',
    label: (s) =>
      `chainperf's lean engine over ${s.TRANSPORT === 'ws' ? 'WebSocket' : 'HTTP'}${s.LEAN_SENDER === 'native' ? ', native sender' : ''}`,
    script(s, { target, totalS, replay }) {
      // runner: the lean runner (lean-runner.js) or artillery's CLI runs the pass (LEAN_RUNNER, pass-command.js)
      const engines = { chainperf: { runner: leanRunnerOf(s) } };
      if (replay)
        return {
          config: { target, phases: paced('replay (paced by the generator)'), engines },
          scenarios: [{ name: name(s), engine: 'chainperf', replay: true, flow: [] }],
        };
      // The chainperf engine runs each virtual user's loop itself; an open loop is one user pacing the rate.
      const scenario = s.RATE
        ? { engine: 'chainperf', openLoopRate: s.RATE, rampS: s.RAMP_S, flow: [] }
        : { engine: 'chainperf', closedLoop: true, flow: [] };
      const ph = s.RATE ? paced('open loop (paced by the engine)') : phases(s, totalS);
      return { config: { target, phases: ph, engines }, scenarios: [{ name: name(s), ...scenario }] };
    },
  },
};

module.exports = generators;
module.exports.phases = phases;
