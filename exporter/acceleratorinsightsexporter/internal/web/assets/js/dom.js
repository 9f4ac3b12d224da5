// Small DOM builders. Pages build their elements through these (never
// innerHTML), so text from the API is always text, and styles are set through
// element.style or classes, which the Content-Security-Policy allows.

const SVG_NS = 'http://www.w3.org/2000/svg';

// h('a', {href: 'x', class: 'c', onclick: f}, child, …) builds an HTML element.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  appendAll(el, children);
  return el;
}

// s('rect', {x: 1}) builds an SVG element; attributes are set verbatim.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined && v !== false) el.setAttribute(k, String(v));
  }
  appendAll(el, children);
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style') Object.assign(el.style, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function appendAll(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

// link builds an in-console link: a real href (so it opens in a new tab and
// can be copied) that the router follows without reloading the page.
export function link(href, ...children) {
  return h('a', {href, 'data-link': true}, ...children);
}

// qs builds a relative route URL from a route name and parameters; entries
// with empty values are left out.
export function qs(route, params) {
  const p = new URLSearchParams();
  for (const [k, v] of params instanceof URLSearchParams ? params : Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== '') p.append(k, v);
  }
  const q = p.toString();
  return q ? `${route}?${q}` : route;
}

export function deviceHref(id, node) {
  return qs('device', {id, node});
}

export function nodeHref(name) {
  return qs('node', {name});
}

export function podHref(namespace, name) {
  return qs('pod', {namespace, name});
}

// table builds a table from column definitions {label, cell(row), class}.
export function table(columns, rows, opts = {}) {
  return h('table', {class: opts.class || 'data'},
    h('thead', null, h('tr', null, columns.map((c) => h('th', {class: c.class}, c.label)))),
    h('tbody', null, rows.length === 0
      ? h('tr', null, h('td', {colspan: columns.length, class: 'muted'}, opts.empty || 'none'))
      : rows.map((r) => {
        const tr = h('tr', {class: opts.rowClass ? opts.rowClass(r) : null}, columns.map((c) => h('td', {class: c.class}, c.cell(r))));
        if (opts.rowData) Object.assign(tr.dataset, opts.rowData(r));
        return tr;
      })));
}

export function section(title, ...children) {
  return h('section', {class: 'panel'}, h('h2', null, title), ...children);
}

// card is a summary card: a title, a big value and lines below it. key names
// the value for scripts and tests (data-k).
export function card(title, value, key, ...lines) {
  return h('div', {class: 'card'},
    h('div', {class: 'card-title'}, title),
    h('div', {class: 'card-value', dataset: key ? {k: key} : null}, value),
    ...lines.map((l) => h('div', {class: 'card-line'}, l)));
}

// kv is one labelled value; key names it for scripts and tests (data-k).
export function kv(label, value, key) {
  return [h('dt', null, label), h('dd', {dataset: key ? {k: key} : null}, value)];
}

export function badge(text, cls) {
  return h('span', {class: `badge ${cls || ''}`}, text);
}

export function healthBadge(health) {
  const v = health || 'unknown';
  return badge(v.replace('_', ' '), `health-${v}`);
}
