// @ts-check
/**
 * The page's one state, and the reads that fill it. Other modules read `state` (typed
 * read-only) and change it through the functions here.
 *
 * Sized for a large cloud: the provider list is read once in its smallest form
 * (microversion 1.0: uuid, name, generation) and paged here; details (inventories,
 * usages, traits, aggregates, allocations, tree) are read for the visible page only.
 * When even the smallest list cannot be sent (the API refuses an answer larger than a
 * response may carry), `refused` holds the API's words and the page works from
 * Placement's filters (name, uuid, member_of, in_tree, required, resources) instead.
 */
import { ApiError, PARALLEL, placement, pool } from './api.js';
import { summarize } from './summary.js';

/** the smallest provider list Placement has: uuid, name, generation and 3 links */
const LIST_VERSION = '1.0';
/** providers per page (each costs 5-6 small reads) */
export const PAGE_SIZE = 25;

/**
 * A provider as a list names it (1.14+ lists, a filter's, add its tree links).
 * @typedef {object} Row
 * @property {string} uuid
 * @property {string} name
 * @property {number} generation
 * @property {string | null} [parent_provider_uuid]
 * @property {string} [root_provider_uuid]
 * @property {string} key  "name\nuuid" in lower case, what Find searches
 */

/**
 * @typedef {{ total: number, reserved: number, allocation_ratio: number }} Inventory
 * @typedef {{ resources: Record<string, number> }} Allocation
 */

/**
 * A provider of the visible page, with its details.
 * @typedef {object} Shown
 * @property {string} uuid
 * @property {string} name
 * @property {number} generation
 * @property {string | null} [parent_provider_uuid]
 * @property {string} [root_provider_uuid]
 * @property {boolean} [missing]  deleted since the list was read
 * @property {Record<string, Inventory>} inventories
 * @property {Record<string, number>} usages
 * @property {string[]} traits
 * @property {string[]} aggregates
 * @property {Record<string, Allocation>} allocations  by consumer
 * @property {string} [allocationsNote]  why there are none to show
 */

/**
 * A Placement filter and what it found.
 * @typedef {object} Filter
 * @property {URLSearchParams} params
 * @property {string} version  the smallest microversion that accepts them
 * @property {Row[]} rows
 */

/** @typedef {import('./summary.js').Summary & { scope: 'cloud' | 'filter' | 'page' }} ScopedSummary */

/**
 * Bare-metal paging: the marker of each page reached (undefined: the first).
 * @typedef {object} BaremetalPaging
 * @property {(string | undefined)[]} nodes
 * @property {number} nodeAt
 * @property {(string | undefined)[]} allocs
 * @property {number} allocAt
 */

/**
 * @typedef {object} State
 * @property {Row[] | null} list  every provider from the 1.0 list; null when the list cannot be had
 * @property {string} refused  why there is no list: the API's own words
 * @property {Filter | null} filter  a server-side filter
 * @property {string} filterNote  why the filter was refused
 * @property {string} find  the Find box (substring of name or uuid)
 * @property {number} page
 * @property {Shown[]} shown  the visible page
 * @property {ScopedSummary | null} summary
 * @property {string[] | null} traits  every trait in use (null: unknown)
 * @property {BaremetalPaging} bm
 */

/** @type {State} */
const s = {
  list: null,
  refused: '',
  filter: null,
  filterNote: '',
  find: '',
  page: 0,
  shown: [],
  summary: null,
  traits: null,
  bm: { nodes: [undefined], nodeAt: 0, allocs: [undefined], allocAt: 0 },
};
export const state = /** @type {Readonly<State>} */ (s);
/** the newest page read: an older one that answers late is dropped */
let pageSeq = 0;

/**
 * @param {{ uuid: string, name: string, generation: number, parent_provider_uuid?: string | null, root_provider_uuid?: string }} p
 * @returns {Row}
 */
const row = (p) => ({
  uuid: p.uuid,
  name: p.name,
  generation: p.generation,
  ...('root_provider_uuid' in p ? { parent_provider_uuid: p.parent_provider_uuid, root_provider_uuid: p.root_provider_uuid } : {}),
  key: `${p.name}\n${p.uuid}`.toLowerCase(),
});

/**
 * Parents before their children, trees in the order of their roots (when the rows know their parents).
 * @param {Row[]} rows
 */
function treeOrder(rows) {
  if (!rows.some((r) => 'parent_provider_uuid' in r)) return rows;
  const known = new Set(rows.map((r) => r.uuid));
  /** @type {Map<string, Row[]>} */
  const kids = new Map();
  for (const r of rows) {
    const k = r.parent_provider_uuid && known.has(r.parent_provider_uuid) ? r.parent_provider_uuid : '';
    const siblings = kids.get(k);
    if (siblings) siblings.push(r);
    else kids.set(k, [r]);
  }
  /** @type {Row[]} */
  const out = [];
  const stack = [...(kids.get('') ?? [])].reverse();
  for (let r = stack.pop(); r; r = stack.pop()) {
    out.push(r);
    for (const c of [...(kids.get(r.uuid) ?? [])].reverse()) stack.push(c);
  }
  return out;
}

/** Read the whole provider list, or learn why it cannot be sent. */
export async function loadList() {
  try {
    const { resource_providers: rps } = await placement('/resource_providers', LIST_VERSION);
    s.list = rps.map(row);
    s.refused = '';
  } catch (e) {
    if (!(e instanceof ApiError) || !e.tooLarge) throw e;
    s.list = null;
    s.refused = e.detail || `HTTP ${e.status}`;
  }
}

/**
 * The smallest microversion that accepts these filters (and their syntax).
 * @param {URLSearchParams} params
 */
function filterVersion(params) {
  let minor = 0;
  /** @param {number} m */
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

/**
 * Filter with Placement (the values that are not blank), from the first page; none to page the whole list.
 * @param {URLSearchParams} params
 */
export function setFilter(params) {
  s.filter = [...params.keys()].length ? { params, version: filterVersion(params), rows: [] } : null;
  s.filterNote = '';
  s.page = 0;
}

/** Ask Placement what the filter finds (a refusal goes to filterNote). */
export async function runFilter() {
  const f = s.filter;
  if (!f) return;
  try {
    const { resource_providers: rps } = await placement(`/resource_providers?${f.params}`, f.version);
    f.rows = treeOrder(rps.map(row));
    s.filterNote = '';
  } catch (e) {
    if (!(e instanceof ApiError) || !(e.status === 400 || e.tooLarge)) throw e;
    f.rows = [];
    s.filterNote = e.detail || e.message;
  }
}

/**
 * Narrow what is paged to names and uuids containing `text`, from the first page.
 * @param {string} text
 */
export function setFind(text) {
  s.find = text;
  s.page = 0;
}

/** @param {number} page */
export function setPage(page) {
  s.page = page;
}

/** The providers being paged: the filter's result (or the whole list), narrowed by the find box. */
export function currentRows() {
  const base = s.filter ? s.filter.rows : (s.list ?? []);
  const q = s.find.trim().toLowerCase();
  return q ? base.filter((p) => p.key.includes(q)) : base;
}

/**
 * A provider's details (6 reads; its own at 1.39 only when the row lacks its tree links).
 * @param {Row} p
 * @returns {Promise<Shown>}
 */
async function details(p) {
  const at = `/resource_providers/${encodeURIComponent(p.uuid)}`;
  /** @type {(sub: string, fallback: (e: ApiError) => any) => Promise<any>} */
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

/**
 * Read the details of the visible page.
 * @returns {Promise<boolean>} false when a newer read overtook this one (nothing changed)
 */
export async function loadPage() {
  const seq = ++pageSeq;
  const rows = currentRows();
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  s.page = Math.min(Math.max(0, s.page), pages - 1);
  const visible = rows.slice(s.page * PAGE_SIZE, (s.page + 1) * PAGE_SIZE);
  const shown = await pool(visible, PARALLEL, details);
  if (seq !== pageSeq) return false;
  s.shown = shown;
  return true;
}

/** Count the aggregates of the list (or of the filter's result, or of the page when there is neither). */
export async function loadSummary() {
  const seeds = s.shown.flatMap((p) => p.aggregates || []);
  const population = s.list ?? s.filter?.rows ?? [];
  s.summary = { ...(await summarize(population, seeds)), scope: s.list ? 'cloud' : s.filter ? 'filter' : 'page' };
}

/** Every trait some provider has (null when Placement will not say). */
export async function loadTraits() {
  try {
    s.traits = (await placement('/traits?associated=true', '1.6')).traits.sort();
  } catch {
    s.traits = null;
  }
}

/**
 * Show this page of bare-metal nodes or allocations (one whose marker is known).
 * @param {'node' | 'alloc'} kind
 * @param {number} page
 */
export function setBaremetalPage(kind, page) {
  if (kind === 'node') s.bm.nodeAt = page;
  else s.bm.allocAt = page;
}

/**
 * Where the next page of nodes or allocations starts, once a page says there is one.
 * @param {'node' | 'alloc'} kind
 * @param {string} marker
 */
export function baremetalNextPage(kind, marker) {
  if (kind === 'node') s.bm.nodes[s.bm.nodeAt + 1] = marker;
  else s.bm.allocs[s.bm.allocAt + 1] = marker;
}
