// The console's one door to the JSON API (docs/insights.md). URLs are built
// relative to the page, so a path prefix in front of the console works.

export class APIError extends Error {
  constructor(status, message, url) {
    super(`${url}: ${status} ${message}`);
    this.status = status;
  }
}

export function apiURL(path, params) {
  const u = new URL(`api/v1/${path}`, document.baseURI);
  for (const [k, v] of params || []) u.searchParams.append(k, v);
  return u;
}

export async function getJSON(path, params) {
  const url = apiURL(path, params);
  const resp = await fetch(url, {headers: {Accept: 'application/json'}, credentials: 'same-origin'});
  const body = await resp.json().catch(() => null);
  if (!resp.ok) throw new APIError(resp.status, (body && body.error) || resp.statusText, url.pathname + url.search);
  return body;
}

let sessionPromise = null;

// session is fetched once per page load: its CSRF token goes on every POST.
export function session() {
  if (!sessionPromise) {
    sessionPromise = getJSON('session').catch((err) => {
      sessionPromise = null;
      throw err;
    });
  }
  return sessionPromise;
}

// disableIfReadOnly disables a write button (acknowledge, dismiss, reopen,
// approve) when the console takes no writes from this client: read-only
// (listening beyond loopback without an authenticator) or no identity to
// record the write under. The reason is the button's tooltip and
// data-refused attribute.
export function disableIfReadOnly(btn) {
  session().then((s) => {
    const why = s.read_only ? s.read_only_reason : s.write_refused;
    if (why) {
      btn.disabled = true;
      btn.title = why;
      btn.dataset.refused = why;
    }
  }).catch(() => {});
  return btn;
}

// post sends a state change (acknowledge, dismiss, reopen) with the CSRF
// header the server requires.
export async function post(path, body) {
  const {csrf_token: token} = await session();
  const url = apiURL(path);
  const resp = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: {'X-Insights-CSRF': token, 'Content-Type': 'application/json', Accept: 'application/json'},
    body: JSON.stringify(body || {}),
  });
  const out = await resp.json().catch(() => null);
  if (!resp.ok) throw new APIError(resp.status, (out && out.error) || resp.statusText, url.pathname);
  return out;
}

// The filter keys every aggregate endpoint accepts, in the order the filter
// bar shows them.
export const FILTER_KEYS = ['cluster', 'node', 'team', 'namespace', 'instance_type', 'zone', 'family', 'model', 'partition_type'];

// filterParams picks the filter entries out of a page's query string.
export function filterParams(params) {
  const out = [];
  for (const [k, v] of params) {
    if (FILTER_KEYS.includes(k) && v !== '') out.push([k, v]);
  }
  return out;
}
