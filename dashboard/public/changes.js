// @ts-check
/**
 * The Changes tab: the change feed's latest committed changes, live (the page asks for
 * those after the last it has every two seconds). Locally they come from the events file
 * of `npm start` (local/dashboard.ts /events); a deployed dashboard has no feed to read:
 * there the events go to EventBridge, and the tab says so.
 */
import { latestChanges } from './api.js';
import { $, el } from './dom.js';

/** rows kept on the page */
const KEEP = 200;
let last = '';
/** @type {HTMLElement[]} */
const rows = [];

/**
 * What an event is about, in a few words: its subjects and, for a consumer, what it holds after.
 * @param {Record<string, any>} d  the event's detail
 */
function summary(d) {
  const subjects = /** @type {string[]} */ (d.subjects ?? []);
  const after = d.after ?? {};
  const parts = subjects.slice(0, 3).map((s) => {
    const a = after[s];
    if (a?.allocations) {
      const res = Object.values(a.allocations)
        .flatMap((r) => Object.entries(/** @type {Record<string, number>} */ (r)).map(([rc, n]) => `${rc}:${n}`))
        .join(' ');
      return `${s.slice(0, 8)} → ${res || '—'}`;
    }
    if (a === null) return `${s.slice(0, 8)} gone`;
    return s.length > 12 ? s.slice(0, 8) : s;
  });
  return parts.join(', ') + (subjects.length > 3 ? ` (+${subjects.length - 3})` : '');
}

/** Read the changes since the last one shown and put them on top. */
export async function pollChanges() {
  const got = await latestChanges(last);
  if (got === null) {
    $('changes-note').textContent =
      'The change feed is read here when Berth runs locally (npm start). Deployed, its events go to the EventBridge bus (docs/operating.md, "Events and history").';
    return false;
  }
  $('changes-note').textContent =
    `The latest committed changes, newest first (live; ${rows.length + got.events.length > 0 ? 'updated' : 'none yet'} ${new Date().toLocaleTimeString()}).`;
  const list = $('changes-list');
  for (const e of got.events) {
    const d = e.detail;
    last = String(d.id);
    const row = el(
      'tr',
      {},
      el(
        'td',
        { class: 'mono' },
        String(d.time ?? '')
          .replace('T', ' ')
          .replace('Z', ''),
      ),
      el('td', {}, e['detail-type']),
      el('td', {}, d.generation ?? ''),
      el('td', {}, d.project_id ?? ''),
      el('td', { class: 'mono' }, summary(d)),
    );
    rows.unshift(row);
    list.prepend(row);
  }
  while (rows.length > KEEP) rows.pop()?.remove();
  return true;
}
