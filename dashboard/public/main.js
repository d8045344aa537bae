// @ts-check
/**
 * Berth dashboard: a read-only picture of the cloud drawn from the public APIs only
 * (Placement and the bare-metal API). Plain ES modules, no build step:
 *   api.js        the two APIs (config.json, token, errors)
 *   dom.js        building the page (values always as text)
 *   state.js      the one state, and the reads that fill it
 *   summary.js    the summary by aggregate (bounded whatever the cloud's size)
 *   providers.js, aggregates.js, consumers.js, baremetal.js, changes.js   the tabs
 *   main.js       this: user actions, refresh, start
 * docs/operating.md, "The dashboard at cloud size", says what each view costs.
 */
/** @import { Actions } from './dom.js' */
import { renderGroups } from './aggregates.js';
import { layoutUpgrade, loadConfig, useToken } from './api.js';
import { renderBaremetal } from './baremetal.js';
import { pollChanges } from './changes.js';
import { projectUsage, renderConsumers } from './consumers.js';
import { $, input } from './dom.js';
import { renderProviders } from './providers.js';
import { loadList, loadPage, loadSummary, loadTraits, runFilter, setBaremetalPage, setFilter, setFind, setPage, state } from './state.js';

/** auto-refresh re-reads the provider list and the summary only for clouds this small; beyond, the visible page */
const FULL_REFRESH_MAX = 2000;
const AUTO_REFRESH_MS = 5000;
/** how often the Changes tab asks for newer changes (the change feed) */
const CHANGES_MS = 2000;

// ------------------------------------------------------------------ running work
// body[data-ready] is "false" while any user action runs (the browser test waits on it)
let running = 0;
function busy() {
  running++;
  document.body.dataset.ready = 'false';
}
function idle() {
  if (--running === 0) document.body.dataset.ready = 'true';
}

/**
 * Run one user action; a failure shows in the status line.
 * @param {() => Promise<unknown>} fn
 */
async function task(fn) {
  busy();
  try {
    await fn();
  } catch (e) {
    $('status').textContent = `error: ${/** @type {Error} */ (e).message}`;
  } finally {
    idle();
  }
}

// ------------------------------------------------------------------ actions
/** @type {Actions} */
const actions = { applyFilter, clearFilter, showPage, showBaremetalPage };

/** The visible page changed: its details, and what is drawn from them. */
async function pageChanged() {
  if (!(await loadPage())) return;
  renderProviders(actions);
  renderGroups(actions);
  await renderConsumers();
}

/** @param {number} page */
function showPage(page) {
  setPage(page);
  task(pageChanged);
}

/**
 * @param {'node' | 'alloc'} kind
 * @param {number} page
 */
function showBaremetalPage(kind, page) {
  setBaremetalPage(kind, page);
  task(() => renderBaremetal(actions));
}

/** @param {string} name  the tab's section id */
function showTab(name) {
  for (const x of document.querySelectorAll('nav button, .tab')) x.classList.remove('active');
  document.querySelector(`nav button[data-tab="${name}"]`)?.classList.add('active');
  $(name).classList.add('active');
}

/**
 * Filter with Placement (blank values left out), shown in the form and on the Providers tab.
 * @param {Record<string, string>} values
 */
function applyFilter(values) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (String(v ?? '').trim()) params.set(k, String(v).trim());
  for (const box of $('filters').querySelectorAll('fieldset input')) {
    const i = /** @type {HTMLInputElement} */ (box);
    i.value = params.get(i.name) ?? '';
  }
  showTab('providers');
  task(async () => {
    setFilter(params);
    await runFilter();
    await pageChanged();
    // without a list, what the summary can see is what the filter found
    if (!state.list) {
      await loadSummary();
      renderProviders(actions);
      renderGroups(actions);
    }
  });
}

function clearFilter() {
  applyFilter({});
}

// ------------------------------------------------------------------ refresh
let refreshing = false;
/** @param {boolean} full  re-read the list, the filter's result, the summary and the traits too */
async function refresh(full) {
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
      renderProviders(actions);
      renderGroups(actions);
    };
    await Promise.all([full ? cloudWide() : null, renderBaremetal(actions)]);
    const upgrade = layoutUpgrade();
    $('layout-note').textContent = upgrade;
    $('layout-note').hidden = !upgrade;
    $('status').textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = 'true';
  }).finally(() => {
    refreshing = false;
  });
}

// ------------------------------------------------------------------ wiring
/** @type {ReturnType<typeof setInterval> | undefined} */
let timer;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let findTimer;

/** The tabs, Refresh and auto-refresh. */
function wireControls() {
  for (const b of document.querySelectorAll('nav button')) {
    b.addEventListener('click', () => showTab(/** @type {HTMLElement} */ (b).dataset.tab ?? 'providers'));
  }
  $('refresh').addEventListener('click', () => refresh(true));
  input('auto').addEventListener('change', () => {
    clearInterval(timer);
    // a large cloud's list and summary are re-read by Refresh only; the tick re-reads the visible page
    if (input('auto').checked) timer = setInterval(() => refresh(!!state.list && state.list.length <= FULL_REFRESH_MAX), AUTO_REFRESH_MS);
  });
}

/** The Find box, debounced; counted as running from the first keystroke so body[data-ready] tells the truth. */
function wireFind() {
  input('find').addEventListener('input', () => {
    if (findTimer === undefined) busy();
    else clearTimeout(findTimer);
    findTimer = setTimeout(() => {
      findTimer = undefined;
      setFind(input('find').value);
      task(pageChanged).finally(idle);
    }, 200);
  });
}

/** The filter form and the project usage form. */
function wireForms() {
  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    /** @type {Record<string, string>} */
    const values = {};
    for (const box of $('filters').querySelectorAll('fieldset input')) {
      const i = /** @type {HTMLInputElement} */ (box);
      values[i.name] = i.value;
    }
    applyFilter(values);
  });
  $('clear').addEventListener('click', clearFilter);
  $('project-usage').addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(/** @type {HTMLFormElement} */ (e.target));
    const project = String(f.get('project_id') || '').trim();
    if (project) task(() => projectUsage(project, String(f.get('user_id') || '').trim()));
  });
}

wireControls();
wireFind();
wireForms();
useToken(() => input('token').value);
input('token').value = await loadConfig();
refresh(true);
// the change feed, live where there is one to read
pollChanges()
  .then((live) => {
    if (live) setInterval(() => pollChanges().catch(() => undefined), CHANGES_MS);
  })
  .catch(() => undefined);
