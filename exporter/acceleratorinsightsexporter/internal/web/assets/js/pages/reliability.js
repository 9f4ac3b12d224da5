// Reliability: health events over time by failure mode, devices not ok, MPS
// daemon state, and each device's XID history (events, not a last value).

import {filterParams, getJSON} from '../api.js';
import {barChart} from '../chart.js';
import {deviceHref, h, healthBadge, link, nodeHref, section, table} from '../dom.js';
import {pct, time, words} from '../format.js';
import {eventsTable, windowPicker} from './common.js';
import {coldStartsSection, scalingSection, unschedulableSection, zonesSection} from './lifecycle.js';

export async function render(ctx) {
  const q = filterParams(ctx.params);
  q.push(['window', ctx.params.get('window') || '1h']);
  const [r, life] = await Promise.all([getJSON('reliability', q), getJSON('lifecycle', filterParams(ctx.params))]);
  const modes = [...new Set(r.events_over_time.flatMap((b) => Object.keys(b.counts)))].sort();
  return h('div', {class: 'page reliability'},
    h('h1', null, 'Reliability'),
    windowPicker(ctx.params, ctx.navigate, ['1h', '6h', '24h']),
    section('Health events by failure mode', barChart({title: `events per ${Math.round(r.bucket_seconds / 60)} minutes`, buckets: r.events_over_time, keys: modes, key: 'events-over-time', wide: true})),
    section('Devices not ok', table([
      {label: 'device', cell: (d) => link(deviceHref(d.id, d.node), d.id)},
      {label: 'node', cell: (d) => (d.node ? link(nodeHref(d.node), d.node) : '—')},
      {label: 'model', cell: (d) => d.model || '—'},
      {label: 'health', cell: (d) => healthBadge(d.health)},
      {label: 'failure mode', cell: (d) => words(d.failure_mode)},
      {label: 'recommended action', cell: (d) => h('span', null, h('b', {dataset: {k: 'action'}}, words(d.action)), d.action_description ? ` — ${d.action_description}` : '')},
      {label: 'since', cell: (d) => time(d.since)},
    ], r.devices_not_ok, {empty: 'every device is ok', class: 'data not-ok', rowData: (d) => ({id: d.id, health: d.health})})),
    section('MPS daemons', table([
      {label: 'node', cell: (m) => link(nodeHref(m.node), m.node)},
      {label: 'daemon', cell: (m) => (m.up ? 'up' : h('b', {class: 'health-text-failed'}, 'down'))},
      {label: 'servers', class: 'num', cell: (m) => m.servers ?? '—'},
      {label: 'active thread percentage', class: 'num', cell: (m) => pct(m.active_thread_percentage)},
    ], r.mps || [], {empty: 'no MPS daemons reported'})),
    unschedulableSection(life),
    scalingSection(life),
    zonesSection(life),
    coldStartsSection(life),
    section('XID history', (r.xid_history || []).length === 0 ? h('p', {class: 'muted'}, 'No XID events in this window.')
      : h('div', null, r.xid_history.map((x) => h('div', {class: 'xid-device', dataset: {id: x.device_id}},
        h('h3', null, link(deviceHref(x.device_id, x.node), x.device_id), h('span', {class: 'muted'}, ` on ${x.node} · ${x.events.length} events`)),
        eventsTable(x.events))))));
}
