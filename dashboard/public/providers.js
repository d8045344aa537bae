// @ts-check
/**
 * The Providers tab: its figures, the notes on the list and the filter, the pager, and
 * the visible page as provider trees with usage bars.
 */
/** @import { Actions } from './dom.js' */
/** @import { Shown } from './state.js' */
import { aggregateTable } from './aggregates.js';
import { $, el, empty, fmt, goButton, input, linkButton, plural, short, stat } from './dom.js';
import { currentRows, PAGE_SIZE, state } from './state.js';

/**
 * A bar per resource class: used of capacity ((total - reserved) × allocation ratio).
 * @param {Shown} p
 */
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

/** The figures above the list: the cloud's where they are known, the visible page's otherwise. */
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
  const roots = state.shown.filter((p) => !p.parent_provider_uuid || !shownUuids.has(p.parent_provider_uuid));
  stats.push(stat(`trees${onPage}`, fmt(roots.length)));
  stats.push(stat(`resource classes${onPage}`, fmt(new Set(state.shown.flatMap((p) => Object.keys(p.inventories || {}))).size)));
  stats.push(stat(`consumers${onPage}`, fmt(new Set(state.shown.flatMap((p) => Object.keys(p.allocations || {}))).size)));
  $('provider-summary').replaceChildren(...stats);
}

/**
 * @param {number} total  providers being paged
 * @param {Actions} actions
 */
function renderPager(total, actions) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  /** @type {(page: number, label: string, name: string) => HTMLElement} */
  const go = (page, label, name) => goButton(label, name, page >= 0 && page < pages && page !== state.page, () => actions.showPage(page));
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

/** Without a list: say so, in the API's words. */
function renderListNote() {
  const note = $('list-note');
  note.hidden = !!state.list;
  note.replaceChildren(
    el('b', {}, 'Search only: '),
    'the provider list is too large to fetch in one answer, so this page shows what Placement’s filters find. The API said: ',
    el('q', {}, state.refused),
  );
}

/**
 * The filter in force and what it found, or why Placement refused it.
 * @param {Actions} actions
 */
function renderFilterNote(actions) {
  const note = $('filter-note');
  const f = state.filter;
  note.hidden = !f && !state.filterNote;
  note.className = state.filterNote ? 'note error' : 'note';
  if (state.filterNote) note.replaceChildren(el('b', {}, 'The filter was refused: '), el('q', {}, state.filterNote));
  else if (f) {
    note.replaceChildren(
      `Placement filter ${f.params.toString()} (microversion ${f.version}): ${plural(f.rows.length, 'provider')}. `,
      linkButton('clear filter', actions.clearFilter),
    );
  } else note.replaceChildren();
}

/**
 * A card's head: name, generation and consumers, where its tree is when its parent is
 * not on the page, and the button that shows its whole tree.
 * @param {Shown} p
 * @param {Actions} actions
 */
function cardHead(p, actions) {
  const consumers = p.allocationsNote ?? plural(Object.keys(p.allocations || {}).length, 'consumer');
  const orphan = p.parent_provider_uuid && !state.shown.some((x) => x.uuid === p.parent_provider_uuid);
  const where = orphan ? `child of ${short(p.parent_provider_uuid)} in tree ${short(p.root_provider_uuid)}` : '';
  const tree = p.root_provider_uuid;
  return el(
    'div',
    { class: 'head' },
    el('span', { class: 'name' }, p.name),
    el(
      'span',
      { class: 'muted' },
      p.missing ? `${short(p.uuid)} · gone since the list was read` : `${short(p.uuid)} · generation ${p.generation} · ${consumers}`,
    ),
    where ? el('span', { class: 'muted' }, where) : '',
    tree ? linkButton('tree', () => actions.applyFilter({ in_tree: tree }), { 'data-tree': tree }) : '',
  );
}

/**
 * A provider's card: its head, chips (aggregates, traits), usage bars, and the cards of
 * its children on the page.
 * @param {Shown} p
 * @param {Map<string, Shown[]>} byParent  the page's providers by parent on the page ('' for none)
 * @param {Actions} actions
 * @returns {HTMLElement}
 */
function providerCard(p, byParent, actions) {
  const kids = byParent.get(p.uuid) || [];
  const chips = el(
    'div',
    {},
    (p.aggregates || []).map((a) => el('span', { class: 'chip agg', title: a }, `agg ${short(a)}`)),
    (p.traits || []).map((t) => el('span', { class: 'chip' }, t)),
  );
  const children = kids.length
    ? el(
        'div',
        { class: 'children' },
        kids.map((k) => providerCard(k, byParent, actions)),
      )
    : '';
  return el('div', { class: 'provider', 'data-uuid': p.uuid }, cardHead(p, actions), chips, usageBars(p), children);
}

/**
 * The visible page as trees: each provider inside its parent when both are on it.
 * @param {Actions} actions
 */
function renderTree(actions) {
  const onPage = new Set(state.shown.map((p) => p.uuid));
  /** @type {Map<string, Shown[]>} */
  const byParent = new Map();
  for (const p of state.shown) {
    const k = p.parent_provider_uuid && onPage.has(p.parent_provider_uuid) ? p.parent_provider_uuid : '';
    const siblings = byParent.get(k);
    if (siblings) siblings.push(p);
    else byParent.set(k, [p]);
  }
  const roots = byParent.get('') || [];
  const f = state.filter;
  const none =
    !state.list && !f ? 'Use the filters above to find providers.' : state.find.trim() || f ? 'No provider matches.' : 'No resource providers yet.';
  $('tree').replaceChildren(...(roots.length ? roots.map((p) => providerCard(p, byParent, actions)) : [empty(none)]));
}

/**
 * The Providers tab.
 * @param {Actions} actions
 */
export function renderProviders(actions) {
  renderListNote();
  renderFilterNote(actions);
  input('find').disabled = !state.list && !state.filter;
  renderPager(currentRows().length, actions);
  renderTree(actions);
  $('by-aggregate').replaceChildren(el('h2', {}, 'By aggregate'), aggregateTable(8, actions));
  renderStats();
}
