// Berth dashboard: a read-only picture of the cloud drawn from the public APIs only
// (Placement and the bare-metal API). Plain ES modules, no build step; every value is
// inserted as text (never as HTML).
//
// Sized for a large cloud: the provider list is read once in its smallest form
// (microversion 1.0: uuid, name, generation) and paged here; details (inventories,
// usages, traits, aggregates, allocations, tree) are read for the visible page only;
// the summary by aggregate costs a bounded number of requests whatever the cloud's
// size. When even the smallest list cannot be sent (the API refuses an answer larger
// than a response may carry), the page says so in the API's own words and works from
// Placement's filters (name, uuid, member_of, in_tree, required, resources) instead.

/** the smallest provider list Placement has: uuid, name, generation and 3 links */
const LIST_VERSION = '1.0';
const DETAIL_VERSION = '1.39';
/** providers per page (each costs 5-6 small reads) */
const PAGE_SIZE = 25;
/** the summary by aggregate: providers whose aggregates are read to discover them, per summary and per round */
const SAMPLE_BUDGET = 96;
const SAMPLE_ROUND = 24;
/** aggregates counted (one member_of list each) per summary */
const SUMMARY_AGGREGATES = 40;
/** consumers looked up (GET /allocations/{c}) for the consumers tab */
const CONSUMER_LOOKUPS = 100;
/** auto-refresh re-reads the provider list and the summary only for clouds this small; beyond, the visible page */
const FULL_REFRESH_MAX = 2000;
const BM_PAGE = 50;
const PARALLEL = 6;

let config = { placement: '/placement', baremetal: '/baremetal', token: 'admin' };
let timer;

const $ = (id) => document.getElementById(id);
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'onclick') e.addEventListener('click', v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? '')));
  return e;
}
const stat = (label, value) => el('div', { class: 'stat' }, el('b', {}, value), el('span', {}, label));
const short = (u) => (u ? String(u).slice(0, 8) : '');
const fmt = (n) => Number(n).toLocaleString('en-US');
const plural = (n, one, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;
const linkButton = (label, onclick, attrs = {}) => el('button', { type: 'button', class: 'link', onclick, ...attrs }, label);

// ------------------------------------------------------------------ API access
class ApiError extends Error {
  constructor(path, status, detail) {
    super(`${path}: HTTP ${status}${detail ? ` — ${detail}` : ''}`);
    this.status = status;
    this.detail = detail;
  }
  /** the API refused an answer too large to send (Placement's 400 says "does not fit"; a gateway may say 413/502/504) */
  get tooLarge() {
    return (this.status === 400 && /does not fit/.test(this.detail)) || [413, 502, 504].includes(this.status);
  }
}

/** the human part of an error body: Placement's errors[0].detail, Ironic's faultstring, a gateway's message */
function errorDetail(body) {
  if (Array.isArray(body?.errors) && body.errors[0]?.detail) return String(body.errors[0].detail);
  if (typeof body?.error_message === 'string') {
    try {
      return String(JSON.parse(body.error_message).faultstring ?? body.error_message);
    } catch {
      return body.error_message;
    }
  }
  return body?.message ? String(body.message) : '';
}

async function api(base, path, headers = {}) {
  const token = $('token').value || config.token;
  // config.json of a deployment with the JWT authorizer says auth: "bearer"
  const auth = config.auth === 'bearer' ? { authorization: `Bearer ${token}` } : { 'x-auth-token': token };
  const r = await fetch(`${base}${path}`, { headers: { accept: 'application/json', ...auth, ...headers } });
  if (!r.ok) {
    let detail = '';
    try {
      detail = errorDetail(await r.json());
    } catch {
      /* no JSON body */
    }
    throw new ApiError(path, r.status, detail);
  }
  return r.json();
}
const placement = (path, version = DETAIL_VERSION) => api(config.placement, path, { 'openstack-api-version': `placement ${version}` });
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

/** k distinct items picked evenly at random (deterministic for a given seed) */
function sample(items, k, seed) {
  if (items.length <= k) return items.slice();
  let s = seed >>> 0 || 1;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const picked = new Set();
  while (picked.size < k) picked.add(Math.floor(rnd() * items.length));
  return [...picked].sort((a, b) => a - b).map((i) => items[i]);
}

// ------------------------------------------------------------------ state
const state = {
  /** every provider ({uuid, name, generation, key}) from the 1.0 list; null when the list cannot be had */
  list: null,
  /** why there is no list: the API's own words */
  refused: '',
  /** a server-side filter: { params (URLSearchParams), version, rows } */
  filter: null,
  filterNote: '',
  /** client-side "find" text (substring of name or uuid) */
  find: '',
  page: 0,
  /** details of the providers on the visible page */
  shown: [],
  summary: null,
  traits: null,
  bm: { nodes: [undefined], nodeAt: 0, allocs: [undefined], allocAt: 0 },
};
let pageSeq = 0;

const row = (p) => ({
  uuid: p.uuid,
  name: p.name,
  generation: p.generation,
  ...('root_provider_uuid' in p ? { parent_provider_uuid: p.parent_provider_uuid, root_provider_uuid: p.root_provider_uuid } : {}),
  key: `${p.name}\n${p.uuid}`.toLowerCase(),
});

/** parents before their children, trees in the order of their roots (when the rows know their parents) */
function treeOrder(rows) {
  if (!rows.some((r) => 'parent_provider_uuid' in r)) return rows;
  const known = new Set(rows.map((r) => r.uuid));
  const kids = new Map();
  for (const r of rows) {
    const k = r.parent_provider_uuid && known.has(r.parent_provider_uuid) ? r.parent_provider_uuid : '';
    if (!kids.has(k)) kids.set(k, []);
    kids.get(k).push(r);
  }
  const out = [];
  const stack = [...(kids.get('') ?? [])].reverse();
  while (stack.length) {
    const r = stack.pop();
    out.push(r);
    for (const c of [...(kids.get(r.uuid) ?? [])].reverse()) stack.push(c);
  }
  return out;
}

async function loadList() {
  try {
    const { resource_providers: rps } = await placement('/resource_providers', LIST_VERSION);
    state.list = rps.map(row);
    state.refused = '';
  } catch (e) {
    if (!(e instanceof ApiError) || !e.tooLarge) throw e;
    state.list = null;
    state.refused = e.detail || `HTTP ${e.status}`;
  }
}

/** the smallest microversion that accepts these filters (and their syntax) */
function filterVersion(params) {
  let minor = 0;
  const need = (m) => {
    minor = Math.max(minor, m);
  };
  const member = params.get('member_of');
  if (member !== null) need(member.includes('!') ? 32 : 3);
  if (params.has('resources')) need(4);
  if (params.has('in_tree')) need(14);
  const required = params.get('required');
  if (required !== null) need(required.includes('in:') ? 39 : required.includes('!') ? 22 : 18);
  return `1.${minor}`;
}

async function runFilter() {
  const f = state.filter;
  if (!f) return;
  try {
    const { resource_providers: rps } = await placement(`/resource_providers?${f.params}`, f.version);
    f.rows = treeOrder(rps.map(row));
    state.filterNote = '';
  } catch (e) {
    if (!(e instanceof ApiError) || !(e.status === 400 || e.tooLarge)) throw e;
    f.rows = [];
    state.filterNote = e.detail || e.message;
  }
}

/** the providers being paged: the filter's result (or the whole list), narrowed by the find box */
function currentRows() {
  const base = state.filter ? state.filter.rows : (state.list ?? []);
  const q = state.find.trim().toLowerCase();
  return q ? base.filter((p) => p.key.includes(q)) : base;
}

async function details(p) {
  const at = `/resource_providers/${encodeURIComponent(p.uuid)}`;
  const get = (sub, fallback) => placement(`${at}${sub}`).catch((e) => fallback(e));
  const [self, inv, usage, traits, aggs, allocs] = await Promise.all([
    'root_provider_uuid' in p ? p : get('', (e) => ({ ...p, missing: e.status === 404 })),
    get('/inventories', () => ({ inventories: {} })),
    get('/usages', () => ({ usages: {} })),
    get('/traits', () => ({ traits: [] })),
    get('/aggregates', () => ({ aggregates: [] })),
    get('/allocations', (e) => ({ allocations: {}, allocationsNote: e.tooLarge ? 'too many consumers to list' : e.message })),
  ]);
  return {
    uuid: p.uuid,
    name: self.name ?? p.name,
    generation: self.generation ?? p.generation,
    parent_provider_uuid: self.parent_provider_uuid,
    root_provider_uuid: self.root_provider_uuid,
    missing: self.missing,
    inventories: inv.inventories,
    usages: usage.usages,
    traits: traits.traits,
    aggregates: aggs.aggregates,
    allocations: allocs.allocations,
    allocationsNote: allocs.allocationsNote,
  };
}

async function loadPage() {
  const seq = ++pageSeq;
  const rows = currentRows();
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  state.page = Math.min(Math.max(0, state.page), pages - 1);
  const visible = rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
  const shown = await pool(visible, PARALLEL, details);
  if (seq !== pageSeq) return false;
  state.shown = shown;
  return true;
}

// ------------------------------------------------------------------ summary by aggregate
/**
 * Placement has no list of aggregates: they are found by reading the aggregates of the
 * visible providers and of a bounded random sample of the providers not yet in a found
 * aggregate; each found aggregate is counted exactly with one member_of list (1.3, the
 * smallest form that has the filter). Bounded: SAMPLE_BUDGET + SUMMARY_AGGREGATES reads.
 */
async function summarize(population, seeds) {
  const aggs = new Map();
  const covered = new Set();
  const sampled = new Set();
  let lookups = 0;
  let overflow = false;
  const count = async (fresh) => {
    const unseen = fresh.filter((a) => !aggs.has(a));
    const todo = unseen.slice(0, Math.max(0, SUMMARY_AGGREGATES - aggs.size));
    if (todo.length < unseen.length) overflow = true;
    for (const a of todo) aggs.set(a, { uuid: a, count: null, note: '' });
    await pool(todo, 4, async (a) => {
      try {
        const { resource_providers: rps } = await placement(`/resource_providers?member_of=${encodeURIComponent(a)}`, '1.3');
        aggs.get(a).count = rps.length;
        for (const p of rps) covered.add(p.uuid);
      } catch (e) {
        aggs.get(a).note = e instanceof ApiError && e.tooLarge ? 'more members than one answer can carry' : e.message;
      }
    });
  };
  await count([...new Set(seeds)]);
  for (let round = 0; lookups < SAMPLE_BUDGET && aggs.size < SUMMARY_AGGREGATES; round++) {
    const open = population.filter((p) => !covered.has(p.uuid) && !sampled.has(p.uuid));
    if (!open.length) break;
    const picks = sample(open, Math.min(SAMPLE_ROUND, SAMPLE_BUDGET - lookups), population.length * 31 + round);
    lookups += picks.length;
    const found = await pool(picks, PARALLEL, (p) =>
      placement(`/resource_providers/${encodeURIComponent(p.uuid)}/aggregates`, '1.1').then(
        (r) => r.aggregates,
        () => [],
      ),
    );
    for (const p of picks) sampled.add(p.uuid);
    await count([...new Set(found.flat())]);
  }
  const outside = population.filter((p) => !covered.has(p.uuid));
  return {
    rows: [...aggs.values()].sort((a, b) => (b.count ?? Infinity) - (a.count ?? Infinity) || a.uuid.localeCompare(b.uuid)),
    population: population.length,
    outside: outside.length,
    /** every provider outside the found aggregates had its own aggregates read */
    exact: !overflow && outside.every((p) => sampled.has(p.uuid)),
    /** more aggregates were found than the summary counts */
    overflow,
    sampled: lookups,
  };
}

async function loadSummary() {
  const seeds = state.shown.flatMap((p) => p.aggregates || []);
  const population = state.list ?? state.filter?.rows ?? [];
  state.summary = { ...(await summarize(population, seeds)), scope: state.list ? 'cloud' : state.filter ? 'filter' : 'page' };
}

function aggregateTable(summary, max) {
  if (!summary) return el('p', { class: 'muted' }, 'counting…');
  const rows = summary.rows.slice(0, max);
  const total = summary.population || 1;
  const table = el(
    'table',
    { class: 'agg-summary' },
    el('tr', {}, el('th', {}, 'aggregate'), el('th', {}, 'providers'), el('th', {}, ''), el('th', {}, '')),
    rows.map((a) =>
      el(
        'tr',
        { 'data-aggregate': a.uuid },
        el('td', { class: 'uuid' }, a.uuid),
        el('td', { class: 'count' }, a.count === null ? a.note : fmt(a.count)),
        el(
          'td',
          { class: 'share' },
          a.count === null ? '' : el('div', { class: 'bar' }, el('i', { style: `width:${Math.min(100, (a.count / total) * 100).toFixed(1)}%` })),
        ),
        el(
          'td',
          {},
          linkButton('show', () => applyFilter({ member_of: a.uuid }), { 'data-show': a.uuid }),
        ),
      ),
    ),
  );
  const notes = [];
  if (summary.rows.length > rows.length) notes.push(`${plural(summary.rows.length - rows.length, 'more aggregate')} in the Aggregates tab.`);
  if (summary.scope === 'cloud') {
    const outside = plural(summary.outside, 'provider');
    notes.push(
      summary.exact
        ? `${outside} in no aggregate.`
        : summary.overflow
          ? `${outside} outside these aggregates: there are more than ${SUMMARY_AGGREGATES} aggregates and the summary counts ${SUMMARY_AGGREGATES} of them (filter with member_of for any other).`
          : `${outside} outside these aggregates (aggregates are found by reading the aggregates of a sample of ${fmt(summary.sampled)} providers, so a small one may be missing).`,
    );
  } else if (summary.scope === 'filter') {
    notes.push(`Aggregates of the ${plural(summary.population, 'provider')} the filter found (counts are cloud-wide).`);
  } else {
    notes.push('Aggregates of the providers shown (the provider list is too large to sample).');
  }
  if (!summary.rows.length) return el('div', {}, el('p', { class: 'empty' }, 'No aggregates found.'), el('p', { class: 'muted' }, notes.join(' ')));
  return el('div', {}, table, el('p', { class: 'muted summary-note' }, notes.join(' ')));
}

// ------------------------------------------------------------------ providers
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

function renderStats() {
  const rows = currentRows();
  const whole = state.list && !state.filter && !state.find.trim() && rows.length <= PAGE_SIZE;
  const onPage = whole ? '' : ' on this page';
  const stats = [stat('providers', state.list ? fmt(state.list.length) : 'too many to list')];
  if (state.filter || state.find.trim()) stats.push(stat('matching', fmt(rows.length)));
  if (state.summary) {
    const exact = state.summary.scope === 'cloud' && state.summary.exact;
    stats.push(stat(exact ? 'aggregates' : 'aggregates found', `${fmt(state.summary.rows.length)}${state.summary.overflow ? '+' : ''}`));
  }
  if (state.traits) stats.push(stat('traits in use', fmt(state.traits.length)));
  const shownUuids = new Set(state.shown.map((p) => p.uuid));
  stats.push(stat(`trees${onPage}`, fmt(state.shown.filter((p) => !p.parent_provider_uuid || !shownUuids.has(p.parent_provider_uuid)).length)));
  stats.push(stat(`resource classes${onPage}`, fmt(new Set(state.shown.flatMap((p) => Object.keys(p.inventories || {}))).size)));
  stats.push(stat(`consumers${onPage}`, fmt(new Set(state.shown.flatMap((p) => Object.keys(p.allocations || {}))).size)));
  $('provider-summary').replaceChildren(...stats);
}

function renderPager(total) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const go = (page, label, name) =>
    el(
      'button',
      {
        type: 'button',
        'data-go': name,
        disabled: page < 0 || page >= pages || page === state.page ? 'disabled' : undefined,
        onclick: () => showPage(page),
      },
      label,
    );
  const from = total ? state.page * PAGE_SIZE + 1 : 0;
  const to = Math.min(total, (state.page + 1) * PAGE_SIZE);
  $('pager').replaceChildren(
    go(0, '«', 'first'),
    go(state.page - 1, '‹ prev', 'prev'),
    el('span', { class: 'where' }, total ? `${fmt(from)}–${fmt(to)} of ${plural(total, 'provider')}` : 'no providers'),
    el('span', { class: 'muted pages' }, `page ${fmt(state.page + 1)} of ${fmt(pages)}`),
    go(state.page + 1, 'next ›', 'next'),
    go(pages - 1, '»', 'last'),
  );
}

function renderProviders() {
  const note = $('list-note');
  note.hidden = !!state.list;
  note.replaceChildren(
    el('b', {}, 'Search only: '),
    'the provider list is too large to fetch in one answer, so this page shows what Placement’s filters find. The API said: ',
    el('q', {}, state.refused),
  );
  const fnote = $('filter-note');
  const f = state.filter;
  fnote.hidden = !f && !state.filterNote;
  fnote.className = state.filterNote ? 'note error' : 'note';
  fnote.replaceChildren(
    ...(state.filterNote
      ? [el('b', {}, 'The filter was refused: '), el('q', {}, state.filterNote)]
      : f
        ? [
            `Placement filter ${f.params.toString()} (microversion ${f.version}): ${plural(f.rows.length, 'provider')}. `,
            linkButton('clear filter', clearFilter),
          ]
        : []),
  );
  $('find').disabled = !state.list && !f;
  const rows = currentRows();
  renderPager(rows.length);
  const byParent = new Map();
  const onPage = new Set(state.shown.map((p) => p.uuid));
  for (const p of state.shown) {
    const k = p.parent_provider_uuid && onPage.has(p.parent_provider_uuid) ? p.parent_provider_uuid : '';
    if (!byParent.has(k)) byParent.set(k, []);
    byParent.get(k).push(p);
  }
  const node = (p) => {
    const kids = byParent.get(p.uuid) || [];
    const consumers = p.allocationsNote ?? plural(Object.keys(p.allocations || {}).length, 'consumer');
    const where =
      p.parent_provider_uuid && !onPage.has(p.parent_provider_uuid)
        ? `child of ${short(p.parent_provider_uuid)} in tree ${short(p.root_provider_uuid)}`
        : '';
    return el(
      'div',
      { class: 'provider', 'data-uuid': p.uuid },
      el(
        'div',
        { class: 'head' },
        el('span', { class: 'name' }, p.name),
        el(
          'span',
          { class: 'muted' },
          p.missing ? `${short(p.uuid)} · gone since the list was read` : `${short(p.uuid)} · generation ${p.generation} · ${consumers}`,
        ),
        where ? el('span', { class: 'muted' }, where) : '',
        p.root_provider_uuid ? linkButton('tree', () => applyFilter({ in_tree: p.root_provider_uuid }), { 'data-tree': p.root_provider_uuid }) : '',
      ),
      el(
        'div',
        {},
        (p.aggregates || []).map((a) => el('span', { class: 'chip agg', title: a }, `agg ${short(a)}`)),
        (p.traits || []).map((t) => el('span', { class: 'chip' }, t)),
      ),
      usageBars(p),
      kids.length ? el('div', { class: 'children' }, kids.map(node)) : '',
    );
  };
  const roots = byParent.get('') || [];
  const empty =
    !state.list && !f ? 'Use the filters above to find providers.' : state.find.trim() || f ? 'No provider matches.' : 'No resource providers yet.';
  $('tree').replaceChildren(...(roots.length ? roots.map(node) : [el('p', { class: 'empty' }, empty)]));
  $('by-aggregate').replaceChildren(el('h2', {}, 'By aggregate'), aggregateTable(state.summary, 8));
  renderStats();
}

// ------------------------------------------------------------------ consumers
async function renderConsumers() {
  const consumers = new Map();
  for (const p of state.shown) {
    for (const [c, a] of Object.entries(p.allocations || {})) {
      if (!consumers.has(c)) consumers.set(c, []);
      consumers.get(c).push({ provider: p.name, resources: a.resources });
    }
  }
  const ids = [...consumers.keys()].slice(0, CONSUMER_LOOKUPS);
  const info = await pool(ids, PARALLEL, (c) => placement(`/allocations/${encodeURIComponent(c)}`).catch(() => ({})));
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
        `project ${proj} — ${plural(rows.length, 'consumer')} — ${Object.entries(totals)
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
  const all = currentRows().length;
  const notes = [];
  if (all > state.shown.length) {
    notes.push(
      `Consumers of the ${plural(state.shown.length, 'provider')} on the providers page shown (of ${fmt(all)}): Placement lists consumers per provider only; the usage of a whole project is below.`,
    );
  }
  if (consumers.size > ids.length) notes.push(`The first ${fmt(ids.length)} of ${fmt(consumers.size)} consumers are shown.`);
  $('consumer-note').textContent = notes.join(' ');
  $('projects').replaceChildren(...(sections.length ? sections : [el('p', { class: 'empty' }, 'No allocations yet.')]));
  $('consumer-summary').replaceChildren(stat('consumers', fmt(consumers.size)), stat('projects', fmt(byProject.size)));
}

async function projectUsage(project, user) {
  const q = new URLSearchParams({ project_id: project });
  if (user) q.set('user_id', user);
  const out = $('project-usage-result');
  try {
    const { usages } = await placement(`/usages?${q}`, '1.9');
    const parts = Object.entries(usages).map(([rc, n]) => `${rc} ${fmt(n)}`);
    out.replaceChildren(
      el('p', { class: 'usage' }, `project ${project}${user ? ` user ${user}` : ''}: ${parts.length ? parts.join(', ') : 'nothing allocated'}`),
    );
  } catch (e) {
    out.replaceChildren(el('p', { class: 'note error' }, e.message));
  }
}

// ------------------------------------------------------------------ aggregates & traits
async function loadTraits() {
  try {
    state.traits = (await placement('/traits?associated=true', '1.6')).traits.sort();
  } catch {
    state.traits = null;
  }
}

function renderGroups() {
  $('aggregates').replaceChildren(aggregateTable(state.summary, Infinity));
  const onPage = new Map();
  for (const p of state.shown) {
    for (const t of p.traits || []) {
      if (!onPage.has(t)) onPage.set(t, []);
      onPage.get(t).push(p.name);
    }
  }
  const names = state.traits ?? [...onPage.keys()].sort();
  $('traits').replaceChildren(
    names.length
      ? el(
          'table',
          {},
          el('tr', {}, el('th', {}, 'trait'), el('th', {}, 'on the providers page'), el('th', {}, '')),
          names.map((t) => {
            const v = onPage.get(t) || [];
            return el(
              'tr',
              { 'data-trait': t },
              el('td', {}, t),
              el('td', {}, v.length ? `${v.length}: ${v.slice(0, 8).join(', ')}${v.length > 8 ? ', …' : ''}` : ''),
              el(
                'td',
                {},
                linkButton('show', () => applyFilter({ required: t })),
              ),
            );
          }),
        )
      : el('p', { class: 'empty' }, 'No traits in use.'),
  );
}

// ------------------------------------------------------------------ bare metal
function bmPager(id, kind, at, more) {
  const s = state.bm;
  const move = (d) => () => {
    s[`${kind}At`] = at + d;
    task(renderBaremetal);
  };
  if (at === 0 && !more) return $(id).replaceChildren();
  $(id).replaceChildren(
    el('button', { type: 'button', 'data-go': 'prev', disabled: at === 0 ? 'disabled' : undefined, onclick: move(-1) }, '‹ prev'),
    el('span', { class: 'muted pages' }, `page ${at + 1}`),
    el('button', { type: 'button', 'data-go': 'next', disabled: more ? undefined : 'disabled', onclick: move(1) }, 'next ›'),
  );
}

async function renderBaremetal() {
  const s = state.bm;
  const page = (marker) => `?limit=${BM_PAGE}${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`;
  try {
    const [n, a] = await Promise.all([
      baremetal(`/v1/nodes/detail${page(s.nodes[s.nodeAt])}`),
      baremetal(`/v1/allocations${page(s.allocs[s.allocAt])}`),
    ]);
    const nodes = n.nodes;
    const allocations = a.allocations;
    if (n.next && nodes.length) s.nodes[s.nodeAt + 1] = nodes[nodes.length - 1].uuid;
    if (a.next && allocations.length) s.allocs[s.allocAt + 1] = allocations[allocations.length - 1].uuid;
    bmPager('nodes-pager', 'node', s.nodeAt, !!n.next);
    bmPager('bm-allocations-pager', 'alloc', s.allocAt, !!a.next);
    const states = {};
    for (const x of nodes) states[x.provision_state] = (states[x.provision_state] || 0) + 1;
    const paged = s.nodeAt > 0 || n.next;
    $('bm-summary').replaceChildren(
      stat(paged ? 'nodes on this page' : 'nodes', fmt(nodes.length)),
      stat(s.allocAt > 0 || a.next ? 'allocations on this page' : 'allocations', fmt(allocations.length)),
      ...Object.entries(states).map(([st, k]) => stat(st, fmt(k))),
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
            nodes.map((x) =>
              el(
                'tr',
                {},
                el('td', {}, x.name || ''),
                el('td', { title: x.uuid }, short(x.uuid)),
                el('td', {}, x.resource_class || ''),
                el('td', { class: `state ${x.provision_state}` }, x.provision_state),
                el('td', {}, x.power_state || '—'),
                el('td', {}, x.maintenance ? 'yes' : 'no'),
                el('td', { title: x.instance_uuid || '' }, short(x.instance_uuid)),
                el('td', {}, ((x.traits || []).join ? x.traits : []).join(', ')),
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
            allocations.map((x) =>
              el(
                'tr',
                {},
                el('td', {}, x.name || ''),
                el('td', { title: x.uuid }, short(x.uuid)),
                el('td', {}, x.resource_class),
                el('td', { class: `state ${x.state}` }, x.state),
                el('td', { title: x.node_uuid || '' }, short(x.node_uuid)),
                el('td', {}, x.last_error || ''),
              ),
            ),
          )
        : el('p', { class: 'empty' }, 'No allocations.'),
    );
  } catch (e) {
    $('bm-summary').replaceChildren(el('p', { class: 'empty' }, `Bare-metal API unavailable (${e.message}).`));
  }
}

// ------------------------------------------------------------------ flow
/** run one user action; body[data-ready] is "false" while it runs (tests wait on it) */
let running = 0;
async function task(fn) {
  running++;
  document.body.dataset.ready = 'false';
  try {
    await fn();
  } catch (e) {
    $('status').textContent = `error: ${e.message}`;
  } finally {
    if (--running === 0) document.body.dataset.ready = 'true';
  }
}

/** the visible page changed: its details, and what is drawn from them */
async function pageChanged() {
  if (!(await loadPage())) return;
  renderProviders();
  renderGroups();
  await renderConsumers();
}

function showPage(page) {
  state.page = page;
  return task(pageChanged);
}

function applyFilter(values) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (String(v ?? '').trim()) params.set(k, String(v).trim());
  for (const input of $('filters').querySelectorAll('fieldset input')) input.value = params.get(input.name) ?? '';
  for (const x of document.querySelectorAll('nav button, .tab')) x.classList.remove('active');
  document.querySelector('nav button[data-tab="providers"]').classList.add('active');
  $('providers').classList.add('active');
  return task(async () => {
    state.filter = [...params.keys()].length ? { params, version: filterVersion(params), rows: [] } : null;
    state.filterNote = '';
    state.page = 0;
    await runFilter();
    await pageChanged();
    // without a list, what the summary can see is what the filter found
    if (!state.list) {
      await loadSummary();
      renderProviders();
      renderGroups();
    }
  });
}

function clearFilter() {
  return applyFilter({});
}

let refreshing = false;
async function refresh(full = true) {
  // a large cloud's refresh can outlast the auto-refresh interval: never run two at once
  if (refreshing) return;
  refreshing = true;
  $('status').textContent = 'loading…';
  await task(async () => {
    if (full) {
      await loadList();
      await runFilter();
    }
    await pageChanged();
    const cloudWide = async () => {
      await Promise.all([loadSummary(), loadTraits()]);
      renderProviders();
      renderGroups();
    };
    await Promise.all([full ? cloudWide() : null, renderBaremetal()]);
    $('status').textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = 'true';
  }).finally(() => {
    refreshing = false;
  });
}

for (const b of document.querySelectorAll('nav button')) {
  b.addEventListener('click', () => {
    for (const x of document.querySelectorAll('nav button, .tab')) x.classList.remove('active');
    b.classList.add('active');
    $(b.dataset.tab).classList.add('active');
  });
}
$('refresh').addEventListener('click', () => refresh(true));
$('auto').addEventListener('change', (e) => {
  clearInterval(timer);
  // a large cloud's list and summary are re-read by Refresh only; the tick re-reads the visible page
  if (e.target.checked) timer = setInterval(() => refresh(!!state.list && state.list.length <= FULL_REFRESH_MAX), 5000);
});
let findTimer;
$('find').addEventListener('input', (e) => {
  // debounced; counted as running from the first keystroke so body[data-ready] tells the truth
  if (findTimer === undefined) running++;
  else clearTimeout(findTimer);
  document.body.dataset.ready = 'false';
  findTimer = setTimeout(() => {
    findTimer = undefined;
    state.find = e.target.value;
    state.page = 0;
    task(pageChanged).finally(() => {
      if (--running === 0) document.body.dataset.ready = 'true';
    });
  }, 200);
});
$('filters').addEventListener('submit', (e) => {
  e.preventDefault();
  const values = {};
  for (const input of $('filters').querySelectorAll('fieldset input')) values[input.name] = input.value;
  applyFilter(values);
});
$('clear').addEventListener('click', clearFilter);
$('project-usage').addEventListener('submit', (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const project = String(f.get('project_id') || '').trim();
  if (project) task(() => projectUsage(project, String(f.get('user_id') || '').trim()));
});

try {
  config = { ...config, ...(await (await fetch('config.json')).json()) };
} catch {
  /* defaults */
}
$('token').value = config.token || '';
refresh();
