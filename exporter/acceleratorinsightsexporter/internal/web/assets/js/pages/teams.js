// Teams: per team, namespace and workload — devices held (by share),
// utilization, cost and waste by reason.

import {filterParams, getJSON} from '../api.js';
import {h, link, podHref, qs} from '../dom.js';
import {moneyRound, pct, perHour, share, words} from '../format.js';

const reasons = (list) => (list || []).map((r) => `${words(r.reason)} ${perHour(r.per_hour)}`).join(', ') || '—';

export async function render({params}) {
  const r = await getJSON('teams', filterParams(params));
  const head = h('thead', null, h('tr', null, ['team / namespace / workload', 'devices held', 'utilization', 'cost', 'a month', 'waste', 'waste by reason', 'pods']
    .map((l, i) => h('th', {class: i >= 1 && i <= 5 ? 'num' : null}, l))));
  const body = h('tbody');
  for (const t of r.teams) {
    const teamName = t.team || '(no team)';
    body.append(row('team', [link(qs('fleet', {team: t.team}), teamName)], t, null, {team: t.team}));
    for (const ns of t.namespaces || []) {
      body.append(row('namespace', [h('span', {class: 'indent1'}, ns.namespace)], ns, null, {team: t.team, namespace: ns.namespace}));
      for (const w of ns.workloads || []) {
        body.append(row('workload', [h('span', {class: 'indent2'}, `${w.workload || '—'} (${words(w.workload_type)})`)], w,
          (w.pods || []).map((p, i) => [i ? ', ' : '', link(podHref(ns.namespace, p), p)]), {team: t.team, namespace: ns.namespace, workload: w.workload || ''}));
      }
    }
  }
  return h('div', {class: 'page teams'},
    h('h1', null, 'Teams'),
    h('p', {class: 'muted'}, 'Devices held are device-equivalents (a half-held GPU counts 0.5). Unallocated capacity is not a team: see Capacity.'),
    h('section', {class: 'panel'}, h('table', {class: 'data teams'}, head, r.teams.length ? body : h('tbody', null, h('tr', null, h('td', {colspan: 8, class: 'muted'}, 'no teams hold devices'))))));
}

function row(level, name, x, pods, data) {
  const tr = h('tr', {class: `level-${level}`},
    h('td', null, name),
    h('td', {class: 'num'}, share(x.devices_held)),
    h('td', {class: 'num'}, pct(x.utilization)),
    h('td', {class: 'num', dataset: {k: 'cost-per-hour'}}, perHour(x.cost_per_hour)),
    h('td', {class: 'num'}, moneyRound(x.cost_per_month)),
    h('td', {class: 'num'}, perHour(x.waste_per_hour)),
    h('td', null, reasons(x.waste_by_reason)),
    h('td', null, pods || ''));
  Object.assign(tr.dataset, data);
  return tr;
}
