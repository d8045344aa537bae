// @ts-check
/**
 * Building the page. Every value is inserted as text, never as HTML: `el()` turns
 * whatever is not a Node into a text node.
 */

/**
 * What a rendered button may ask of the page (main.js supplies them; the renderers
 * only draw).
 * @typedef {object} Actions
 * @property {(values: Record<string, string>) => void} applyFilter  Placement filters by name (member_of, in_tree, required, …)
 * @property {() => void} clearFilter
 * @property {(page: number) => void} showPage  a page of the providers being paged
 * @property {(kind: 'node' | 'alloc', page: number) => void} showBaremetalPage
 */

/** @typedef {string | number | Node | null | undefined} Child */
/** @typedef {string | null | undefined | false | ((e: Event) => void)} AttrValue */

/**
 * The element with this id (the page's fixed skeleton, index.html).
 * @param {string} id
 * @returns {HTMLElement}
 */
export function $(id) {
  const e = document.getElementById(id);
  if (!e) throw new Error(`index.html has no #${id}`);
  return e;
}

/**
 * An input of the skeleton.
 * @param {string} id
 */
export const input = (id) => /** @type {HTMLInputElement} */ ($(id));

/**
 * An element with attributes (`class`, `onclick`, any other as is; null, undefined and
 * false leave it out) and children (text unless a Node; arrays flattened once).
 * @param {string} tag
 * @param {Record<string, AttrValue>} [attrs]
 * @param {...(Child | readonly Child[])} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') {
      if (k === 'onclick') e.addEventListener('click', v);
    } else if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? '')));
  return e;
}

/**
 * A figure of a summary row.
 * @param {string} label
 * @param {string} value
 */
export const stat = (label, value) => el('div', { class: 'stat' }, el('b', {}, value), el('span', {}, label));

/**
 * The first 8 characters of a uuid.
 * @param {string | null | undefined} u
 */
export const short = (u) => (u ? String(u).slice(0, 8) : '');

/** @param {number} n */
export const fmt = (n) => Number(n).toLocaleString('en-US');

/**
 * @param {number} n
 * @param {string} one
 * @param {string} [many]
 */
export const plural = (n, one, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

/**
 * A button drawn as a link.
 * @param {string} label
 * @param {() => void} onclick
 * @param {Record<string, AttrValue>} [attrs]
 */
export const linkButton = (label, onclick, attrs = {}) => el('button', { type: 'button', class: 'link', onclick, ...attrs }, label);

/**
 * A pager's button (`data-go` names it for the tests and the styles).
 * @param {string} label
 * @param {string} name
 * @param {boolean} enabled
 * @param {() => void} onclick
 */
export const goButton = (label, name, enabled, onclick) =>
  el('button', { type: 'button', 'data-go': name, disabled: enabled ? undefined : 'disabled', onclick }, label);

/**
 * A table: a header row, then the rows.
 * @param {string[]} headings
 * @param {HTMLElement[]} rows
 * @param {Record<string, AttrValue>} [attrs]
 */
export const table = (headings, rows, attrs = {}) =>
  el(
    'table',
    attrs,
    el(
      'tr',
      {},
      headings.map((h) => el('th', {}, h)),
    ),
    rows,
  );

/**
 * What an empty list says.
 * @param {string} text
 */
export const empty = (text) => el('p', { class: 'empty' }, text);
