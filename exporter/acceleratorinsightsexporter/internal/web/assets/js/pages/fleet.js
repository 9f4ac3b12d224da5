// Fleet: summary cards and the device grid, grouped by node and paged by
// node (the API pages the grid, so a fleet of 10,000 devices draws one page
// of tiles at a time).

import {filterParams, getJSON} from '../api.js';
import {card, h, link, nodeHref, qs, section} from '../dom.js';
import {money, moneyRound, num, perHour, share, words} from '../format.js';
import {tile} from './common.js';

const PAGE_SIZE = 50;

export async function render({params}) {
  const filters = filterParams(params);
  const page = Math.max(1, Number(params.get('page')) || 1);
  const size = Math.min(500, Math.max(1, Number(params.get('page_size')) || PAGE_SIZE));
  const colour = params.get('colour') === 'health' ? 'health' : 'utilization';
  const [fleet, grid] = await Promise.all([
    getJSON('fleet', filters),
    getJSON('devices', [...filters, ['page', String(page)], ['page_size', String(size)]]),
  ]);
  return h('div', {class: 'page fleet'},
    h('h1', null, 'Fleet'),
    summary(fleet, params),
    section('Devices by node', gridControls(params, colour, grid), legend(colour), nodes(grid, colour), pager(params, grid)));
}

function summary(f, params) {
  const d = f.devices;
  const models = d.by_family.flatMap((fam) => fam.models.map((m) => h('div', null, `${m.model}: `, h('b', null, m.devices))));
  const health = f.health;
  const alloc = f.allocation;
  const q = new URLSearchParams(params);
  q.delete('page');
  q.delete('colour');
  return h('div', {class: 'cards'},
    card('Devices', String(d.total), 'devices-total',
      `${d.partitions} partitions`,
      ...d.by_family.map((fam) => `${words(fam.family)}: ${fam.devices}`),
      h('details', null, h('summary', null, 'models'), models)),
    card('Health', h('span', null, h('span', {class: 'health-text-ok', dataset: {k: 'health-ok'}}, health.ok), ' ok'), 'health',
      h('span', {class: 'health-text-degraded'}, h('b', {dataset: {k: 'health-degraded'}}, health.degraded), ' degraded'),
      h('span', {class: 'health-text-failed'}, h('b', {dataset: {k: 'health-failed'}}, health.failed), ' failed'),
      `${health.predicted_failure} predicted failure · ${health.unknown} unknown`,
      link(qs('reliability', q), 'reliability →')),
    card('Allocation', h('span', null, h('span', {dataset: {k: 'alloc-in-use'}}, share(alloc.in_use)), ' in use'), 'allocation',
      h('span', null, h('b', {dataset: {k: 'alloc-idle'}}, share(alloc.idle_allocated)), ' idle but allocated'),
      h('span', null, h('b', {dataset: {k: 'alloc-unallocated'}}, share(alloc.unallocated)), ' unallocated'),
      `${share(alloc.reserved)} reserved (device-equivalents)`,
      link(qs('capacity', q), 'capacity →')),
    card('Cost', perHour(f.cost.per_hour), 'cost-per-hour', h('span', {dataset: {k: 'cost-per-month'}}, `${moneyRound(f.cost.per_month)} a month`), link(qs('teams', q), 'teams →')),
    card('Waste', perHour(f.waste.per_hour), 'waste-per-hour', `${moneyRound(f.waste.per_month)} a month`,
      ...f.waste.by_reason.map((r) => h('span', {dataset: {reason: r.reason}}, `${words(r.reason)}: ${perHour(r.per_hour)}`))),
    card('Findings', h('span', null, h('span', {dataset: {k: 'findings-open'}}, f.findings.open), ' open'), 'findings',
      `${f.findings.acknowledged} acknowledged · ${f.findings.dismissed} dismissed`,
      h('span', null, 'saves ', h('b', {dataset: {k: 'findings-saving'}}, money(f.findings.monthly_saving)), ' a month'),
      link(qs('findings', q), 'findings →')));
}

function gridControls(params, colour, grid) {
  const other = colour === 'health' ? 'utilization' : 'health';
  const q = new URLSearchParams(params);
  if (other === 'health') q.set('colour', 'health');
  else q.delete('colour');
  return h('p', {class: 'grid-controls'},
    `${num(grid.total_devices, 0)} devices on ${num(grid.total_nodes, 0)} nodes · coloured by ${colour} · `,
    link(qs('fleet', q), `colour by ${other}`));
}

function legend(colour) {
  const items = colour === 'health'
    ? [['health-ok', 'ok'], ['health-degraded', 'degraded'], ['health-predicted_failure', 'predicted failure'], ['health-failed', 'failed'], ['health-unknown', 'unknown']]
    : [['u-na', 'no data'], ['u0', '< 5%'], ['u1', '5–25%'], ['u2', '25–50%'], ['u3', '50–75%'], ['u4', '≥ 75%']];
  return h('ul', {class: 'tile-legend'},
    items.map(([cls, label]) => h('li', null, h('span', {class: `tile mini ${cls}`}), label)),
    h('li', null, h('span', {class: 'tile mini u-na alloc-unallocated'}), 'unallocated'),
    h('li', null, h('span', {class: 'tile mini u-na alloc-idle_allocated'}), 'idle but allocated'));
}

function nodes(grid, colour) {
  if (grid.nodes.length === 0) return h('p', {class: 'muted'}, 'No devices match these filters.');
  return h('div', {class: 'nodes'}, grid.nodes.map((n) => h('div', {class: 'node', dataset: {node: n.node}},
    h('div', {class: 'node-head'},
      link(nodeHref(n.node), h('b', null, n.node)),
      h('span', {class: 'muted'}, ` ${n.instance_type || '—'} · ${n.zone || '—'} · ${n.devices} devices · ${perHour(n.cost_per_hour)}`)),
    h('div', {class: 'tiles'}, n.tiles.map((t) => tile(t, colour))))));
}

function pager(params, grid) {
  const pages = Math.max(1, Math.ceil(grid.total_nodes / grid.page_size));
  if (pages === 1) return null;
  const to = (p) => {
    const q = new URLSearchParams(params);
    q.set('page', String(p));
    return qs('fleet', q);
  };
  return h('nav', {class: 'pager', 'aria-label': 'grid pages'},
    grid.page > 1 ? link(to(grid.page - 1), '← previous') : h('span', {class: 'muted'}, '← previous'),
    h('span', {dataset: {k: 'page'}}, ` page ${grid.page} of ${pages} `),
    grid.page < pages ? link(to(grid.page + 1), 'next →') : h('span', {class: 'muted'}, 'next →'));
}
