// Device: identity, holders, partitions, charts of its series, health
// timeline, cost and waste, findings.

import {getJSON} from '../api.js';
import {barChart, lineChart} from '../chart.js';
import {deviceHref, h, healthBadge, kv, link, nodeHref, section, table} from '../dom.js';
import {byUnit, moneyRound, pct, perHour, share, time, words} from '../format.js';
import {eventsTable, findingsTable, holdersTable, tileClass, wasteList, windowPicker} from './common.js';
import {shortDevice} from './inference.js';
import {plansSection} from './plans.js';

// Charts and the series each one draws (names as the API sends them).
const CHARTS = [
  {key: 'utilization', title: 'Utilization', names: ['utilization'], yMax: 1},
  {key: 'memory', title: 'Memory used', names: ['memory_used']},
  {key: 'memory_utilization', title: 'Memory utilization', names: ['memory_utilization'], yMax: 1},
  {key: 'power', title: 'Power', names: ['power']},
  {key: 'temperature', title: 'Temperature', names: ['temperature']},
  {key: 'activity', title: 'SM, tensor and DRAM activity', names: ['sm_active', 'sm_occupancy', 'tensor_active', 'dram_active', 'gr_engine_active'], yMax: 1},
];

export async function render(ctx) {
  const id = ctx.params.get('id');
  if (!id) throw Object.assign(new Error('no device named: the URL needs ?id=<hw.id>'), {status: 404});
  const q = [['id', id], ['window', ctx.params.get('window') || '1h']];
  if (ctx.params.get('node')) q.push(['node', ctx.params.get('node')]);
  const [d, plans] = await Promise.all([getJSON('device', q), getJSON('plans', [['device', id]])]);
  const dev = d.device;
  ctx.title = `${dev.model || dev.family} ${dev.id}`;
  return h('div', {class: 'page device'},
    h('h1', null, dev.kind === 'partition' ? 'Partition ' : 'Device ', h('span', {class: 'mono', dataset: {k: 'device-id'}}, dev.id)),
    identity(dev),
    health(dev),
    h('div', {class: 'two'},
      section('Cost and waste',
        h('dl', {class: 'identity'},
          kv('cost', `${perHour(dev.cost_per_hour)} · ${moneyRound(dev.cost_per_month)}/mo`, 'device-cost'),
          kv('waste', perHour(dev.waste_per_hour), 'device-waste')),
        wasteList(dev.waste_by_reason)),
      section('Holders', holdersTable(d.holders))),
    d.partitions && d.partitions.length ? section('Partitions', partitions(d.partitions)) : null,
    section('Metrics', windowPicker(ctx.params, ctx.navigate), charts(d.series)),
    section('Health timeline', timeline(d.health_timeline, d.series.window_seconds), eventsTable(d.health_timeline)),
    section('Findings', findingsTable(d.findings || [], {onChange: ctx.refresh})),
    plansSection(plans, {onChange: ctx.refresh, title: 'Remediation plans'}));
}

function identity(dev) {
  return h('dl', {class: 'identity'},
    kv('UUID / id', h('span', {class: 'mono'}, dev.id)),
    kv('model', dev.model || '—', 'device-model'),
    kv('family', words(dev.family)),
    kv('index', dev.index ?? '—'),
    kv('node', dev.node ? link(nodeHref(dev.node), dev.node) : '—', 'device-node'),
    kv('cluster', dev.cluster || '—'),
    kv('instance type', dev.instance_type || '—'),
    kv('zone', dev.zone || '—'),
    kv('partition type', words(dev.partition_type), 'device-partition-type'),
    kv('profile', dev.profile || '—'),
    kv('share', share(dev.share)),
    kv('parent', dev.parent ? link(deviceHref(dev.parent, dev.node), dev.parent) : '—'),
    kv('allocation', `${words(dev.allocation)} (${share(dev.allocated_share)})`, 'device-allocation'),
    kv('utilization', pct(dev.utilization), 'device-utilization'));
}

function health(dev) {
  const bad = dev.health && dev.health !== 'ok';
  return h('section', {class: `panel health-panel ${bad ? `bad health-border-${dev.health}` : ''}`},
    h('h2', null, 'Health ', h('span', {dataset: {k: 'device-health'}}, healthBadge(dev.health))),
    bad || dev.action ? h('dl', {class: 'identity'},
      kv('failure mode', words(dev.failure_mode), 'device-failure-mode'),
      kv('recommended action', h('span', null, h('b', {dataset: {k: 'device-action'}}, words(dev.action)),
        dev.action_description ? ` — ${dev.action_description}` : '')),
    ) : h('p', {class: 'muted'}, 'No health problem reported.'));
}

function partitions(list) {
  return table([
    {label: 'partition', cell: (p) => link(deviceHref(p.id, p.node), p.id)},
    {label: 'profile', cell: (p) => p.profile || '—'},
    {label: 'health', cell: (p) => healthBadge(p.health)},
    {label: 'utilization', class: 'num', cell: (p) => pct(p.utilization)},
    {label: 'allocation', cell: (p) => `${words(p.allocation)} (${share(p.allocated_share)})`},
    {label: 'holders', cell: (p) => (p.holders || []).map((x) => `${x.namespace}/${x.pod}`).join(', ') || '—'},
    {label: 'cost', class: 'num', cell: (p) => perHour(p.cost_per_hour)},
    {label: 'waste', class: 'num', cell: (p) => perHour(p.waste_per_hour)},
  ], list, {rowData: (p) => ({id: p.id}), rowClass: (p) => tileClass(p, 'utilization').replace('tile', 'row')});
}

function charts(series) {
  const metrics = series.metrics || [];
  const figs = CHARTS.map((c) => {
    const sers = metrics.filter((m) => c.names.includes(m.name));
    if (sers.length === 0) return null;
    // One line per (metric, resource): a Neuron device draws one line per
    // NeuronCore, a MIG device one per instance.
    const many = new Set(sers.map((m) => m.resource)).size > 1;
    return lineChart({
      title: c.title,
      key: c.key,
      yMax: c.yMax,
      format: byUnit(sers[0].unit),
      series: sers.map((m) => ({label: [c.names.length > 1 ? words(m.name) : null, many ? shortID(m.resource) : null].filter(Boolean).join(' ') || words(m.name), points: m.points})),
    });
  }).filter(Boolean);
  if (figs.length === 0) return h('p', {class: 'muted'}, 'No series in this window.');
  return h('div', {class: 'charts'}, figs);
}

// shortID labels a chart line: nd0/nc1 for a NeuronCore, the instance
// for a MIG partition.
function shortID(id) {
  return id ? shortDevice(id) : id;
}

// timeline draws the health events over the window as one bar per 5 minutes,
// stacked by state, above the event table.
function timeline(events, windowSeconds) {
  if (!events || events.length === 0) return h('p', {class: 'muted'}, 'No health events in this window.');
  const end = Math.ceil(Date.now() / 1000);
  const bucket = Math.max(60, Math.round((windowSeconds || 3600) / 24));
  const start = end - bucket * 24;
  const states = ['failed', 'predicted_failure', 'degraded', 'ok', 'unknown'];
  const buckets = [];
  for (let t = start; t < end; t += bucket) buckets.push({start: new Date(t * 1000).toISOString(), counts: {}});
  for (const e of events) {
    const t = Date.parse(e.time) / 1000;
    const i = Math.min(buckets.length - 1, Math.max(0, Math.floor((t - start) / bucket)));
    const k = e.state || 'unknown';
    buckets[i].counts[k] = (buckets[i].counts[k] || 0) + 1;
  }
  const last = events.reduce((a, b) => (Date.parse(b.time) > Date.parse(a.time) ? b : a));
  return h('div', null,
    h('p', null, `${events.length} events; latest ${time(last.time)}: `, h('b', null, words(last.failure_mode)), ' → ', h('b', null, words(last.action))),
    h('div', {class: 'timeline'}, barChart({title: 'Health events by state', buckets, keys: states.filter((k) => buckets.some((b) => b.counts[k])), key: 'health-timeline', classOf: (k) => `hs-${k}`})));
}

