'use strict';
// The headline figures an A/B session compares, read from one measured
// window, and which direction of each is worse (for the regression gate).

/** figure key -> {label, unit, get(window), higherIsWorse, digits} */
const AB_FIGURES = {
  cpu_ms_per_request: {
    label: 'CPU ms/request (gross)',
    get: (w) => w.figures.cpu_ms_per_request,
    higherIsWorse: true,
    digits: 4,
  },
  cpu_ms_per_request_net: {
    label: 'CPU ms/request (net of idle)',
    get: (w) => w.figures.cpu_ms_per_request_net,
    higherIsWorse: true,
    digits: 4,
  },
  rps: { label: 'requests/s', get: (w) => w.figures.rps, higherIsWorse: false, digits: 1 },
  p50_ms: { label: 'p50 latency ms', get: (w) => w.figures.latency_ms.p50, higherIsWorse: true, digits: 2 },
  p99_ms: { label: 'p99 latency ms', get: (w) => w.figures.latency_ms.p99, higherIsWorse: true, digits: 2 },
  memory_peak_bytes: {
    label: 'node memory peak (bytes)',
    get: (w) => (w.node && Number.isFinite(w.node.memory_peak_bytes) ? w.node.memory_peak_bytes : null),
    higherIsWorse: true,
    digits: 0,
    // Pairs resample windows, not processes: two identical node processes settle at heaps of different sizes and keep
    // them all session (4 of 10 A/A sessions called them different). Reported, never decided.
    undecided:
      "each side is one node process for the whole session, and its memory is that process's: the pairs resample windows, not processes, so their interval says nothing of the configurations",
  },
  disk_bytes_per_request: {
    label: 'disk bytes/request (read+write)',
    get: diskPerRequest,
    higherIsWorse: true,
    digits: 1,
  },
};

function diskPerRequest(w) {
  const n = w.node || {};
  if (!Number.isFinite(n.disk_read_bytes) || !Number.isFinite(n.disk_write_bytes) || !(w.figures.requests_ok > 0))
    return null;
  return (n.disk_read_bytes + n.disk_write_bytes) / w.figures.requests_ok;
}

/** The compared figures of one window, {key: value|null}. */
function windowFigures(w) {
  const out = {};
  for (const [key, f] of Object.entries(AB_FIGURES)) {
    const v = f.get(w);
    out[key] = typeof v === 'number' && Number.isFinite(v) ? v : null;
  }
  return out;
}

module.exports = { AB_FIGURES, windowFigures };
