// Waste & findings: every finding with its reason, responsible workload and
// node, evidence, dollars a month and action; acknowledge, dismiss, reopen.

import {filterParams, getJSON} from '../api.js';
import {h, link, qs, section} from '../dom.js';
import {money, words} from '../format.js';
import {findingsTable} from './common.js';

const STATES = [['', 'open and acknowledged'], ['open', 'open'], ['acknowledged', 'acknowledged'], ['dismissed', 'dismissed'], ['all', 'all']];
const KINDS = ['rightsizing', 'training_efficiency', 'inference_under_capacity', 'unhealthy_capacity', 'zone_imbalance', 'latency_regression'];

export async function render(ctx) {
  const {params} = ctx;
  const q = filterParams(params);
  const state = params.get('state') || '';
  const kind = params.get('kind') || '';
  if (state) q.push(['state', state]);
  if (kind) q.push(['kind', kind]);
  const [r, fleet] = await Promise.all([getJSON('findings', q), getJSON('fleet', filterParams(params))]);
  const tab = (key, value, label, current) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    return link(qs('findings', next), h('span', {class: value === current ? 'tab current' : 'tab'}, label));
  };
  return h('div', {class: 'page findings'},
    h('h1', null, 'Waste & findings'),
    h('div', {class: 'cards'},
      h('div', {class: 'card'}, h('div', {class: 'card-title'}, 'Waste now'), h('div', {class: 'card-value'}, `${money(fleet.waste.per_hour)}/h`),
        ...fleet.waste.by_reason.map((x) => h('div', {class: 'card-line'}, `${words(x.reason)}: ${money(x.per_hour)}/h · ${money(x.per_month)}/mo`))),
      h('div', {class: 'card'}, h('div', {class: 'card-title'}, 'Findings shown'), h('div', {class: 'card-value', dataset: {k: 'findings-total'}}, String(r.total)),
        h('div', {class: 'card-line'}, 'would save ', h('b', {dataset: {k: 'findings-saving'}}, money(r.monthly_saving)), ' a month'))),
    h('nav', {class: 'tabs'}, 'state: ', STATES.map(([v, l]) => tab('state', v, l, state))),
    h('nav', {class: 'tabs'}, 'kind: ', tab('kind', '', 'all', kind), KINDS.map((k) => tab('kind', k, words(k), kind))),
    section('Findings', findingsTable(r.findings, {onChange: ctx.refresh})));
}
