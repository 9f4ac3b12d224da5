// An inference endpoint's life on Kubernetes (GET /api/v1/lifecycle, from
// the accelerator_k8s receiver and the latency diagnosis): cold-start
// anatomy, scaling events, zones, unschedulable pods and latency
// regressions. The Inference and Reliability pages each show their part.

import {meter} from '../chart.js';
import {badge, h, link, nodeHref, podHref, section, table} from '../dom.js';
import {latency, num, rate, time, words} from '../format.js';

// The phases that add up to a cold start (total is their sum, shown apart).
const PHASES = ['scheduling', 'image_pull', 'container_start', 'readiness', 'first_request'];

const wl = (x) => h('span', null, h('b', null, `${x.namespace}/${x.workload}`), x.model ? h('div', {class: 'muted'}, x.model) : null);
const secs = (v) => (v === null || v === undefined ? '—' : latency(v));

function phaseOf(row, name) {
  return (row.phases || []).find((p) => p.phase === name);
}

function anatomy(row) {
  const parts = PHASES.map((p, i) => [phaseOf(row, p)?.mean_seconds || 0, `ph ph${i}`]);
  const total = parts.reduce((a, [v]) => a + v, 0);
  return meter(parts, total, PHASES.map((p) => `${words(p)} ${secs(phaseOf(row, p)?.mean_seconds)}`).join(', '));
}

export function coldStartsSection(r) {
  const rows = r.cold_starts.by_workload;
  return section('Cold starts',
    h('p', {class: 'muted'}, 'Mean seconds per phase over every cold start the accelerator_k8s receiver measured, from pod creation to Ready and the first request served.'),
    h('ul', {class: 'legend'}, PHASES.map((p, i) => h('li', null, h('span', {class: `swatch ph${i}`}), words(p)))),
    table([
      {label: 'workload', cell: wl},
      {label: 'cold starts', class: 'num', cell: (x) => String(x.cold_starts)},
      {label: 'anatomy', cell: anatomy},
      ...PHASES.map((p) => ({label: words(p), class: 'num', cell: (x) => h('span', {dataset: {k: `phase-${p}`}}, secs(phaseOf(x, p)?.mean_seconds))})),
      {label: 'total (mean · max)', class: 'num', cell: (x) => h('span', {dataset: {k: 'phase-total'}}, `${secs(phaseOf(x, 'total')?.mean_seconds)} · ${secs(phaseOf(x, 'total')?.max_seconds)}`)},
    ], rows, {empty: 'no cold starts measured (the accelerator_k8s receiver reports them)', class: 'data cold-starts', rowData: (x) => ({workload: `${x.namespace}/${x.workload}`})}),
    r.cold_starts.recent.length ? h('details', null, h('summary', null, `the last ${r.cold_starts.recent.length} cold starts`), table([
      {label: 'ready at', cell: (c) => time(c.time)},
      {label: 'pod', cell: (c) => link(podHref(c.namespace, c.pod), `${c.namespace}/${c.pod}`)},
      {label: 'node', cell: (c) => (c.node ? link(nodeHref(c.node), c.node) : '—')},
      ...PHASES.concat(['total']).map((p) => ({label: words(p), class: 'num', cell: (c) => secs(c.phases[p])})),
    ], r.cold_starts.recent, {class: 'data cold-start-records'})) : null);
}

export function zonesSection(r) {
  return section('Zones',
    h('p', {class: 'muted'}, 'Ready replicas per availability zone (accelerator_k8s) and request rate of the endpoints by the zone of their node.'),
    table([
      {label: 'workload', cell: wl},
      {label: 'zones', cell: (x) => h('div', {class: 'zones'}, x.zones.map((z) => h('div', {class: 'zone', dataset: {zone: z.zone}},
        h('b', null, z.zone), ` ${z.replicas ?? '—'} replicas · ${rate(z.request_rate, ' req/s')}`)))},
      {label: 'balance', cell: (x) => (x.imbalanced ? badge('unbalanced', 'health-failed') : badge('balanced', 'health-ok'))},
      {label: 'finding', cell: (x) => (x.finding ? h('div', null, h('div', {class: 'muted'}, x.finding.evidence), x.finding.action, h('div', {class: 'muted'}, time(x.finding.last_seen))) : '—')},
    ], r.zones, {empty: 'no replica counts per zone (the accelerator_k8s receiver reports them)', class: 'data zones-table',
      rowData: (x) => ({workload: `${x.namespace}/${x.workload}`, imbalanced: String(x.imbalanced)})}));
}

export function regressionsSection(r) {
  return section('Latency regressions',
    table([
      {label: 'endpoint', cell: (f) => h('span', null, wl(f), f.endpoint ? h('div', {class: 'muted mono'}, f.endpoint) : null)},
      {label: 'pod', cell: (f) => (f.pod ? link(podHref(f.namespace, f.pod), `${f.namespace}/${f.pod}`) : '—')},
      {label: 'cause', cell: (f) => h('b', {dataset: {k: 'regression-cause'}}, words(f.cause))},
      {label: 'evidence', cell: (f) => h('span', {class: 'evidence', dataset: {k: 'regression-evidence'}}, f.evidence || '—')},
      {label: 'action', cell: (f) => f.action || '—'},
      {label: 'seen', cell: (f) => `${time(f.last_seen)} (${f.count}×)`},
    ], r.latency_regressions, {empty: 'no latency regression against the endpoints\' baselines', class: 'data regressions',
      rowData: (f) => ({cause: f.cause})}));
}

export function scalingSection(r) {
  return section('Scaling events',
    table([
      {label: 'time', cell: (x) => time(x.time)},
      {label: 'workload', cell: wl},
      {label: 'replicas', class: 'num', cell: (x) => h('span', {dataset: {k: 'scaling-replicas'}}, `${x.from} → ${x.to}`)},
      {label: 'direction', cell: (x) => words(x.direction)},
      {label: 'outcome', cell: (x) => words(x.outcome)},
      {label: 'decision to ready', class: 'num', cell: (x) => secs(x.decision_to_ready_seconds)},
    ], r.scaling, {empty: 'no scaling events (the accelerator_k8s receiver reports them)', class: 'data scaling',
      rowData: (x) => ({workload: `${x.namespace}/${x.workload}`})}));
}

export function unschedulableSection(r) {
  const u = r.unschedulable;
  return section('Unschedulable accelerator pods',
    h('p', null, h('b', {dataset: {k: 'unschedulable-pods'}}, String(u.pods)), ' pods cannot be scheduled for want of accelerators now.'),
    table([
      {label: 'resource', cell: (x) => h('span', {class: 'mono'}, x.resource)},
      {label: 'instance type', cell: (x) => x.instance_type},
      {label: 'zone', cell: (x) => x.zone},
      {label: 'source', cell: (x) => x.source},
      {label: 'pods', class: 'num', cell: (x) => num(x.pods, 0)},
    ], u.series, {empty: 'every accelerator pod is scheduled', class: 'data unschedulable',
      rowData: (x) => ({resource: x.resource, zone: x.zone})}),
    u.events.length ? h('details', null, h('summary', null, `the last ${u.events.length} scheduling failures`), table([
      {label: 'time', cell: (e) => time(e.time)},
      {label: 'pod', cell: (e) => `${e.namespace}/${e.pod}`},
      {label: 'reason', cell: (e) => e.reason},
      {label: 'message', cell: (e) => e.message},
    ], u.events, {class: 'data unschedulable-events'})) : null);
}
