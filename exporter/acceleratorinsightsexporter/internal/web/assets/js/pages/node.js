// Node: one node's devices and partitions, their holders and costs; the step
// between the fleet grid and a device.

import {getJSON} from '../api.js';
import {deviceHref, h, healthBadge, kv, link, section, table} from '../dom.js';
import {pct, perHour, share, words} from '../format.js';
import {holderLink, tile} from './common.js';

export async function render(ctx) {
  const name = ctx.params.get('name');
  if (!name) throw Object.assign(new Error('no node named: the URL needs ?name=<node>'), {status: 404});
  const grid = await getJSON('devices', [['node', name], ['page_size', '500']]);
  const n = grid.nodes.find((x) => x.node === name);
  if (!n) throw Object.assign(new Error(`node ${name} is not in the fleet (or has no devices)`), {status: 404});
  ctx.title = name;
  const rows = n.tiles.flatMap((t) => [t, ...(t.partitions || [])]);
  return h('div', {class: 'page node'},
    h('h1', null, 'Node ', h('span', {dataset: {k: 'node-name'}}, n.node)),
    h('dl', {class: 'identity'},
      kv('cluster', n.cluster || '—'), kv('instance type', n.instance_type || '—'), kv('zone', n.zone || '—'),
      kv('devices', String(n.devices), 'node-devices'), kv('cost', perHour(n.cost_per_hour), 'node-cost')),
    section('Devices', h('div', {class: 'tiles'}, n.tiles.map((t) => tile(t, 'utilization'))),
      table([
        {label: '#', class: 'num', cell: (t) => (t.kind === 'partition' ? '' : t.index ?? '—')},
        {label: 'device', cell: (t) => link(deviceHref(t.id, t.node), t.kind === 'partition' ? `↳ ${t.id}` : t.id)},
        {label: 'model', cell: (t) => (t.kind === 'partition' ? t.profile || '—' : t.model || words(t.family))},
        {label: 'partition', cell: (t) => words(t.partition_type)},
        {label: 'health', cell: (t) => healthBadge(t.health)},
        {label: 'utilization', class: 'num', cell: (t) => pct(t.utilization)},
        {label: 'memory', class: 'num', cell: (t) => pct(t.memory_utilization)},
        {label: 'allocation', cell: (t) => `${words(t.allocation)} (${share(t.allocated_share)})`},
        {label: 'holders', cell: (t) => ((t.holders || []).length ? h('span', null, t.holders.map((x, i) => [i ? ', ' : '', holderLink(x)])) : '—')},
        {label: 'cost', class: 'num', cell: (t) => perHour(t.cost_per_hour)},
        {label: 'waste', class: 'num', cell: (t) => perHour(t.waste_per_hour)},
        {label: 'findings', class: 'num', cell: (t) => t.open_findings || 0},
      ], rows, {rowData: (t) => ({id: t.id})})));
}
