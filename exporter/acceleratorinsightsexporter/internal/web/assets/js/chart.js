// Inline SVG charts drawn from the API's series: a line chart for a device's
// metrics and a stacked bar chart for events over time. The SVG is built
// through DOM calls (no strings parsed), sized by its viewBox and scaled by
// CSS.

import {h, s} from './dom.js';
import {clock} from './format.js';

const WIDTH = 600;
const H = 170;
const PAD = {left: 56, right: 12, top: 10, bottom: 24};
// A fixed palette (one class per line) that the stylesheet colours.
const LINES = 8;

// lineChart({title, series: [{label, points: [[t, v]…]}], format, yMax, key})
// draws one line per series over the union of their time ranges.
export function lineChart({title, series, format, yMax, key}) {
  const W = WIDTH;
  const all = series.flatMap((x) => x.points).filter((p) => p[1] !== null && p[1] !== undefined);
  const fig = h('figure', {class: 'chart', dataset: key ? {chart: key} : null}, h('figcaption', null, title));
  if (all.length === 0) {
    fig.append(h('p', {class: 'muted'}, 'no data in this window'));
    return fig;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(...all.map((p) => p[0]));
  const vmax = yMax ?? niceMax(Math.max(...all.map((p) => p[1])));
  const x = (t) => PAD.left + (t1 === t0 ? 0.5 : (t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (vmax === 0 ? 0 : Math.min(v, vmax) / vmax) * (H - PAD.top - PAD.bottom);

  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, class: 'chart-svg'});
  for (let i = 0; i <= 4; i++) {
    const v = (vmax * i) / 4;
    svg.append(
      s('line', {x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid'}),
      s('text', {x: PAD.left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end'}, format(v)));
  }
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    svg.append(s('text', {x: x(t), y: H - 6, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle'}, clock(t, t1 - t0)));
  }
  series.forEach((ser, i) => {
    const pts = ser.points.filter((p) => p[1] !== null && p[1] !== undefined);
    if (pts.length === 0) return;
    const cls = `line l${i % LINES}`;
    if (pts.length === 1) {
      svg.append(s('circle', {cx: x(pts[0][0]), cy: y(pts[0][1]), r: 3, class: cls}));
    } else {
      svg.append(s('polyline', {points: pts.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' '), class: cls}));
    }
  });
  fig.append(svg);
  fig.append(h('ul', {class: 'legend'}, series.map((ser, i) => {
    const last = ser.points.length ? ser.points[ser.points.length - 1][1] : null;
    return h('li', null, h('span', {class: `swatch l${i % LINES}`}), `${ser.label} `, h('b', null, format(last)));
  })));
  return fig;
}

// barChart({title, buckets: [{start, counts: {k: n}}], keys, wide}) stacks each
// bucket's counts, one class per key (classOf(key, i), default the palette).
export function barChart({title, buckets, keys, key, classOf, wide}) {
  // A wide chart spans a page: more room across, the same text size.
  const W = wide ? 1200 : WIDTH;
  const cls = classOf || ((k, j) => `l${j % LINES}`);
  const fig = h('figure', {class: 'chart', dataset: key ? {chart: key} : null}, h('figcaption', null, title));
  const totals = buckets.map((b) => keys.reduce((sum, k) => sum + (b.counts[k] || 0), 0));
  const max = Math.max(0, ...totals);
  if (buckets.length === 0 || max === 0) {
    fig.append(h('p', {class: 'muted'}, 'no events in this window'));
    return fig;
  }
  // Counts: integer ticks.
  const vmax = Math.max(4, Math.ceil(max / 4) * 4);
  const bw = (W - PAD.left - PAD.right) / buckets.length;
  const y = (v) => H - PAD.bottom - (v / vmax) * (H - PAD.top - PAD.bottom);
  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, class: 'chart-svg'});
  for (let i = 0; i <= 4; i++) {
    const v = (vmax * i) / 4;
    svg.append(
      s('line', {x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid'}),
      s('text', {x: PAD.left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end'}, v));
  }
  buckets.forEach((b, i) => {
    let acc = 0;
    keys.forEach((k, j) => {
      const n = b.counts[k] || 0;
      if (n === 0) return;
      const r = s('rect', {x: PAD.left + i * bw + 1, width: Math.max(1, bw - 2), y: y(acc + n), height: y(acc) - y(acc + n), class: `bar ${cls(k, j)}`});
      r.append(s('title', null, `${b.start}: ${k} ${n}`));
      svg.append(r);
      acc += n;
    });
    if (i % Math.ceil(buckets.length / 6) === 0) {
      svg.append(s('text', {x: PAD.left + i * bw + bw / 2, y: H - 6, class: 'axis', 'text-anchor': 'middle'}, clock(Date.parse(b.start) / 1000)));
    }
  });
  fig.append(svg);
  fig.append(h('ul', {class: 'legend'}, keys.map((k, j) => h('li', null, h('span', {class: `swatch ${cls(k, j)}`}), k.replaceAll('_', ' ')))));
  return fig;
}

// meter is a horizontal bar of parts (value, class) summing to at most total.
export function meter(parts, total, label) {
  const el = h('div', {class: 'meter', title: label || ''});
  for (const [v, cls] of parts) {
    if (!v || !total) continue;
    el.append(h('span', {class: cls, style: {width: `${Math.max(0, Math.min(100, (v / total) * 100))}%`}}));
  }
  return el;
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}
