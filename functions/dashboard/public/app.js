// Berth dashboard: a read-only picture of the cloud drawn from the public APIs only
// (Placement and the bare-metal API). Plain ES modules, no build step; every value is
// inserted as text (never as HTML).
const PLACEMENT_VERSION = 'placement 1.39';
let config = { placement: '/placement', baremetal: '/baremetal', token: 'admin' };
let timer;

const $ = (id) => document.getElementById(id);
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'style') e.setAttribute('style', v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? '')));
  return e;
}
const stat = (label, value) => el('div', { class: 'stat' }, el('b', {}, value), el('span', {}, label));
const short = (u) => (u ? String(u).slice(0, 8) : '');

async function api(base, path, headers = {}) {
  const token = $('token').value || config.token;
  // config.json of a deployment with the JWT authorizer says auth: "bearer"
  const auth = config.auth === 'bearer' ? { authorization: `Bearer ${token}` } : { 'x-auth-token': token };
  const r = await fetch(`${base}${path}`, { headers: { accept: 'application/json', ...auth, ...headers } });
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}
const placement = (path) => api(config.placement, path, { 'openstack-api-version': PLACEMENT_VERSION });
const baremetal = (path) => api(config.baremetal, path, { 'x-openstack-ironic-api-version': 'latest' });

async function pool(items, n, fn) {
  const out = new Array(items.length);
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (i < items.length) {
        const k = i++;
        out[k] = await fn(items[k], k);
      }
    }),
  );
  return out;
}

// ------------------------------------------------------------------ providers
async function loadProviders() {
  const { resource_providers: rps } = await placement('/resource_providers');
  const shown = rps.slice(0, 500);
  const details = await pool(shown, 8, async (p) => {
    const [inv, usage, traits, aggs, allocs] = await Promise.all([
      placement(`/resource_providers/${p.uuid}/inventories`),
      placement(`/resource_providers/${p.uuid}/usages`),
      placement(`/resource_providers/${p.uuid}/traits`).catch(() => ({ traits: [] })),
      placement(`/resource_providers/${p.uuid}/aggregates`).catch(() => ({ aggregates: [] })),
      placement(`/resource_providers/${p.uuid}/allocations`).catch(() => ({ allocations: {} })),
    ]);
    return {
      ...p,
      inventories: inv.inventories,
      usages: usage.usages,
      traits: traits.traits,
      aggregates: aggs.aggregates,
      allocations: allocs.allocations,
    };
  });
  return { total: rps.length, providers: details };
}

function usageBars(p) {
  const rows = [];
  for (const [rc, inv] of Object.entries(p.inventories || {})) {
    const cap = (inv.total - inv.reserved) * inv.allocation_ratio;
    const used = p.usages?.[rc] || 0;
    const pct = cap > 0 ? Math.min(100, (used / cap) * 100) : 0;
    const cls = pct >= 100 ? 'full' : pct >= 80 ? 'warn' : '';
    rows.push(
      el('span', { class: 'muted' }, rc),
      el('div', { class: 'bar', 'data-rc': rc, title: `${used} of ${cap}` }, el('i', { class: cls, style: `width:${pct.toFixed(1)}%` })),
      el('span', { class: 'muted' }, `${used} / ${cap}`),
    );
  }
  return rows.length ? el('div', { class: 'bars' }, rows) : el('div', { class: 'muted' }, 'no inventory');
}

function renderTree(data) {
  const byParent = new Map();
  for (const p of data.providers) {
    const k = p.parent_provider_uuid || '';
    if (!byParent.has(k)) byParent.set(k, []);
    byParent.get(k).push(p);
  }
  const node = (p) =>
    el(
      'div',
      { class: 'provider', 'data-uuid': p.uuid },
      el(
        'div',
        { class: 'head' },
        el('span', { class: 'name' }, p.name),
        el('span', { class: 'muted' }, `${short(p.uuid)} · generation ${p.generation} · ${Object.keys(p.allocations || {}).length} consumers`),
      ),
      el(
        'div',
        {},
        (p.aggregates || []).map((a) => el('span', { class: 'chip agg', title: a }, `agg ${short(a)}`)),
        (p.traits || []).map((t) => el('span', { class: 'chip' }, t)),
      ),
      usageBars(p),
      (byParent.get(p.uuid) || []).length ? el('div', { class: 'children' }, byParent.get(p.uuid).map(node)) : '',
    );
  const known = new Set(data.providers.map((p) => p.uuid));
  const roots = data.providers.filter((p) => !p.parent_provider_uuid || !known.has(p.parent_provider_uuid));
  $('tree').replaceChildren(...(roots.length ? roots.map(node) : [el('p', { class: 'empty' }, 'No resource providers yet.')]));
  const classes = new Set(data.providers.flatMap((p) => Object.keys(p.inventories || {})));
  $('provider-summary').replaceChildren(
    stat('providers', data.total),
    stat('trees', roots.length),
    stat('resource classes', classes.size),
    stat('consumers', new Set(data.providers.flatMap((p) => Object.keys(p.allocations || {}))).size),
  );
}

// ------------------------------------------------------------------ consumers
async function renderConsumers(data) {
  const consumers = new Map();
  for (const p of data.providers) {
    for (const [c, a] of Object.entries(p.allocations || {})) {
      if (!consumers.has(c)) consumers.set(c, []);
      consumers.get(c).push({ provider: p.name, resources: a.resources });
    }
  }
  const ids = [...consumers.keys()].slice(0, 300);
  const info = await pool(ids, 8, (c) => placement(`/allocations/${c}`).catch(() => ({})));
  const byProject = new Map();
  ids.forEach((c, i) => {
    const proj = info[i].project_id || '(unknown)';
    if (!byProject.has(proj)) byProject.set(proj, []);
    byProject
      .get(proj)
      .push({ consumer: c, user: info[i].user_id, type: info[i].consumer_type, gen: info[i].consumer_generation, on: consumers.get(c) });
  });
  const sections = [];
  for (const [proj, rows] of [...byProject.entries()].sort()) {
    const totals = {};
    for (const r of rows) for (const o of r.on) for (const [rc, n] of Object.entries(o.resources)) totals[rc] = (totals[rc] || 0) + n;
    sections.push(
      el(
        'h2',
        {},
        `project ${proj} — ${rows.length} consumers — ${Object.entries(totals)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      ),
    );
    sections.push(
      el(
        'table',
        {},
        el(
          'tr',
          {},
          ['consumer', 'user', 'type', 'generation', 'allocations'].map((h) => el('th', {}, h)),
        ),
        rows.map((r) =>
          el(
            'tr',
            {},
            el('td', { title: r.consumer }, short(r.consumer)),
            el('td', {}, r.user || ''),
            el('td', {}, r.type || ''),
            el('td', {}, r.gen ?? ''),
            el(
              'td',
              {},
              r.on
                .map(
                  (o) =>
                    `${o.provider}: ${Object.entries(o.resources)
                      .map(([k, v]) => `${k} ${v}`)
                      .join(', ')}`,
                )
                .join('; '),
            ),
          ),
        ),
      ),
    );
  }
  $('projects').replaceChildren(...(sections.length ? sections : [el('p', { class: 'empty' }, 'No allocations yet.')]));
  $('consumer-summary').replaceChildren(stat('consumers', consumers.size), stat('projects', byProject.size));
}

// ------------------------------------------------------------------ aggregates & traits
function renderGroups(data) {
  const aggs = new Map();
  const traits = new Map();
  for (const p of data.providers) {
    for (const a of p.aggregates || []) {
      if (!aggs.has(a)) aggs.set(a, []);
      aggs.get(a).push(p.name);
    }
    for (const t of p.traits || []) {
      if (!traits.has(t)) traits.set(t, []);
      traits.get(t).push(p.name);
    }
  }
  const table = (m, label) =>
    m.size
      ? el(
          'table',
          {},
          el('tr', {}, el('th', {}, label), el('th', {}, 'providers')),
          [...m.entries()]
            .sort()
            .map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', {}, `${v.length}: ${v.slice(0, 12).join(', ')}${v.length > 12 ? ', …' : ''}`))),
        )
      : el('p', { class: 'empty' }, `No ${label}s in use.`);
  $('aggregates').replaceChildren(table(aggs, 'aggregate'));
  $('traits').replaceChildren(table(traits, 'trait'));
}

// ------------------------------------------------------------------ bare metal
async function renderBaremetal() {
  try {
    const [{ nodes }, { allocations }] = await Promise.all([baremetal('/v1/nodes/detail'), baremetal('/v1/allocations')]);
    const states = {};
    for (const n of nodes) states[n.provision_state] = (states[n.provision_state] || 0) + 1;
    $('bm-summary').replaceChildren(
      stat('nodes', nodes.length),
      stat('allocations', allocations.length),
      ...Object.entries(states).map(([s, n]) => stat(s, n)),
    );
    $('nodes').replaceChildren(
      nodes.length
        ? el(
            'table',
            {},
            el(
              'tr',
              {},
              ['name', 'uuid', 'resource class', 'provision', 'power', 'maintenance', 'instance', 'traits'].map((h) => el('th', {}, h)),
            ),
            nodes.map((n) =>
              el(
                'tr',
                {},
                el('td', {}, n.name || ''),
                el('td', { title: n.uuid }, short(n.uuid)),
                el('td', {}, n.resource_class || ''),
                el('td', { class: `state ${n.provision_state}` }, n.provision_state),
                el('td', {}, n.power_state || '—'),
                el('td', {}, n.maintenance ? 'yes' : 'no'),
                el('td', { title: n.instance_uuid || '' }, short(n.instance_uuid)),
                el('td', {}, ((n.traits || []).join ? n.traits : []).join(', ')),
              ),
            ),
          )
        : el('p', { class: 'empty' }, 'No nodes enrolled.'),
    );
    $('bm-allocations').replaceChildren(
      allocations.length
        ? el(
            'table',
            {},
            el(
              'tr',
              {},
              ['name', 'uuid', 'resource class', 'state', 'node', 'last error'].map((h) => el('th', {}, h)),
            ),
            allocations.map((a) =>
              el(
                'tr',
                {},
                el('td', {}, a.name || ''),
                el('td', { title: a.uuid }, short(a.uuid)),
                el('td', {}, a.resource_class),
                el('td', { class: `state ${a.state}` }, a.state),
                el('td', { title: a.node_uuid || '' }, short(a.node_uuid)),
                el('td', {}, a.last_error || ''),
              ),
            ),
          )
        : el('p', { class: 'empty' }, 'No allocations.'),
    );
  } catch (e) {
    $('bm-summary').replaceChildren(el('p', { class: 'empty' }, `Bare-metal API unavailable (${e.message}).`));
  }
}

async function refresh() {
  $('status').textContent = 'loading…';
  try {
    const data = await loadProviders();
    renderTree(data);
    renderGroups(data);
    await Promise.all([renderConsumers(data), renderBaremetal()]);
    $('status').textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = 'true';
  } catch (e) {
    $('status').textContent = `error: ${e.message}`;
  }
}

for (const b of document.querySelectorAll('nav button')) {
  b.addEventListener('click', () => {
    for (const x of document.querySelectorAll('nav button, .tab')) x.classList.remove('active');
    b.classList.add('active');
    $(b.dataset.tab).classList.add('active');
  });
}
$('refresh').addEventListener('click', refresh);
$('auto').addEventListener('change', (e) => {
  clearInterval(timer);
  if (e.target.checked) timer = setInterval(refresh, 5000);
});

try {
  config = { ...config, ...(await (await fetch('config.json')).json()) };
} catch {
  /* defaults */
}
$('token').value = config.token || '';
refresh();
