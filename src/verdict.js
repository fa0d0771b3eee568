'use strict';
// Validation: the bounds of a scenario against a run's figures. A run with
// bounds ends with a verdict; the exit status is 1 when any bound fails.

const BOUNDS = [
  {
    key: 'MAX_CPU_MS_PER_REQUEST',
    figure: 'cpu_ms_per_request',
    get: (f) => f.cpu_ms_per_request,
    max: true,
    unit: 'ms',
  },
  { key: 'MAX_P99_MS', figure: 'latency_ms.p99', get: (f) => f.latency_ms.p99, max: true, unit: 'ms' },
  { key: 'MAX_ERROR_RATE', figure: 'error_rate', get: (f) => f.error_rate, max: true, unit: '' },
  { key: 'MIN_RPS', figure: 'rps', get: (f) => f.rps, max: false, unit: 'requests/s' },
  // a network that moves (NETWORK_NODES): the node's worst head lag in the window
  { key: 'MAX_HEAD_LAG_S', figure: 'head_lag_s_max', get: (f) => f.head_lag_s_max ?? null, max: true, unit: 's' },
];

/**
 * @param {object} scenario resolved scenario
 * @param {object|undefined} figures the run's figures (absent when the run failed)
 * @returns {null|{pass:boolean, checks:object[], failed:string[]}} null when the scenario sets no bound
 */
function verdict(scenario, figures) {
  const set = BOUNDS.filter((b) => scenario[b.key] !== null && scenario[b.key] !== undefined);
  if (!set.length) return null;
  const checks = set.map((b) => {
    const limit = scenario[b.key];
    const value = figures ? b.get(figures) : null;
    // A figure that could not be measured cannot satisfy a bound.
    const pass = value !== null && value !== undefined && (b.max ? value <= limit : value >= limit);
    return { key: b.key, figure: b.figure, limit, value: value === undefined ? null : value, pass };
  });
  const failed = checks
    .filter((c) => !c.pass)
    .map((c) => {
      const b = BOUNDS.find((x) => x.key === c.key);
      const v = c.value === null ? 'not measured' : `${c.value}${b.unit ? ` ${b.unit}` : ''}`;
      return `${c.key}=${c.limit}: ${c.figure} was ${v}`;
    });
  return { pass: failed.length === 0, checks, failed };
}

module.exports = { verdict, BOUNDS };
