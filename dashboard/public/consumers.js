// @ts-check
/**
 * The Consumers tab. Placement lists consumers per provider only: these are the
 * consumers of the visible page, looked up (GET /allocations/{c}) for their project,
 * user and type, grouped by project; any project's usage across the whole cloud is one
 * GET /usages away.
 */
import { PARALLEL, placement, pool } from './api.js';
import { $, el, empty, fmt, plural, short, stat, table } from './dom.js';
import { currentRows, state } from './state.js';

/** consumers looked up for the tab */
const CONSUMER_LOOKUPS = 100;

/**
 * @typedef {{ provider: string, resources: Record<string, number> }} Holding
 * @typedef {object} ConsumerRow
 * @property {string} consumer
 * @property {string} [user]
 * @property {string} [type]
 * @property {number} [gen]
 * @property {Holding[]} on  what it holds on the visible page
 */

/** @param {Record<string, number>} resources */
const amounts = (resources) =>
  Object.entries(resources)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** The consumers of the visible page, with what each holds there. */
function consumersOnPage() {
  /** @type {Map<string, Holding[]>} */
  const consumers = new Map();
  for (const p of state.shown) {
    for (const [c, a] of Object.entries(p.allocations || {})) {
      const held = consumers.get(c);
      const holding = { provider: p.name, resources: a.resources };
      if (held) held.push(holding);
      else consumers.set(c, [holding]);
    }
  }
  return consumers;
}

/**
 * Look the first CONSUMER_LOOKUPS consumers up and group them by project.
 * @param {Map<string, Holding[]>} consumers
 * @param {string[]} ids
 * @returns {Promise<Map<string, ConsumerRow[]>>}
 */
async function byProject(consumers, ids) {
  const info = await pool(ids, PARALLEL, (c) => placement(`/allocations/${encodeURIComponent(c)}`).catch(() => ({})));
  /** @type {Map<string, ConsumerRow[]>} */
  const projects = new Map();
  ids.forEach((c, i) => {
    const x = info[i];
    const proj = x.project_id || '(unknown)';
    const rows = projects.get(proj) ?? [];
    rows.push({ consumer: c, user: x.user_id, type: x.consumer_type, gen: x.consumer_generation, on: consumers.get(c) ?? [] });
    projects.set(proj, rows);
  });
  return projects;
}

/** @param {ConsumerRow} r */
const consumerRow = (r) =>
  el(
    'tr',
    {},
    el('td', { title: r.consumer }, short(r.consumer)),
    el('td', {}, r.user || ''),
    el('td', {}, r.type || ''),
    el('td', {}, r.gen ?? ''),
    el('td', {}, r.on.map((o) => `${o.provider}: ${amounts(o.resources)}`).join('; ')),
  );

/**
 * A project's heading (its consumers and what they hold on the page) and their table.
 * @param {string} project
 * @param {ConsumerRow[]} rows
 */
function projectSection(project, rows) {
  /** @type {Record<string, number>} */
  const totals = {};
  for (const r of rows) for (const o of r.on) for (const [rc, n] of Object.entries(o.resources)) totals[rc] = (totals[rc] || 0) + n;
  return [
    el('h2', {}, `project ${project} — ${plural(rows.length, 'consumer')} — ${amounts(totals)}`),
    table(['consumer', 'user', 'type', 'generation', 'allocations'], rows.map(consumerRow)),
  ];
}

/**
 * What the tab shows of the whole.
 * @param {number} consumers
 * @param {number} looked
 */
function consumerNote(consumers, looked) {
  const all = currentRows().length;
  const notes = [];
  if (all > state.shown.length) {
    notes.push(
      `Consumers of the ${plural(state.shown.length, 'provider')} on the providers page shown (of ${fmt(all)}): Placement lists consumers per provider only; the usage of a whole project is below.`,
    );
  }
  if (consumers > looked) notes.push(`The first ${fmt(looked)} of ${fmt(consumers)} consumers are shown.`);
  return notes.join(' ');
}

/** Read and draw the Consumers tab. */
export async function renderConsumers() {
  const consumers = consumersOnPage();
  const ids = [...consumers.keys()].slice(0, CONSUMER_LOOKUPS);
  const projects = await byProject(consumers, ids);
  const sections = [...projects.entries()].sort().flatMap(([proj, rows]) => projectSection(proj, rows));
  $('consumer-note').textContent = consumerNote(consumers.size, ids.length);
  $('projects').replaceChildren(...(sections.length ? sections : [empty('No allocations yet.')]));
  $('consumer-summary').replaceChildren(stat('consumers', fmt(consumers.size)), stat('projects', fmt(projects.size)));
}

/**
 * A project's (and optionally one user's) usage across the whole cloud.
 * @param {string} project
 * @param {string} user
 */
export async function projectUsage(project, user) {
  const q = new URLSearchParams({ project_id: project });
  if (user) q.set('user_id', user);
  const out = $('project-usage-result');
  try {
    /** @type {{ usages: Record<string, number> }} */
    const { usages } = await placement(`/usages?${q}`, '1.9');
    const parts = Object.entries(usages).map(([rc, n]) => `${rc} ${fmt(n)}`);
    out.replaceChildren(
      el('p', { class: 'usage' }, `project ${project}${user ? ` user ${user}` : ''}: ${parts.length ? parts.join(', ') : 'nothing allocated'}`),
    );
  } catch (e) {
    out.replaceChildren(el('p', { class: 'note error' }, /** @type {Error} */ (e).message));
  }
}
