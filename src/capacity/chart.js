'use strict';
// A capacity run's chart: the monthly cost of each instance's fleet against
// the target rate (its replicas' steps, the balancer's share a slope on them),
// the target marked, the choice a point on it. Extrapolated instances dashed.

const { lineChart } = require('../report/charts');
const { costCurve } = require('./arithmetic');

/** charts/cost.svg of a capacity run's state. */
function costChart(state) {
  const { target_rps: target, redundancy, headroom_pct: headroom } = state.settings;
  const xMax = 2 * target;
  const balancerCpuMs = state.balancer ? state.balancer.cpu_ms_per_request : null;
  const series = state.instances
    .filter((r) => r.usable_rps > 0)
    .map((r) => ({
      name: `${r.instance}${r.status === 'extrapolated' ? ' (extrap.)' : ''}`,
      points: costCurve(r, { xMax, redundancy, balancerCpuMs }),
      dashed: r.status === 'extrapolated',
    }));
  const top = Math.max(1, ...series.flatMap((s) => s.points.map(([, y]) => y)));
  series.push({
    name: `target ${target}/s`,
    points: [
      [target, 0],
      [target, top],
    ],
    dashed: true,
  });
  if (state.choice) series.push({ name: 'choice', points: [[target, state.choice.monthly_cost]], markers: true });
  const left = state.instances.filter((r) => r.status === 'needs-machine').map((r) => r.instance);
  return lineChart({
    title: 'Monthly cost of the fleet against the target rate',
    xLabel: 'target rate, requests/s',
    yLabel: 'cost per month (730 hours)',
    xRange: [0, xMax],
    series,
    note: `${headroom}% headroom, redundancy ${redundancy}; emulated on one machine${left.length ? `; not shown (needs a larger machine): ${left.join(', ')}` : ''}`,
  });
}

module.exports = { costChart };
