// Pod: the end of the drill-down — the devices a pod holds, its cost and
// waste, its findings and the inference endpoints it serves.

import {getJSON} from '../api.js';
import {deviceHref, h, healthBadge, kv, link, nodeHref, section, table} from '../dom.js';
import {pct, perHour, share, words} from '../format.js';
import {findingsTable} from './common.js';
import {endpointsTable} from './inference.js';

export async function render(ctx) {
  const namespace = ctx.params.get('namespace');
  const name = ctx.params.get('name');
  if (!namespace || !name) throw Object.assign(new Error('the URL needs ?namespace=<ns>&name=<pod>'), {status: 404});
  const p = await getJSON('pod', [['namespace', namespace], ['name', name]]);
  ctx.title = `${p.namespace}/${p.pod}`;
  return h('div', {class: 'page pod'},
    h('h1', null, 'Pod ', h('span', {class: 'mono', dataset: {k: 'pod-name'}}, `${p.namespace}/${p.pod}`)),
    h('dl', {class: 'identity'},
      kv('node', p.node ? link(nodeHref(p.node), p.node) : '—', 'pod-node'),
      kv('team', p.team || '—', 'pod-team'),
      kv('workload', p.workload ? `${p.workload} (${words(p.workload_type)})` : '—'),
      kv('cost', perHour(p.cost_per_hour), 'pod-cost'),
      kv('waste', perHour(p.waste_per_hour), 'pod-waste')),
    section('Devices held', table([
      {label: 'device', cell: (d) => link(deviceHref(d.id, d.node), d.id)},
      {label: 'node', cell: (d) => (d.node ? link(nodeHref(d.node), d.node) : '—')},
      {label: 'model', cell: (d) => d.model || '—'},
      {label: 'partition', cell: (d) => words(d.partition_type)},
      {label: 'share', class: 'num', cell: (d) => share(d.share)},
      {label: 'utilization', class: 'num', cell: (d) => pct(d.utilization)},
      {label: 'health', cell: (d) => healthBadge(d.health)},
    ], p.devices || [], {rowData: (d) => ({id: d.id})})),
    p.inference && p.inference.length ? section('Inference endpoints', endpointsTable(p.inference)) : null,
    section('Findings', findingsTable(p.findings || [], {onChange: ctx.refresh})));
}
