'use strict';
// Small dependency-free SVG line charts: they render in any git web view and
// diff as text.

const W = 720;
const H = 320;
const PAD = { left: 70, right: 20, top: 40, bottom: 62 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd'];

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten. */
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

const fmt = (v) => (Number.isInteger(v) || Math.abs(v) >= 100 ? v.toFixed(0) : String(Number(v.toPrecision(3))));

/**
 * Points are [x, y] or [x, y, low, high]: the last two draw an error bar.
 * @param {{title:string, xLabel:string, yLabel:string, series:{name:string, points:number[][]}[], note?:string,
 * xRange?:[number,number], yRange?:[number,number], logX?:boolean}} c
 * @returns {string} SVG document
 */
function lineChart({ title, xLabel, yLabel, series: input, note, xRange, yRange, logX = false }) {
  // On a log x axis, points are placed by log10(x) and ticks labelled with x.
  const tx = (x) => (logX ? Math.log10(x) : x);
  const series = input.map((s) => ({ ...s, points: s.points.map(([x, ...rest]) => [tx(x), ...rest]) }));
  const pts = series.flatMap((s) => s.points).filter(([, y]) => Number.isFinite(y));
  const sc = scales(pts, xRange, yRange);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="15">${esc(title)}</text>`,
    ...axes(sc, { xLabel, yLabel, logX }),
  ];
  series.forEach((s, i) => out.push(...seriesMarks(s, i, sc)));
  if (!pts.length)
    out.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" fill="#888">no data in the measured window</text>`);
  if (note)
    out.push(
      `<text x="${W - PAD.right}" y="${H - 6}" text-anchor="end" fill="#666" font-size="10">${esc(note)}</text>`,
    );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The plot's ranges and the functions from data to pixels. */
function scales(pts, xRange, yRange) {
  const xs = pts.map(([x]) => x);
  const xMin = xRange ? xRange[0] : xs.length ? Math.min(...xs) : 0;
  const xMax = xRange ? xRange[1] : xs.length ? Math.max(...xs, xMin + 1) : 1;
  const yMin = yRange ? yRange[0] : 0;
  const yMax = yRange
    ? yRange[1]
    : niceMax(pts.length ? Math.max(...pts.map(([, y, , hi]) => (Number.isFinite(hi) ? Math.max(y, hi) : y))) : 1);
  const pw = W - PAD.left - PAD.right;
  const ph = H - PAD.top - PAD.bottom;
  const sx = (x) => PAD.left + ((x - xMin) / (xMax - xMin)) * pw;
  const sy = (y) => PAD.top + ph - ((y - yMin) / (yMax - yMin)) * ph;
  return { xMin, xMax, yMin, yMax, ph, sx, sy };
}

/** Grid lines, tick labels, the axes and their labels. */
function axes({ xMin, xMax, yMin, yMax, ph, sx, sy }, { xLabel, yLabel, logX }) {
  const out = [];
  for (let i = 0; i <= 5; i++) {
    const y = yMin + ((yMax - yMin) * i) / 5;
    out.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${sy(y).toFixed(1)}" y2="${sy(y).toFixed(1)}" stroke="#ddd"/>`,
    );
    out.push(`<text x="${PAD.left - 6}" y="${(sy(y) + 4).toFixed(1)}" text-anchor="end">${fmt(y)}</text>`);
  }
  for (let i = 0; i <= 5; i++) {
    const x = xMin + ((xMax - xMin) * i) / 5;
    const label = logX ? 10 ** x : x;
    out.push(
      `<text x="${sx(x).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${fmt(Number(label.toPrecision(3)))}</text>`,
    );
  }
  out.push(`<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + ph}" stroke="#333"/>`);
  out.push(`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${PAD.top + ph}" y2="${PAD.top + ph}" stroke="#333"/>`);
  out.push(`<text x="${W / 2}" y="${H - 26}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(
    `<text transform="translate(16 ${PAD.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  return out;
}

/** One series: its line (or lone point), its error bars, its markers and its legend entry. */
function seriesMarks(s, i, { sx, sy }) {
  const out = [];
  const color = COLORS[i % COLORS.length];
  const good = s.points.filter(([, y]) => Number.isFinite(y));
  if (good.length === 1) {
    out.push(`<circle cx="${sx(good[0][0]).toFixed(1)}" cy="${sy(good[0][1]).toFixed(1)}" r="3" fill="${color}"/>`);
  } else if (good.length > 1) {
    const d = good.map(([x, y], k) => `${k ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
    out.push(
      `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.8"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
  }
  for (const [x, , lo, hi] of good) {
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) continue;
    const X = sx(x).toFixed(1);
    const [l, r] = [(sx(x) - 4).toFixed(1), (sx(x) + 4).toFixed(1)];
    const [yl, yh] = [sy(lo).toFixed(1), sy(hi).toFixed(1)];
    out.push(
      `<path d="M${X},${yl} L${X},${yh} M${l},${yl} L${r},${yl} M${l},${yh} L${r},${yh}" stroke="${color}" stroke-width="1.2"/>`,
    );
  }
  if (s.markers)
    for (const [x, y] of good)
      out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="2.5" fill="${color}"/>`);
  out.push(`<rect x="${PAD.left + 10 + i * 140}" y="${PAD.top - 14}" width="10" height="10" fill="${color}"/>`);
  out.push(`<text x="${PAD.left + 24 + i * 140}" y="${PAD.top - 5}">${esc(s.name)}</text>`);
  return out;
}

/**
 * Horizontal bars, one per label, longest scale first.
 * @param {{title:string, xLabel:string, bars:{label:string, value:number}[], note?:string}} c
 */
function barChart({ title, xLabel, bars, note }) {
  const rowH = 24;
  const left = 210;
  const h = PAD.top + bars.length * rowH + 60;
  const max = niceMax(Math.max(0, ...bars.map((b) => b.value).filter(Number.isFinite)));
  const pw = W - left - PAD.right - 60;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="12">`,
  ];
  out.push(`<rect width="${W}" height="${h}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="15">${esc(title)}</text>`);
  bars.forEach((b, i) => {
    const y = PAD.top + i * rowH;
    const w = Number.isFinite(b.value) ? (b.value / max) * pw : 0;
    out.push(`<text x="${left - 8}" y="${y + 15}" text-anchor="end">${esc(b.label)}</text>`);
    out.push(`<rect x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${COLORS[0]}"/>`);
    out.push(
      `<text x="${(left + w + 6).toFixed(1)}" y="${y + 15}">${Number.isFinite(b.value) ? fmt(Number(b.value.toPrecision(3))) : 'n/a'}</text>`,
    );
  });
  out.push(`<text x="${left + pw / 2}" y="${h - 26}" text-anchor="middle">${esc(xLabel)}</text>`);
  if (note)
    out.push(
      `<text x="${W - PAD.right}" y="${h - 6}" text-anchor="end" fill="#666" font-size="10">${esc(note)}</text>`,
    );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { lineChart, barChart, niceMax };
