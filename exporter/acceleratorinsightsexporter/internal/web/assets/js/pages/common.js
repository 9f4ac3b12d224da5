// Pieces several pages share: a tile of the device grid, holder and finding
// tables, waste-by-reason lists, and the utilization colour scale.

import {disableIfReadOnly, post} from '../api.js';
import {badge, deviceHref, h, healthBadge, link, nodeHref, podHref, table} from '../dom.js';
import {money, moneyRound, pct, perHour, share, time, words} from '../format.js';

// utilClass buckets a utilization for the grid's colour scale.
export function utilClass(u) {
  if (u === null || u === undefined) return 'u-na';
  if (u < 0.05) return 'u0';
  if (u < 0.25) return 'u1';
  if (u < 0.5) return 'u2';
  if (u < 0.75) return 'u3';
  return 'u4';
}

export function tileClass(t, colour) {
  const fill = colour === 'health' ? `health-${t.health || 'unknown'}` : utilClass(t.utilization);
  return `tile ${t.kind} ${fill} alloc-${t.allocation || 'unknown'}`;
}

function tileTitle(t) {
  const who = (t.holders || []).map((x) => `${x.namespace}/${x.pod}`).join(', ');
  return [
    `${t.model || t.family} ${t.profile || ''}`.trim(),
    t.id,
    `health ${t.health}, utilization ${pct(t.utilization)}, ${words(t.allocation)}`,
    `${perHour(t.cost_per_hour)} cost, ${perHour(t.waste_per_hour)} waste`,
    who ? `held by ${who}` : 'not held',
  ].join('\n');
}

// idTail is the last part of a partition's id (a NeuronCore's "nc1").
function idTail(id) {
  const parts = String(id).split(/[/:]/);
  return parts[parts.length - 1].replace('neuroncore_', 'nc').slice(-6);
}

// tile is one device (with its partitions inside) in the grid; it links to
// the device page.
export function tile(t, colour) {
  const a = h('a', {href: deviceHref(t.id, t.node), 'data-link': true, class: tileClass(t, colour), title: tileTitle(t),
    dataset: {id: t.id, health: t.health, allocation: t.allocation}},
  h('span', {class: 'tile-index'}, t.kind === 'partition' ? (t.profile || idTail(t.id)) : (t.index ?? '?')),
  t.open_findings ? h('span', {class: 'tile-flag', title: `${t.open_findings} open findings`}, '!') : null);
  if (!t.partitions || t.partitions.length === 0) return a;
  return h('div', {class: 'tile-group'}, a, h('div', {class: 'tile-parts'}, t.partitions.map((p) => tile(p, colour))));
}

export function holderLink(x) {
  return x.pod ? link(podHref(x.namespace, x.pod), `${x.namespace}/${x.pod}`) : words(x.namespace);
}

export function holdersTable(holders) {
  return table([
    {label: 'pod', cell: holderLink},
    {label: 'container', cell: (x) => x.container || '—'},
    {label: 'team', cell: (x) => x.team || '—'},
    {label: 'workload', cell: (x) => (x.workload ? `${x.workload} (${words(x.workload_type)})` : '—')},
    {label: 'share', class: 'num', cell: (x) => share(x.share)},
    {label: 'partition', cell: (x) => (x.partition_id ? link(deviceHref(x.partition_id), x.partition_id) : '—')},
    {label: 'utilization', class: 'num', cell: (x) => pct(x.utilization)},
  ], holders || [], {empty: 'not held by any pod', class: 'data holders'});
}

export function wasteList(byReason) {
  if (!byReason || byReason.length === 0) return h('p', {class: 'muted'}, 'no waste');
  return h('ul', {class: 'reasons'}, byReason.map((r) =>
    h('li', {dataset: {reason: r.reason}}, h('span', null, words(r.reason)), ' ', h('b', null, perHour(r.per_hour)), ` · ${moneyRound(r.per_month)}/mo`)));
}

// findingReason says what was found, not what to do about it (the action
// column says that; the API's summary joins both, so it is not shown):
// the failure mode of unhealthy capacity, the profile a workload fits, the
// cause of a latency regression.
export function findingReason(f) {
  switch (f.kind) {
    case 'unhealthy_capacity':
      return `unhealthy capacity: ${f.failure_mode ? words(f.failure_mode) : 'device not ok'}, paid for but unusable`;
    case 'rightsizing':
      return f.target ? `oversized: the workload fits ${f.target}` : 'oversized for its workload';
    case 'inference_under_capacity':
      return 'allocated capacity barely used';
    case 'training_efficiency':
      return 'training uses the device below its capacity';
    case 'zone_imbalance':
      return 'replicas unbalanced across zones';
    case 'latency_regression': {
      // The cause is an attribute the findings list does not carry; the
      // diagnosis also writes it first in the evidence (cause=…).
      const cause = f.cause || (/(?:^|\s)cause=(\S+)/.exec(f.evidence || '') || [])[1];
      return cause ? `latency regression, likely cause: ${words(cause)}` : 'latency regression against its baseline';
    }
    default:
      return words(f.kind);
  }
}

const FINDING_ACTIONS = {open: ['acknowledge', 'dismiss'], acknowledged: ['dismiss', 'reopen'], dismissed: ['reopen']};

// findingsTable lists findings with their state buttons; a button POSTs the
// change (with the CSRF header) and redraws the row from the answer.
export function findingsTable(list, {onChange} = {}) {
  const columns = [
    {label: 'kind', cell: (f) => badge(words(f.kind), `kind-${f.kind}`)},
    {label: 'finding', cell: (f) => h('div', null, h('div', {class: 'summary', dataset: {k: 'finding-reason'}}, findingReason(f)),
      f.evidence ? h('div', {class: 'evidence muted', dataset: {k: 'finding-evidence'}}, f.evidence) : null)},
    {label: 'action', cell: (f) => h('span', {dataset: {k: 'finding-action'}}, f.action || words(f.health_action))},
    {label: '$/month', class: 'num', cell: (f) => h('span', {dataset: {k: 'finding-saving'}}, money(f.monthly_saving))},
    {label: 'device', cell: (f) => (f.device_id ? link(deviceHref(f.partition_id || f.device_id, f.node), f.partition_id || f.device_id) : '—')},
    {label: 'node', cell: (f) => (f.node ? link(nodeHref(f.node), f.node) : '—')},
    {label: 'workload', cell: (f) => (f.pod ? link(podHref(f.namespace, f.pod), `${f.namespace}/${f.pod}`) : (f.workload || '—'))},
    {label: 'team', cell: (f) => f.team || '—'},
    {label: 'seen', cell: (f) => h('span', {title: `first ${time(f.first_seen)}`}, `${time(f.last_seen)} (${f.count}×)`)},
    {label: 'state', cell: (f) => stateCell(f, onChange)},
  ];
  return table(columns, list, {empty: 'no findings', class: 'data findings', rowData: (f) => ({finding: f.id, state: f.state, kind: f.kind})});
}

function stateCell(f, onChange) {
  const cell = h('div', {class: 'state'}, badge(words(f.state), `state-${f.state}`));
  for (const action of FINDING_ACTIONS[f.state] || []) {
    const btn = h('button', {type: 'button', class: `act act-${action}`, dataset: {action}, onclick: async () => {
      btn.disabled = true;
      try {
        const updated = await post(`findings/${encodeURIComponent(f.id)}/${action}`);
        if (onChange) onChange(updated);
      } catch (err) {
        console.error(err);
        cell.append(h('span', {class: 'error-text', role: 'alert'}, err.message));
        btn.disabled = false;
      }
    }}, action);
    cell.append(' ', disableIfReadOnly(btn));
  }
  return cell;
}

export function eventsTable(events) {
  return table([
    {label: 'time', cell: (e) => time(e.time)},
    {label: 'event', cell: (e) => (e.name || '').replace('accelerator.health.', '')},
    {label: 'device', cell: (e) => (e.device_id ? link(deviceHref(e.device_id, e.node), e.device_id) : '—')},
    {label: 'state', cell: (e) => healthBadge(e.state)},
    {label: 'failure mode', cell: (e) => words(e.failure_mode)},
    {label: 'action', cell: (e) => h('span', {dataset: {k: 'event-action'}}, words(e.action))},
    {label: 'XID', class: 'num', cell: (e) => e.xid ?? '—'},
    {label: 'description', cell: (e) => e.description || '—'},
  ], events || [], {empty: 'no health events in this window', class: 'data events'});
}

export function windowPicker(params, navigate, choices = ['15m', '1h', '6h', '24h']) {
  const current = params.get('window') || '1h';
  return h('div', {class: 'window-picker'}, 'window ', choices.map((w) => {
    const next = new URLSearchParams(params);
    next.set('window', w);
    return h('a', {href: `${location.pathname.split('/').pop()}?${next}`, 'data-link': true, class: w === current ? 'current' : null}, w);
  }));
}
