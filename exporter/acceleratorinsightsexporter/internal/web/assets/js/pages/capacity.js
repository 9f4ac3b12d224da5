// Capacity: by accelerator model, instance type and zone — total, allocated,
// in use, unallocated dollars — and MIG capacity no profile can use.

import {filterParams, getJSON} from '../api.js';
import {meter} from '../chart.js';
import {card, h, section, table} from '../dom.js';
import {moneyRound, num, perHour, share} from '../format.js';

function rows(list, label) {
  return table([
    {label, cell: (r) => r.key || '—'},
    {label: 'devices', class: 'num', cell: (r) => num(r.devices, 0)},
    {label: 'allocated', class: 'num', cell: (r) => share(r.allocated)},
    {label: 'in use', class: 'num', cell: (r) => share(r.in_use)},
    {label: 'unallocated', class: 'num', cell: (r) => share(r.unallocated)},
    {label: '', cell: (r) => meter([[r.in_use, 'm-in-use'], [Math.max(0, r.allocated - r.in_use), 'm-idle'], [r.unallocated, 'm-free']], r.devices,
      `${share(r.in_use)} in use, ${share(r.allocated - r.in_use)} idle but allocated, ${share(r.unallocated)} unallocated`)},
    {label: 'unallocated $', class: 'num', cell: (r) => `${perHour(r.unallocated_per_hour)} · ${moneyRound(r.unallocated_per_month)}/mo`},
    {label: 'cost', class: 'num', cell: (r) => perHour(r.cost_per_hour)},
  ], list || [], {class: 'data capacity', rowData: (r) => ({key: r.key || ''})});
}

export async function render({params}) {
  const c = await getJSON('capacity', filterParams(params));
  const mig = c.mig || {};
  return h('div', {class: 'page capacity'},
    h('h1', null, 'Capacity'),
    h('div', {class: 'cards'},
      card('MIG', `${num(mig.devices, 0)} devices`, 'mig-devices', `${num(mig.instances, 0)} instances`),
      card('MIG capacity no profile can use', perHour(mig.fragmentation_per_hour), 'mig-fragmentation', `${moneyRound(mig.fragmentation_per_month)} a month`)),
    h('ul', {class: 'tile-legend'}, h('li', null, h('span', {class: 'swatch m-in-use'}), 'in use'), h('li', null, h('span', {class: 'swatch m-idle'}), 'idle but allocated'), h('li', null, h('span', {class: 'swatch m-free'}), 'unallocated')),
    section('By accelerator model', rows(c.by_model, 'model')),
    section('By instance type', rows(c.by_instance_type, 'instance type')),
    section('By zone', rows(c.by_zone, 'zone')));
}
