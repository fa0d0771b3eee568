// @ts-check
'use strict';
// Why a container's cAdvisor sample is missing from Prometheus, in words for
// the error that ends the window: the age of the last sample it holds, how its
// scrapes of cAdvisor went over the last half minute, and what Prometheus says
// of itself (its /metrics): DNS discovery of the cAdvisor targets failing, or
// its scrape loop falling behind its 1 s interval. And whether it has a
// cAdvisor target at all: DNS discovery that gets "no such name" drops the
// target without counting a failure, and its scrapes stop.

const { metricValue } = require('./cpu');
const { timeoutSignal } = require('../util/time');

/** What Prometheus's own metrics say of its discovery and scrape loop; '' when it does not answer. */
async function selfReport(promUrl, signal) {
  const text = await fetch(`${promUrl}/metrics`, { signal: timeoutSignal(5000, signal) })
    .then((r) => r.text())
    .catch(() => '');
  const lookups = metricValue(text, 'prometheus_sd_dns_lookups_total');
  const failures = metricValue(text, 'prometheus_sd_dns_lookup_failures_total');
  const p99 = metricValue(text, 'prometheus_target_interval_length_seconds', ['interval="1s"', 'quantile="0.99"']);
  const parts = [];
  if (lookups !== null && failures !== null) parts.push(`${failures} of its ${lookups} DNS lookups of cAdvisor failed`);
  if (p99 !== null && Number.isFinite(p99))
    parts.push(`99% of its 1 s scrape intervals took up to ${p99.toFixed(2)} s`);
  return parts.join(', ');
}

/** A sentence on the cAdvisor targets Prometheus scrapes now; '' when it does not say. */
async function targetsNow(promUrl, signal) {
  const body = await fetch(`${promUrl}/api/v1/targets?state=active`, { signal: timeoutSignal(5000, signal) })
    .then((r) => r.json())
    .catch(() => null);
  if (!body || !body.data || !Array.isArray(body.data.activeTargets)) return '';
  const n = body.data.activeTargets.filter((t) => t.labels && t.labels.job === 'cadvisor').length;
  if (n > 0) return `it scrapes ${n} cAdvisor target${n === 1 ? '' : 's'} now`;
  return (
    "it has no cAdvisor target now: its DNS discovery finds no address for the name cadvisor in the stack's network " +
    "(one known cause: `docker swarm leave` on this engine while the stack was up, after which the engine's DNS " +
    'stops answering on the networks that existed then, moby/moby#45144)'
  );
}

/**
 * What Prometheus knows that says why a container's sample after toMs is missing: the last one it holds (xs), its
 * scrapes of cAdvisor over the last half minute (a scrape slower than the 1 s interval fails; a target discovery
 * lost has none at all), its own metrics, and the cAdvisor targets it has now.
 * @param {string} promUrl
 * @param {{t_ms: number}[]} xs the container's samples Prometheus returned
 * @param {number} toMs the window's end
 * @param {{query: (url: string, sel: string, fromMs: number, toMs: number, signal?: AbortSignal) =>
 *   Promise<{values: [number, string][]}[]>, signal?: AbortSignal}} o query: a range query of Prometheus's API
 */
async function whyNoSample(promUrl, xs, toMs, { query, signal }) {
  const last = xs.length
    ? `its last sample stamped ${((toMs - xs[xs.length - 1].t_ms) / 1000).toFixed(1)} s before it`
    : 'no sample of it in the window';
  let scrapes;
  try {
    const nowMs = Date.now();
    const values = async (sel) =>
      (await query(promUrl, sel, nowMs - 25000, nowMs, signal)).flatMap((r) => r.values.map((v) => Number(v[1])));
    const [up, took] = await Promise.all([
      values('up{job="cadvisor"}'),
      values('scrape_duration_seconds{job="cadvisor"}'),
    ]);
    const failed = up.filter((u) => u === 0).length;
    const slowest = took.length ? `, the slowest took ${Math.max(...took).toFixed(2)} s` : '';
    scrapes = `of Prometheus' scrapes of cAdvisor in the last 30 s (30 expected) ${up.length} were made, ${failed} failed${slowest}`;
  } catch (err) {
    scrapes = `Prometheus did not say how its scrapes went: ${err.message}`;
  }
  const [self, targets] = await Promise.all([selfReport(promUrl, signal), targetsNow(promUrl, signal)]);
  return [last, scrapes, self, targets].filter(Boolean).join('; ');
}

module.exports = { whyNoSample };
