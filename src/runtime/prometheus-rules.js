'use strict';
// Recording rules for the compose runtime's Prometheus: the node's request,
// failure and latency metrics under chainperf's own names, so the Grafana
// dashboard has one query per panel whatever the client. The names each
// client exports come from its module (client.metrics); a client that exports
// none of them gets no rule and its panels stay empty.

/** Window of the recorded rates: five 1 s scrapes. */
const RATE_WINDOW = '5s';

/** The rule names the dashboards (grafana/dashboards.js) query; each keeps the run's id. */
const RULES = {
  requests: 'chainperf:node_rpc_requests:rate5s',
  failures: 'chainperf:node_rpc_failures:rate5s',
  latency: 'chainperf:node_rpc_latency_seconds',
};

/** Seconds per unit of a client's latency metric. */
const UNIT_S = { ns: 1e-9, us: 1e-6, ms: 1e-3, s: 1 };

/**
 * The rules for one client, as [{record, expr}].
 * @param {{metrics: {requests?: string|null, failures?: string, latency?: {summary: string, unit: string}}|null}}
 * client
 */
function recordingRules(client) {
  const m = client.metrics || {};
  const rules = [];
  if (m.requests)
    rules.push({ record: RULES.requests, expr: `sum by (run_id) (rate(${m.requests}{job="node"}[${RATE_WINDOW}]))` });
  if (m.failures)
    rules.push({ record: RULES.failures, expr: `sum by (run_id) (rate(${m.failures}{job="node"}[${RATE_WINDOW}]))` });
  if (m.latency) {
    if (!UNIT_S[m.latency.unit])
      throw new Error(`latency unit ${m.latency.unit}: expected one of ${Object.keys(UNIT_S).join(', ')}`);
    rules.push({
      record: RULES.latency,
      expr: `max by (run_id, quantile) (${m.latency.summary}{job="node", quantile=~"0.5|0.95|0.99"}) * ${UNIT_S[m.latency.unit]}`,
    });
  }
  return rules;
}

/** The rule file Prometheus loads (rule_files in prometheus/compose.yml), as YAML text. */
function rulesFile(client) {
  const rules = recordingRules(client);
  const body = rules
    .map((r) => `      - record: ${r.record}\n        expr: '${r.expr.replaceAll("'", "''")}'\n`)
    .join('');
  return `# written per run by chainperf (src/runtime/prometheus-rules.js)\ngroups:\n  - name: chainperf-node\n    interval: 1s\n    rules:${rules.length ? `\n${body}` : ' []\n'}`;
}

module.exports = { recordingRules, rulesFile, RULES };
