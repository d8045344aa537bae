// @ts-check
/**
 * The summary by aggregate. Placement has no list of aggregates: they are found by
 * reading the aggregates of the visible providers and of a bounded random sample of the
 * providers not yet in a found aggregate; each found aggregate is counted exactly with
 * one member_of list (1.3, the smallest form that has the filter). Bounded whatever the
 * cloud's size: SAMPLE_BUDGET + SUMMARY_AGGREGATES reads.
 */
import { ApiError, PARALLEL, placement, pool } from './api.js';

/** providers whose aggregates are read to discover them, per summary and per round */
const SAMPLE_BUDGET = 96;
const SAMPLE_ROUND = 24;
/** aggregates counted (one member_of list each) per summary */
export const SUMMARY_AGGREGATES = 40;

/**
 * @typedef {object} AggregateCount
 * @property {string} uuid
 * @property {number | null} count  its providers, cloud-wide (null: could not be counted)
 * @property {string} note  why not
 *
 * @typedef {object} Summary
 * @property {AggregateCount[]} rows  largest first
 * @property {number} population  the providers the summary looked at
 * @property {number} outside  of them, those in no counted aggregate
 * @property {boolean} exact  every provider outside the found aggregates had its own aggregates read
 * @property {boolean} overflow  more aggregates were found than the summary counts
 * @property {number} sampled  providers whose aggregates were read
 */

/**
 * k distinct items picked evenly at random (deterministic for a given seed).
 * @template T
 * @param {readonly T[]} items
 * @param {number} k
 * @param {number} seed
 * @returns {T[]}
 */
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
  /** @type {Set<number>} */
  const picked = new Set();
  while (picked.size < k) picked.add(Math.floor(rnd() * items.length));
  return [...picked].sort((a, b) => a - b).map((i) => /** @type {T} */ (items[i]));
}

/**
 * Count the aggregates not yet counted (up to SUMMARY_AGGREGATES in all), marking their members covered.
 * @param {Map<string, AggregateCount>} aggs
 * @param {Set<string>} covered
 * @param {string[]} fresh
 * @returns {Promise<boolean>} whether some were left uncounted
 */
async function count(aggs, covered, fresh) {
  const unseen = fresh.filter((a) => !aggs.has(a));
  const todo = unseen.slice(0, Math.max(0, SUMMARY_AGGREGATES - aggs.size));
  for (const a of todo) aggs.set(a, { uuid: a, count: null, note: '' });
  await pool(todo, 4, async (a) => {
    const row = /** @type {AggregateCount} */ (aggs.get(a));
    try {
      /** @type {{ resource_providers: { uuid: string }[] }} */
      const { resource_providers: rps } = await placement(`/resource_providers?member_of=${encodeURIComponent(a)}`, '1.3');
      row.count = rps.length;
      for (const p of rps) covered.add(p.uuid);
    } catch (e) {
      row.note = e instanceof ApiError && e.tooLarge ? 'more members than one answer can carry' : /** @type {Error} */ (e).message;
    }
  });
  return todo.length < unseen.length;
}

/**
 * The aggregates of some providers (1.1); none for a provider that fails.
 * @param {{ uuid: string }[]} picks
 * @returns {Promise<string[]>}
 */
async function aggregatesOf(picks) {
  const found = await pool(picks, PARALLEL, (p) =>
    placement(`/resource_providers/${encodeURIComponent(p.uuid)}/aggregates`, '1.1').then(
      /** @param {{ aggregates: string[] }} r */ (r) => r.aggregates,
      () => [],
    ),
  );
  return [...new Set(found.flat())];
}

/**
 * @param {{ uuid: string }[]} population  the providers to account for
 * @param {string[]} seeds  aggregates already known (the visible page's)
 * @returns {Promise<Summary>}
 */
export async function summarize(population, seeds) {
  /** @type {Map<string, AggregateCount>} */
  const aggs = new Map();
  /** @type {Set<string>} */
  const covered = new Set();
  /** @type {Set<string>} */
  const sampled = new Set();
  let lookups = 0;
  let overflow = await count(aggs, covered, [...new Set(seeds)]);
  for (let round = 0; lookups < SAMPLE_BUDGET && aggs.size < SUMMARY_AGGREGATES; round++) {
    const open = population.filter((p) => !covered.has(p.uuid) && !sampled.has(p.uuid));
    if (!open.length) break;
    const picks = sample(open, Math.min(SAMPLE_ROUND, SAMPLE_BUDGET - lookups), population.length * 31 + round);
    lookups += picks.length;
    const found = await aggregatesOf(picks);
    for (const p of picks) sampled.add(p.uuid);
    overflow = (await count(aggs, covered, found)) || overflow;
  }
  const outside = population.filter((p) => !covered.has(p.uuid));
  return {
    rows: [...aggs.values()].sort((a, b) => (b.count ?? Infinity) - (a.count ?? Infinity) || a.uuid.localeCompare(b.uuid)),
    population: population.length,
    outside: outside.length,
    exact: !overflow && outside.every((p) => sampled.has(p.uuid)),
    overflow,
    sampled: lookups,
  };
}
