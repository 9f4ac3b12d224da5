// Remediation: the plans of the accelerator_remediation exporter the
// console is configured with (remediation key): each plan's subject,
// failure mode, evidence and ordered steps with their reasons, and an
// Approve button on the plans that wait for approval. An approval is handed
// to the remediation engine, which takes it on its next tick with the same
// audit record and guard rails as a node annotation.

import {disableIfReadOnly, getJSON, post} from '../api.js';
import {badge, deviceHref, h, link, nodeHref, podHref, section, table} from '../dom.js';
import {time, words} from '../format.js';

const STATES = [['', 'all'], ['awaiting_approval', 'awaiting approval'], ['running', 'running'], ['waiting', 'waiting'],
  ['recommended', 'recommended'], ['succeeded', 'succeeded'], ['failed', 'failed'], ['expired', 'expired']];

export async function render(ctx) {
  const {params} = ctx;
  const q = [];
  for (const k of ['state', 'node', 'device']) {
    if (params.get(k)) q.push([k, params.get(k)]);
  }
  const r = await getJSON('plans', q);
  const state = params.get('state') || '';
  const tab = (value, label) => {
    const next = new URLSearchParams(params);
    if (value) next.set('state', value);
    else next.delete('state');
    const href = next.toString() ? `plans?${next}` : 'plans';
    return link(href, h('span', {class: value === state ? 'tab current' : 'tab'}, label));
  };
  return h('div', {class: 'page plans'},
    h('h1', null, 'Remediation plans'),
    r.running ? h('div', {class: 'cards'},
      h('div', {class: 'card'}, h('div', {class: 'card-title'}, 'Plans shown'), h('div', {class: 'card-value', dataset: {k: 'plans-total'}}, String(r.total))),
      h('div', {class: 'card'}, h('div', {class: 'card-title'}, 'Awaiting approval'), h('div', {class: 'card-value', dataset: {k: 'plans-awaiting'}}, String(r.awaiting_approval)),
        h('div', {class: 'card-line muted'}, `from ${r.remediation}`))) : null,
    r.running ? h('nav', {class: 'tabs'}, 'state: ', STATES.map(([v, l]) => tab(v, l))) : null,
    plansSection(r, {onChange: ctx.refresh}));
}

// plansSection is the list of plans, or why there is none; the device page
// shows it for one device.
export function plansSection(r, {onChange, title = 'Plans'} = {}) {
  if (!r.running) {
    return section(title, h('p', {class: 'muted', dataset: {k: 'plans-problem'}}, r.remediation
      ? `The remediation exporter ${r.remediation} is not available: ${r.problem}`
      : 'No remediation exporter is configured for this console, so there are no plans to show. Set remediation: accelerator_remediation on accelerator_insights (docs/insights.md).'));
  }
  if (r.plans.length === 0) return section(title, h('p', {class: 'muted', dataset: {k: 'plans-none'}}, 'No remediation plans.'));
  return section(title, h('div', {class: 'plan-list'}, r.plans.map((p) => planCard(p, onChange))));
}

function planCard(p, onChange) {
  const s = p.subject || {};
  const ev = p.evidence || {};
  return h('article', {class: `plan state-${p.state}`, dataset: {plan: p.id, state: p.state}},
    h('header', {class: 'plan-head'},
      h('h3', null, words(p.action), h('span', {class: 'muted mono'}, ` ${p.id}`)),
      badge(words(p.state), `plan-state plan-${p.state}`),
      p.awaiting_approval ? approveButton(p, onChange) : null),
    h('dl', {class: 'identity'},
      h('dt', null, 'node'), h('dd', null, s.node ? link(nodeHref(s.node), s.node) : '—'),
      h('dt', null, 'device'), h('dd', null, s.device_id ? link(deviceHref(s.device_id, s.node), s.device_id) : '—'),
      h('dt', null, 'failure mode'), h('dd', {dataset: {k: 'plan-failure-mode'}}, words(p.failure_mode)),
      h('dt', null, 'scope'), h('dd', null, words(p.scope)),
      h('dt', null, 'holders'), h('dd', null, (s.pods || []).length ? s.pods.map((x, i) => [i ? ', ' : '', link(podHref(x.namespace, x.name), `${x.namespace}/${x.name}`)]) : 'none'),
      h('dt', null, 'created'), h('dd', null, time(p.created)),
      h('dt', null, p.expires ? 'expires' : 'updated'), h('dd', null, time(p.expires || p.updated)),
      h('dt', null, 'approval'), h('dd', {dataset: {k: 'plan-approval'}}, p.approval ? `${p.approval.by} via ${p.approval.via}, ${time(p.approval.at)}` : '—')),
    h('p', {class: 'plan-evidence'}, h('b', null, 'Evidence: '), h('span', {dataset: {k: 'plan-evidence'}},
      [ev.xid ? `XID ${ev.xid}: ` : '', ev.description || ev.event || '—', ev.observed ? ` (${time(ev.observed)})` : ''].join(''))),
    p.reason ? h('p', {class: 'muted'}, p.reason) : null,
    table([
      {label: '#', class: 'num', cell: (st) => String(p.steps.indexOf(st) + 1)},
      {label: 'step', cell: (st) => h('b', null, words(st.kind))},
      {label: 'why', cell: (st) => st.reason || '—'},
      {label: 'mode', cell: (st) => words(st.mode)},
      {label: 'state', cell: (st) => badge(words(st.state), `step-${st.state}`)},
      {label: 'outcome', cell: (st) => st.error ? h('span', {class: 'health-text-failed'}, st.error) : (st.outcome || '—')},
    ], p.steps || [], {empty: 'no steps', class: 'data steps', rowData: (st) => ({step: st.kind, state: st.state})}),
    p.awaiting_approval && p.approval_hint ? h('p', {class: 'muted'}, 'Or approve from a shell: ', h('code', null, p.approval_hint)) : null);
}

function approveButton(p, onChange) {
  const holder = h('span', {class: 'state'});
  const btn = h('button', {type: 'button', class: 'act act-approve', dataset: {action: 'approve'}, onclick: async () => {
    btn.disabled = true;
    try {
      const out = await post(`plans/${encodeURIComponent(p.id)}/approve`);
      holder.append(h('span', {class: 'muted', dataset: {k: 'plan-approved'}}, ` approved by ${out.approved_by}; the engine takes it on its next tick`));
      if (onChange) setTimeout(onChange, 1500);
    } catch (err) {
      console.error(err);
      holder.append(h('span', {class: 'error-text', role: 'alert'}, err.message));
      btn.disabled = false;
    }
  }}, 'approve');
  holder.prepend(disableIfReadOnly(btn));
  return holder;
}
