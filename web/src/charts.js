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

function axisFor(unit, side, grid) {
  const text = cssVar('--fg-muted');
  return {
    scale: side === 1 ? 'right' : 'left',
    side,
    label: axisLabel(unit),
    labelSize: 18,
    labelFont: '12px system-ui, sans-serif',
    font: '11px system-ui, sans-serif',
    stroke: text,
    size: 64,
    grid: { show: grid, stroke: cssVar('--grid'), width: 1 },
    ticks: { stroke: cssVar('--grid'), width: 1 },
    values: (u, splits) => splits.map((v) => formatValue(v, unit, 1)),
  };
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
  const opts = {
    width,
    height: 200,
    series,
    axes,
    scales: { x: { time: true }, left: { range: (u, min, max) => upTo(Math.max(max, extras && extras.yMax ? extras.yMax() : 0)) }, right: { range: (u, min, max) => upTo(max) } },
    cursor: { sync: { key: syncKey.key, setSeries: false }, drag: { x: false, y: false } },
    legend: { live: true },
    hooks: extras && extras.hooks ? extras.hooks : {},
  };
  const values = stacked ? stackData(data.series) : data.series.map((s) => s.values);
  if (stacked) {
    // Fill each band down to the series below it, not to zero.
    opts.bands = data.series.slice(1).map((_, i) => ({ series: [i + 2, i + 1] }));
  }
  return new uPlot(opts, [data.timestamps, ...values], el);
}
