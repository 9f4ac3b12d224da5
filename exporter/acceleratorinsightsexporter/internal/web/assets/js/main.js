// The console's shell: client-side routing over real URLs (History API),
// the navigation bar, the filter bar and the live refresh. Each page is a
// module exporting render(ctx) → Promise<Node>.

import {FILTER_KEYS} from './api.js';
import {h} from './dom.js';
import {filterBar, forget} from './filters.js';
import * as capacity from './pages/capacity.js';
import * as device from './pages/device.js';
import * as findings from './pages/findings.js';
import * as fleet from './pages/fleet.js';
import * as inference from './pages/inference.js';
import * as node from './pages/node.js';
import * as plans from './pages/plans.js';
import * as pod from './pages/pod.js';
import * as reliability from './pages/reliability.js';
import * as teams from './pages/teams.js';

// Routes are one path segment; `filters` says the page takes the filter bar.
const ROUTES = {
  fleet: {page: fleet, title: 'Fleet', nav: true, filters: true},
  teams: {page: teams, title: 'Teams', nav: true, filters: true},
  findings: {page: findings, title: 'Waste & findings', nav: true, filters: true},
  inference: {page: inference, title: 'Inference', nav: true, filters: true},
  capacity: {page: capacity, title: 'Capacity', nav: true, filters: true},
  reliability: {page: reliability, title: 'Reliability', nav: true, filters: true},
  plans: {page: plans, title: 'Remediation', nav: true},
  node: {page: node, title: 'Node'},
  device: {page: device, title: 'Device'},
  pod: {page: pod, title: 'Pod'},
};

const REFRESH_MS = 15000;
const content = document.getElementById('content');
const filters = document.getElementById('filters');
const nav = document.getElementById('nav');
const live = document.getElementById('live');
let generation = 0;
let timer = null;

function routeName() {
  const seg = location.pathname.split('/').pop();
  return seg === '' || seg === 'index.html' ? 'fleet' : seg;
}

// navigate follows an in-console URL without reloading.
export function navigate(url, {replace = false} = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  show({navigation: true});
}

function renderNav(name) {
  // Nav links carry the filter state, so switching pages keeps the view.
  const keep = new URLSearchParams();
  for (const [k, v] of new URLSearchParams(location.search)) {
    if (FILTER_KEYS.includes(k)) keep.append(k, v);
  }
  const q = keep.toString();
  nav.replaceChildren(...Object.entries(ROUTES).filter(([, r]) => r.nav).map(([key, r]) =>
    h('a', {href: q ? `${key}?${q}` : key, 'data-link': true, class: key === name ? 'current' : null, 'aria-current': key === name ? 'page' : null}, r.title)));
}

// show renders the current URL's page. A refresh re-renders the content in
// place; a navigation also rebuilds the filter bar and scrolls to the top.
async function show({navigation}) {
  const gen = ++generation;
  const name = routeName();
  const route = ROUTES[name];
  document.body.dataset.page = route ? name : 'not-found';
  if (navigation) document.body.dataset.state = 'loading';
  renderNav(name);
  if (!route) {
    filters.replaceChildren();
    content.replaceChildren(h('section', {class: 'panel'}, h('h1', null, 'Not found'),
      h('p', null, `No page called “${name}”. `, h('a', {href: 'fleet', 'data-link': true}, 'Go to the fleet.'))));
    document.title = 'not found · otelcol-accel insights';
    document.body.dataset.state = 'ready';
    return;
  }
  const params = new URLSearchParams(location.search);
  const ctx = {params, navigate, refresh: () => show({navigation: false})};
  try {
    const [bar, page] = await Promise.all([
      navigation && route.filters ? filterBar(params, navigate) : null,
      route.page.render(ctx),
    ]);
    if (gen !== generation) return; // a newer navigation won
    if (navigation) filters.replaceChildren(...(bar ? [bar] : []));
    content.replaceChildren(page);
    document.title = `${ctx.title || route.title} · otelcol-accel insights`;
    if (navigation) window.scrollTo(0, 0);
    document.body.dataset.state = 'ready';
    document.body.dataset.updated = new Date().toISOString();
  } catch (err) {
    if (gen !== generation) return;
    console.error(err);
    content.replaceChildren(h('section', {class: 'panel error', role: 'alert'},
      h('h1', null, err.status === 404 ? 'Not found' : 'Could not load this page'),
      h('p', null, err.message)));
    document.body.dataset.state = err.status === 404 ? 'not-found' : 'error';
  }
}

function schedule() {
  clearInterval(timer);
  live.checked = localStorage.getItem('insights.live') !== 'off';
  if (live.checked) {
    timer = setInterval(() => {
      if (document.visibilityState === 'visible' && document.body.dataset.state === 'ready') show({navigation: false});
    }, REFRESH_MS);
  }
}

live.addEventListener('change', () => {
  localStorage.setItem('insights.live', live.checked ? 'on' : 'off');
  schedule();
});

// In-console links: plain clicks are followed by the router; modified clicks
// (new tab, new window) and other origins are left to the browser.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[data-link]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const url = new URL(a.href);
  if (url.origin !== location.origin) return;
  e.preventDefault();
  if (url.pathname !== location.pathname) forget();
  navigate(url.pathname + url.search);
});

window.addEventListener('popstate', () => show({navigation: true}));

if (location.pathname.endsWith('/index.html')) {
  history.replaceState(null, '', `fleet${location.search}`);
}
schedule();
show({navigation: true});
