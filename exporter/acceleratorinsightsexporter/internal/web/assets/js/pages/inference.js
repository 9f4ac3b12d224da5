// Inference: one row per endpoint and model — request rate, latency
// percentiles, queue, caches, tokens and the devices it runs on.

import {filterParams, getJSON} from '../api.js';
import {deviceHref, h, link, podHref, section, table} from '../dom.js';
import {latency, num, pct, rate} from '../format.js';
import {coldStartsSection, regressionsSection, zonesSection} from './lifecycle.js';

const pcts = (x) => (x ? h('div', {class: 'pcts'}, ['p50', 'p90', 'p99'].map((k) => h('div', null, h('span', {class: 'muted'}, `${k} `), latency(x[k])))) : '—');

// shortDevice is a device's id short enough for a table cell: GPU-1a2b…
// (with its partition), nd3/nc5 for a NeuronCore.
export function shortDevice(id) {
  const m = /^neuron_device_(\d+)(?:\/neuroncore_(\d+))?$/.exec(id);
  if (m) return m[2] === undefined ? `nd${m[1]}` : `nd${m[1]}/nc${m[2]}`;
  const g = /^(GPU-[0-9a-f]{6})[0-9a-f-]*(.*)$/i.exec(id);
  return g ? `${g[1]}…${g[2]}` : id;
}

export function endpointsTable(list) {
  return table([
    {label: 'model and endpoint', cell: (e) => h('div', {class: 'endpoint'}, h('b', null, e.model || '—'), h('div', {class: 'muted'}, `${e.server || ''} ${e.endpoint || ''}`))},
    {label: 'pod', cell: (e) => (e.pod ? link(podHref(e.namespace, e.pod), `${e.namespace}/${e.pod}`) : '—')},
    {label: 'team', cell: (e) => e.team || '—'},
    {label: 'req/s', class: 'num', cell: (e) => rate(e.request_rate, '')},
    {label: 'TTFT', class: 'num', cell: (e) => pcts(e.ttft)},
    {label: 'ITL', class: 'num', cell: (e) => pcts(e.itl)},
    {label: 'end to end', class: 'num', cell: (e) => pcts(e.e2e)},
    {label: 'running / waiting', class: 'num', cell: (e) => `${num(e.requests_running, 0)} / ${num(e.requests_waiting, 0)}`},
    {label: 'KV cache', class: 'num', cell: (e) => pct(e.kv_cache_utilization)},
    {label: 'prefix hits', class: 'num', cell: (e) => pct(e.prefix_cache_hit_ratio)},
    {label: 'preemptions/s', class: 'num', cell: (e) => rate(e.preemptions_per_second, '')},
    {label: 'tokens/s in · out', class: 'num', cell: (e) => (e.tokens_per_second ? `${rate(e.tokens_per_second.input, '')} · ${rate(e.tokens_per_second.output, '')}` : '—')},
    {label: 'devices (utilization)', cell: (e) => h('div', {class: 'device-list'}, (e.devices || []).map((d) => h('div', null, link(deviceHref(d.id, d.node), shortDevice(d.id)), ` ${pct(d.utilization)}`)))},
  ], list, {empty: 'no inference endpoints', class: 'data inference', rowData: (e) => ({endpoint: e.endpoint || '', model: e.model || ''})});
}

export async function render({params}) {
  const [r, life] = await Promise.all([getJSON('inference', filterParams(params)), getJSON('lifecycle', filterParams(params))]);
  return h('div', {class: 'page inference'},
    h('h1', null, 'Inference'),
    h('p', {class: 'muted'}, `${r.endpoints.length} endpoints; rates and percentiles over the last five minutes.`),
    section('Endpoints', endpointsTable(r.endpoints)),
    regressionsSection(life),
    zonesSection(life),
    coldStartsSection(life));
}
