'use strict';
// What a client cannot do with a scenario's keys: a key the scenario sets
// (file or environment) that the client has no setting for is refused with
// the client's own reason; a default never is (it is recorded, not applied).

/**
 * @param {object} v resolved values
 * @param {object} given keys the file or the environment set
 * @param {{client: object, at: (key: string) => string}} ctx
 * @param {string[]} errors
 */
function clientChecks(v, given, { client, at }, errors) {
  for (const [key, why] of Object.entries(client.unsupported || {})) {
    if (given[key])
      errors.push(`${at(key)}: ${key}: CLIENT=${v.CLIENT} has no such setting (${why}); leave ${key} unset`);
  }
  if (client.needsClientBin && v.RUNTIME === 'host' && !v.CLIENT_BIN) {
    errors.push(
      `${at('RUNTIME')}: RUNTIME=host: CLIENT=${v.CLIENT} is not built or downloaded by chainperf: set CLIENT_BIN to a ${v.CLIENT} binary, or use RUNTIME=compose (its pinned image) or RUNTIME=attach`,
    );
  }
  if (given.DB_SIZE_LIMIT_GB && !client.dbSizeLimitFlag) {
    errors.push(
      `${at('DB_SIZE_LIMIT_GB')}: DB_SIZE_LIMIT_GB: CLIENT=${v.CLIENT} has no database size limit option; leave it unset`,
    );
  }
  if (v.RUNTIME === 'attach' && !(client.metrics && client.metrics.cpu)) {
    const cpu = v.CPU_SOURCE;
    if ((v.METRICS_URL || v.REPLICA_METRICS) && (cpu === 'metrics' || (cpu === 'auto' && !v.NODE_PID))) {
      errors.push(
        `${at('CPU_SOURCE')}: ${v.CLIENT} exports no process CPU counter chainperf knows: give NODE_PID (the node's process on this host) for RUNTIME=attach`,
      );
    }
  }
}

module.exports = { clientChecks };
