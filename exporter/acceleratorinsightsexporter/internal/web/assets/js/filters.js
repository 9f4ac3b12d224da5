// The filter bar: one drop-down per filter key, filled from /api/v1/filters.
// The filter state lives in the URL's query string (so a filtered view is a
// link), and navigation keeps it from page to page.

import {FILTER_KEYS, getJSON} from './api.js';
import {h} from './dom.js';

const LABELS = {
  cluster: 'cluster', node: 'node', team: 'team', namespace: 'namespace', instance_type: 'instance type',
  zone: 'zone', family: 'family', model: 'model', partition_type: 'partition',
};

let cached = null;

// filterBar renders the bar for the current URL; navigate(url) is called with
// the new URL when a filter changes.
export async function filterBar(params, navigate) {
  if (!cached) cached = await getJSON('filters');
  const values = cached;
  const bar = h('form', {class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault()});
  for (const key of FILTER_KEYS) {
    const chosen = params.getAll(key);
    const options = [...new Set([...(values[key] || []), ...chosen])];
    const sel = h('select', {name: key, id: `filter-${key}`, 'aria-label': LABELS[key], onchange: () => {
      const next = new URLSearchParams(location.search);
      next.delete(key);
      if (sel.value !== '') next.append(key, sel.value);
      next.delete('page');
      navigate(`${location.pathname}${next.toString() ? `?${next}` : ''}`);
    }},
    h('option', {value: ''}, `any ${LABELS[key]}`),
    options.map((v) => h('option', {value: v, selected: chosen.length === 1 && chosen[0] === v}, v || '(none)')));
    // Several values for one key come from a hand-written URL; the bar
    // shows them joined and the page applies them all.
    if (chosen.length > 1) sel.prepend(h('option', {value: chosen[0], selected: true}, chosen.join(' or ')));
    bar.append(h('label', {class: chosen.length ? 'active' : null}, h('span', null, LABELS[key]), sel));
  }
  const any = FILTER_KEYS.some((k) => params.has(k));
  if (any) {
    const clear = new URLSearchParams(location.search);
    FILTER_KEYS.forEach((k) => clear.delete(k));
    clear.delete('page');
    bar.append(h('a', {class: 'clear', href: `${location.pathname.split('/').pop()}${clear.toString() ? `?${clear}` : ''}`, 'data-link': true, id: 'filter-clear'}, 'clear filters'));
  }
  return bar;
}

// forget drops the cached value lists (the fleet changes; a full navigation
// refreshes them).
export function forget() {
  cached = null;
}
