// @ts-check
/**
 * Aggregates and traits: the summary by aggregate (on the Providers tab, its largest
 * few; on Aggregates & traits, all of it) and the traits in use.
 */
/** @import { Actions } from './dom.js' */
/** @import { AggregateCount } from './summary.js' */
/** @import { ScopedSummary } from './state.js' */
import { $, el, empty, fmt, linkButton, plural, table } from './dom.js';
import { state } from './state.js';
import { SUMMARY_AGGREGATES } from './summary.js';

/**
 * One aggregate: its count and its share of the providers looked at.
 * @param {AggregateCount} a
 * @param {number} total
 * @param {Actions} actions
 */
function aggregateRow(a, total, actions) {
  const bar = el('div', { class: 'bar' }, el('i', { style: `width:${Math.min(100, ((a.count ?? 0) / total) * 100).toFixed(1)}%` }));
  return el(
    'tr',
    { 'data-aggregate': a.uuid },
    el('td', { class: 'uuid' }, a.uuid),
    el('td', { class: 'count' }, a.count === null ? a.note : fmt(a.count)),
    el('td', { class: 'share' }, a.count === null ? '' : bar),
    el(
      'td',
      {},
      linkButton('show', () => actions.applyFilter({ member_of: a.uuid }), { 'data-show': a.uuid }),
    ),
  );
}

/**
 * What the summary covers, and how sure it is.
 * @param {ScopedSummary} summary
 * @param {number} shown  rows in the table
 */
function summaryNotes(summary, shown) {
  const notes = [];
  if (summary.rows.length > shown) notes.push(`${plural(summary.rows.length - shown, 'more aggregate')} in the Aggregates tab.`);
  const outside = plural(summary.outside, 'provider');
  if (summary.scope === 'cloud' && summary.exact) notes.push(`${outside} in no aggregate.`);
  else if (summary.scope === 'cloud' && summary.overflow) {
    notes.push(
      `${outside} outside these aggregates: there are more than ${SUMMARY_AGGREGATES} aggregates and the summary counts ${SUMMARY_AGGREGATES} of them (filter with member_of for any other).`,
    );
  } else if (summary.scope === 'cloud') {
    notes.push(
      `${outside} outside these aggregates (aggregates are found by reading the aggregates of a sample of ${fmt(summary.sampled)} providers, so a small one may be missing).`,
    );
  } else if (summary.scope === 'filter') {
    notes.push(`Aggregates of the ${plural(summary.population, 'provider')} the filter found (counts are cloud-wide).`);
  } else {
    notes.push('Aggregates of the providers shown (the provider list is too large to sample).');
  }
  return notes.join(' ');
}

/**
 * The summary by aggregate, its largest `max` rows.
 * @param {number} max
 * @param {Actions} actions
 */
export function aggregateTable(max, actions) {
  const summary = state.summary;
  if (!summary) return el('p', { class: 'muted' }, 'counting…');
  const rows = summary.rows.slice(0, max);
  const notes = summaryNotes(summary, rows.length);
  if (!summary.rows.length) return el('div', {}, empty('No aggregates found.'), el('p', { class: 'muted' }, notes));
  const total = summary.population || 1;
  const counts = table(
    ['aggregate', 'providers', '', ''],
    rows.map((a) => aggregateRow(a, total, actions)),
    { class: 'agg-summary' },
  );
  return el('div', {}, counts, el('p', { class: 'muted summary-note' }, notes));
}

/**
 * Every trait in use, with the providers of the visible page that have it.
 * @param {Actions} actions
 */
function traitsTable(actions) {
  /** @type {Map<string, string[]>} */
  const onPage = new Map();
  for (const p of state.shown) for (const t of p.traits || []) onPage.set(t, [...(onPage.get(t) ?? []), p.name]);
  const names = state.traits ?? [...onPage.keys()].sort();
  if (!names.length) return empty('No traits in use.');
  const rows = names.map((t) => {
    const v = onPage.get(t) || [];
    const which = v.length ? `${v.length}: ${v.slice(0, 8).join(', ')}${v.length > 8 ? ', …' : ''}` : '';
    return el(
      'tr',
      { 'data-trait': t },
      el('td', {}, t),
      el('td', {}, which),
      el(
        'td',
        {},
        linkButton('show', () => actions.applyFilter({ required: t })),
      ),
    );
  });
  return table(['trait', 'on the providers page', ''], rows);
}

/**
 * The Aggregates & traits tab.
 * @param {Actions} actions
 */
export function renderGroups(actions) {
  $('aggregates').replaceChildren(aggregateTable(Infinity, actions));
  $('traits').replaceChildren(traitsTable(actions));
}
