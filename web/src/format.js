// Unit-aware number formatting for axes, legends and tables. Units are the ones the server's
// panel catalog uses (src/dashboard/panel_catalog.cpp): s, req/s, tokens, tokens/s, ratio,
// percent, MiB, bytes, celsius, watts, count, count/s, cores.

const siSuffixes = [
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

function trimNumber(v, digits) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  const d = a >= 100 ? 0 : a >= 10 ? Math.min(digits, 1) : digits;
  return v.toFixed(d).replace(/\.0+$/, '').replace(/(\.\d*?)0+$/, '$1');
}

function si(v, digits = 2) {
  const a = Math.abs(v);
  for (const [f, s] of siSuffixes) if (a >= f) return trimNumber(v / f, digits) + s;
  return trimNumber(v, digits);
}

// formatValue renders one value with its unit; null/NaN render as an em dash.
export function formatValue(v, unit, digits = 2) {
  if (v == null || Number.isNaN(v)) return '—';
  switch (unit) {
    case 's': {
      const a = Math.abs(v);
      if (a === 0) return '0 s';
      if (a < 1e-3) return trimNumber(v * 1e6, digits) + ' µs';
      if (a < 1) return trimNumber(v * 1e3, digits) + ' ms';
      if (a < 120) return trimNumber(v, digits) + ' s';
      if (a < 7200) return trimNumber(v / 60, digits) + ' min';
      return trimNumber(v / 3600, digits) + ' h';
    }
    case 'ratio': return trimNumber(v * 100, digits) + ' %';
    case 'percent': return trimNumber(v, digits) + ' %';
    case 'MiB': return v >= 1024 ? trimNumber(v / 1024, digits) + ' GiB' : trimNumber(v, digits) + ' MiB';
    case 'bytes': {
      const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
      let x = v, i = 0;
      while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
      return trimNumber(x, digits) + ' ' + units[i];
    }
    case 'celsius': return trimNumber(v, 1) + ' °C';
    case 'watts': return trimNumber(v, 1) + ' W';
    case 'cores': return trimNumber(v, digits) + ' cores';
    case '': case undefined: case null: return si(v, digits);
    default: return si(v, digits) + ' ' + unit;
  }
}

// axisLabel is the text under a chart's axis: the unit spelled out.
export function axisLabel(unit) {
  switch (unit) {
    case 's': return 'latency';
    case 'ratio': return 'percent';
    case 'percent': return 'percent';
    case 'celsius': return '°C';
    case 'watts': return 'watts';
    default: return unit || '';
  }
}
