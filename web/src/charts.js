// uPlot chart creation for the dashboard's time-series panels: unit-labelled axes, one shared
// cursor across every chart (uPlot's cursor.sync), colours from the page's CSS variables so the
// same chart is legible in light and dark mode.
import uPlot from 'uplot';
import { formatValue, axisLabel } from './format.js';

export const syncKey = uPlot.sync('inferscope');

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function palette() {
  const colours = [];
  for (let i = 1; i <= 8; i++) colours.push(cssVar(`--series-${i}`));
  return colours;
}

function withAlpha(colour, alpha) {
  // Colours in the CSS are #rrggbb; the stacked areas need a translucent fill.
  const m = /^#([0-9a-f]{6})$/i.exec(colour);
  if (!m) return colour;
  const n = parseInt(m[1], 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

// stackData turns per-series values into cumulative sums so the areas stack; the legend still
// shows each series' own value (kept in `raw`).
function stackData(series) {
  const acc = [];
  return series.map((s) => s.values.map((v, i) => {
    const base = acc[i] ?? 0;
    const next = v == null ? base : base + v;
    acc[i] = next;
    return next;
  }));
}

// Tick labels are drawn in kTickFont; a y axis is as wide as its widest label plus the tick and
// the gap before it, and uPlot puts the axis title (kTitleSize px, outside) beyond that, so the
// title never lies over a label however wide the values get ("1.5k tokens", "100 %").
const kTickFont = '11px system-ui, sans-serif';
const kTickSize = 10;
const kTickGap = 5;
const kTitleSize = 18;
const kTitleMargin = 4; // between the widest label's ink and the title
let measureCtx = null;

function textWidth(text, font) {
  if (!measureCtx) measureCtx = document.createElement('canvas').getContext('2d');
  measureCtx.font = font;
  const m = measureCtx.measureText(text);
  // The ink can reach past the advance width by a pixel (e.g. a trailing "%"): take the larger.
  return Math.max(m.width, (m.actualBoundingBoxLeft || 0) + (m.actualBoundingBoxRight || 0));
}

// yAxisSize is uPlot's axis size callback: tick + gap + the widest tick label (in CSS px). uPlot
// calls it again whenever the labels change, until the layout converges.
export function yAxisSize(u, values) {
  const widest = (values || []).reduce((w, v) => (v == null ? w : Math.max(w, textWidth(String(v), kTickFont))), 0);
  return Math.ceil(kTickSize + kTickGap + Math.max(widest, 24) + kTitleMargin);
}

function axisFor(unit, side, grid) {
  const text = cssVar('--fg-muted');
  return {
    scale: side === 1 ? 'right' : 'left',
    side,
    label: axisLabel(unit),
    labelSize: kTitleSize,
    labelFont: '12px system-ui, sans-serif',
    font: kTickFont,
    stroke: text,
    size: yAxisSize,
    gap: kTickGap,
    grid: { show: grid, stroke: cssVar('--grid'), width: 1 },
    ticks: { stroke: cssVar('--grid'), width: 1, size: kTickSize },
    values: (u, splits) => splits.map((v) => formatValue(v, unit, 1)),
  };
}

// firstSampleTime is the time of the first point at which any series has a value (null when none
// has).
export function firstSampleTime(timestamps, columns) {
  for (let i = 0; i < timestamps.length; i++) {
    if (columns.some((c) => c[i] != null)) return timestamps[i];
  }
  return null;
}

// timeAxisStart is where a chart's time axis starts: at the first sample, so a young stack's
// minute of data fills the 15 min range's chart instead of its right edge; one step before it when
// that sample is the range's last point (an axis needs a width); the range's start without data.
export function timeAxisStart(timestamps, columns) {
  const n = timestamps.length;
  const first = firstSampleTime(timestamps, columns);
  if (first == null || n < 2) return n ? timestamps[0] : null;
  return first < timestamps[n - 1] ? first : timestamps[n - 2];
}

function upTo(max) {
  return [0, max > 0 ? max * 1.1 : 1];
}

// buildChart creates a uPlot for a panel's time series inside `el`.
// panel: {kind, unit, right_unit}; data: {timestamps, series:[{label, unit, axis, values}]};
// extras (optional): {hooks: uPlot hooks, yMax: () => a value the left axis must reach}.
export function buildChart(el, panel, data, width, extras = null) {
  const colours = palette();
  const stacked = panel.kind === 'stacked';
  const hasRight = data.series.some((s) => s.axis === 'right');
  const leftUnit = panel.unit;
  const rightUnit = panel.right_unit || (data.series.find((s) => s.axis === 'right') || {}).unit;
  const series = [{ value: (u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString()) }];
  data.series.forEach((s, i) => {
    const colour = colours[i % colours.length];
    const right = s.axis === 'right';
    series.push({
      label: s.label,
      scale: right ? 'right' : 'left',
      stroke: colour,
      width: right ? 2 : 1.5,
      dash: right ? [6, 4] : undefined,
      fill: stacked ? withAlpha(colour, 0.35) : undefined,
      spanGaps: false,
      points: { show: false },
      value: (u, v, si, idx) => {
        const raw = stacked ? data.series[si - 1].values[idx] : v;
        return formatValue(raw, right ? rightUnit : (s.unit || leftUnit));
      },
    });
  });
  const axes = [
    { stroke: cssVar('--fg-muted'), grid: { stroke: cssVar('--grid'), width: 1 }, ticks: { stroke: cssVar('--grid') }, font: '11px system-ui, sans-serif' },
    axisFor(leftUnit, 3, true),
  ];
  if (hasRight) axes.push(axisFor(rightUnit, 1, false));
  // The time axis starts at the first sample, so data shorter than the range fills the chart. The
  // panel element records the scale beside the data's own bounds (data-x-min, data-first-sample,
  // data-range-start), which the page test compares.
  const panelEl = el.closest('section.panel');
  const rawColumns = (u) => (stacked ? data.series.map((s) => s.values) : u.data.slice(1));
  const xRange = (u, min, max) => {
    const start = timeAxisStart(u.data[0] || [], rawColumns(u));
    return [start != null && start < max ? start : min, max];
  };
  const hooks = { ...(extras && extras.hooks ? extras.hooks : {}) };
  hooks.setScale = [...(hooks.setScale || []), (u, key) => {
    if (key !== 'x' || !panelEl) return;
    const ts = u.data[0] || [];
    const first = firstSampleTime(ts, rawColumns(u));
    panelEl.dataset.xMin = String(u.scales.x.min);
    panelEl.dataset.xMax = String(u.scales.x.max);
    panelEl.dataset.rangeStart = ts.length ? String(ts[0]) : '';
    panelEl.dataset.rangeEnd = ts.length ? String(ts[ts.length - 1]) : '';
    panelEl.dataset.step = ts.length > 1 ? String(ts[1] - ts[0]) : '';
    panelEl.dataset.firstSample = first == null ? '' : String(first);
  }];
  const opts = {
    width,
    height: 200,
    series,
    axes,
    scales: { x: { time: true, range: xRange }, left: { range: (u, min, max) => upTo(Math.max(max, extras && extras.yMax ? extras.yMax() : 0)) }, right: { range: (u, min, max) => upTo(max) } },
    cursor: { sync: { key: syncKey.key, setSeries: false }, drag: { x: false, y: false } },
    legend: { live: true },
    hooks,
  };
  const values = stacked ? stackData(data.series) : data.series.map((s) => s.values);
  if (stacked) {
    // Fill each band down to the series below it, not to zero.
    opts.bands = data.series.slice(1).map((_, i) => ({ series: [i + 2, i + 1] }));
  }
  return new uPlot(opts, [data.timestamps, ...values], el);
}
