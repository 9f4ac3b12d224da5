// Number and time formats shared by every page, so the same quantity reads
// the same everywhere (and tests can compare what they see).

const dash = '—';
const usd2 = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2});
const usd0 = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD', maximumFractionDigits: 0});

const known = (v) => v !== null && v !== undefined && !Number.isNaN(v);

// money: dollars with cents ($1,234.56).
export const money = (v) => (known(v) ? usd2.format(v) : dash);
// moneyRound: whole dollars, for monthly amounts in summaries ($22,776).
export const moneyRound = (v) => (known(v) ? usd0.format(v) : dash);
export const perHour = (v) => (known(v) ? `${money(v)}/h` : dash);
export const perMonth = (v) => (known(v) ? `${money(v)}/mo` : dash);

export const pct = (v) => (known(v) ? `${(v * 100).toFixed(v > 0 && v < 0.01 ? 1 : 0)}%` : dash);

export function num(v, digits = 2) {
  if (!known(v)) return dash;
  return Number(v).toLocaleString('en-US', {maximumFractionDigits: digits});
}

// share: device-equivalents (0.5 of a GPU).
export const share = (v) => num(v, 2);

export function bytes(v) {
  if (!known(v)) return dash;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let x = v;
  while (Math.abs(x) >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

// latency: seconds shown in ms below one second.
export function latency(v) {
  if (!known(v)) return dash;
  return v < 1 ? `${(v * 1000).toFixed(v < 0.01 ? 1 : 0)} ms` : `${v.toFixed(2)} s`;
}

export const rate = (v, unit = '/s') => (known(v) ? `${num(v, v < 10 ? 2 : 0)}${unit}` : dash);

// time: RFC 3339 or unix seconds → "2026-12-01 23:40:00 UTC" (UTC, so every
// reader of a shared link sees the same).
export function time(v) {
  if (!known(v) || v === '') return dash;
  const d = typeof v === 'number' ? new Date(v * 1000) : new Date(v);
  if (Number.isNaN(d.getTime())) return String(v);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

// clock is an axis label: HH:MM, with seconds when the axis spans less
// than ten minutes (where minutes alone would repeat).
export function clock(unixSeconds, spanSeconds = Infinity) {
  return new Date(unixSeconds * 1000).toISOString().slice(11, spanSeconds < 600 ? 19 : 16);
}

// words: snake_case → "snake case".
export const words = (v) => (known(v) && v !== '' ? String(v).replaceAll('_', ' ') : dash);

// unit formatter for a series unit (UCUM, as the API sends it).
export function byUnit(unit) {
  switch (unit) {
    case '1': return pct;
    case 'By': return bytes;
    case 'W': return (v) => (known(v) ? `${num(v, 0)} W` : dash);
    case 'Cel': return (v) => (known(v) ? `${num(v, 0)} °C` : dash);
    case 's': return latency;
    default: return (v) => num(v, 2);
  }
}
