// @ts-check
/**
 * The Bare metal tab: nodes and allocations, 50 a page each with Ironic's `marker`
 * paging (the markers reached are kept in state.bm).
 */
/** @import { Actions } from './dom.js' */
import { baremetal } from './api.js';
import { $, el, empty, fmt, goButton, short, stat, table } from './dom.js';
import { baremetalNextPage, state } from './state.js';

const BM_PAGE = 50;

/**
 * What the tab shows of a node and of an allocation (Ironic's fields).
 * @typedef {{ uuid: string, name?: string, resource_class?: string, provision_state: string, power_state?: string, maintenance?: boolean, instance_uuid?: string, traits?: string[] }} Node
 * @typedef {{ uuid: string, name?: string, resource_class: string, state: string, node_uuid?: string, last_error?: string }} Allocation
 * @typedef {{ nodes: Node[], allocations: Allocation[], moreNodes: boolean, moreAllocations: boolean }} Pages
 */

/** @param {string | undefined} marker */
const query = (marker) => `?limit=${BM_PAGE}${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`;

/**
 * Read the pages shown; note where the next ones start.
 * @returns {Promise<Pages>}
 */
async function readPages() {
  const s = state.bm;
  const [n, a] = await Promise.all([
    baremetal(`/v1/nodes/detail${query(s.nodes[s.nodeAt])}`),
    baremetal(`/v1/allocations${query(s.allocs[s.allocAt])}`),
  ]);
  /** @type {Node[]} */
  const nodes = n.nodes;
  /** @type {Allocation[]} */
  const allocations = a.allocations;
  const lastNode = nodes.at(-1);
  const lastAllocation = allocations.at(-1);
  if (n.next && lastNode) baremetalNextPage('node', lastNode.uuid);
  if (a.next && lastAllocation) baremetalNextPage('alloc', lastAllocation.uuid);
  return { nodes, allocations, moreNodes: !!n.next, moreAllocations: !!a.next };
}

/**
 * Previous / next for nodes or allocations (nothing when there is one page).
 * @param {string} id
 * @param {'node' | 'alloc'} kind
 * @param {number} at  the page shown
 * @param {boolean} more
 * @param {Actions} actions
 */
function pager(id, kind, at, more, actions) {
  if (at === 0 && !more) return $(id).replaceChildren();
  $(id).replaceChildren(
    goButton('‹ prev', 'prev', at !== 0, () => actions.showBaremetalPage(kind, at - 1)),
    el('span', { class: 'muted pages' }, `page ${at + 1}`),
    goButton('next ›', 'next', more, () => actions.showBaremetalPage(kind, at + 1)),
  );
}

/** @param {Pages} p */
function summary(p) {
  /** @type {Record<string, number>} */
  const states = {};
  for (const x of p.nodes) states[x.provision_state] = (states[x.provision_state] || 0) + 1;
  const s = state.bm;
  return [
    stat(s.nodeAt > 0 || p.moreNodes ? 'nodes on this page' : 'nodes', fmt(p.nodes.length)),
    stat(s.allocAt > 0 || p.moreAllocations ? 'allocations on this page' : 'allocations', fmt(p.allocations.length)),
    ...Object.entries(states).map(([st, k]) => stat(st, fmt(k))),
  ];
}

/** @param {Node[]} nodes */
function nodesTable(nodes) {
  if (!nodes.length) return empty('No nodes enrolled.');
  const rows = nodes.map((x) =>
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
      el('td', {}, Array.isArray(x.traits) ? x.traits.join(', ') : ''),
    ),
  );
  return table(['name', 'uuid', 'resource class', 'provision', 'power', 'maintenance', 'instance', 'traits'], rows);
}

/** @param {Allocation[]} allocations */
function allocationsTable(allocations) {
  if (!allocations.length) return empty('No allocations.');
  const rows = allocations.map((x) =>
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
  );
  return table(['name', 'uuid', 'resource class', 'state', 'node', 'last error'], rows);
}

/**
 * Read and draw the Bare metal tab (or say the API is not there).
 * @param {Actions} actions
 */
export async function renderBaremetal(actions) {
  try {
    const p = await readPages();
    pager('nodes-pager', 'node', state.bm.nodeAt, p.moreNodes, actions);
    pager('bm-allocations-pager', 'alloc', state.bm.allocAt, p.moreAllocations, actions);
    $('bm-summary').replaceChildren(...summary(p));
    $('nodes').replaceChildren(nodesTable(p.nodes));
    $('bm-allocations').replaceChildren(allocationsTable(p.allocations));
  } catch (e) {
    $('bm-summary').replaceChildren(empty(`Bare-metal API unavailable (${/** @type {Error} */ (e).message}).`));
  }
}
