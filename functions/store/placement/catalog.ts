/**
 * Custom resource classes and traits as other reads need them: existence checks for
 * names in a query or body (standard names are known in code, custom ones are items,
 * in the partitions RCS#<n> / TRAITS#<n>), and their creation order, which every view that lists classes or
 * traits follows (functions/core/placement/standard.ts: Placement lists them in id
 * order, custom ones as created).
 *
 * The order is cached per process and table: a custom name's sequence never changes
 * while anything uses it (a class or trait in use can be neither deleted nor renamed),
 * so the cache is reloaded (one Query of the partition) only when a view needs a name
 * it does not know, or after CUSTOM_ORDER_TTL_MS (a name deleted and created again,
 * unused in between, then sorts by its old sequence for at most that long).
 */
import { customNames, type CustomOrder, isStandardResourceClass, isStandardTrait } from '../../core/placement/standard.js';
import { batchGet } from '../ddb/reads.js';
import type { Item } from '../ddb/client.js';
import { tableKey } from '../ddb/per-table.js';
import { queryAll } from '../ddb/query.js';
import { K } from './keys.js';

async function existingCustom(kind: 'trait' | 'rc', names: string[]): Promise<Set<string>> {
  const keys = [...new Set(names)].map((n) => (kind === 'trait' ? K.customTrait(n) : K.customResourceClass(n)));
  return new Set([...(await batchGet(keys)).values()].map((it) => String(it.sk)));
}

/** The names (in input order) that are neither standard nor existing custom traits. */
export async function missingTraits(names: Iterable<string>): Promise<string[]> {
  const list = [...names];
  const custom = list.filter((n) => !isStandardTrait(n));
  if (!custom.length) return [];
  const found = await existingCustom('trait', custom);
  return list.filter((n) => !isStandardTrait(n) && !found.has(n));
}

/** The names (in input order) that are neither standard nor existing custom resource classes. */
export async function missingResourceClasses(names: Iterable<string>): Promise<string[]> {
  const list = [...names];
  const custom = list.filter((n) => !isStandardResourceClass(n));
  if (!custom.length) return [];
  const found = await existingCustom('rc', custom);
  return list.filter((n) => !isStandardResourceClass(n) && !found.has(n));
}

// ------------------------------------------------------------------ the custom names

/** A custom resource class or custom trait: the same record, under its own key family */
export interface CustomName {
  name: string;
  /** providers counting it (inventory of the class, or having the trait) */
  refs: number;
  createdAt: string;
  updatedAt?: string;
  /** creation order (Placement lists custom names by id) */
  seq: number;
}

export function customNameFromItem(it: Item): CustomName {
  return {
    name: String(it.sk),
    refs: Number(it.refs ?? 0),
    createdAt: String(it.created),
    updatedAt: it.updated ? String(it.updated) : undefined,
    seq: customSeq(it),
  };
}

/** the stored item of a custom name (key and type from its kind) */
export function customNameItem(kind: CustomKind, c: CustomName): Item {
  return {
    ...(kind === 'rc' ? K.customResourceClass(c.name) : K.customTrait(c.name)),
    type: kind === 'rc' ? 'RC' : 'TRAIT',
    refs: c.refs,
    created: c.createdAt,
    ...(c.updatedAt ? { updated: c.updatedAt } : {}),
    seq: c.seq,
  };
}

// ------------------------------------------------------------------ creation order

export const CUSTOM_ORDER_TTL_MS = 60_000;

/** A custom item's creation sequence: `seq`, or (items written before it existed) its creation time. */
export function customSeq(it: Item): number {
  if (it.seq !== undefined) return Number(it.seq);
  const t = Date.parse(String(it.created ?? ''));
  return Number.isNaN(t) ? 0 : t * 1000;
}

interface Cached {
  at: number;
  seqs: Map<string, number>;
}
const cache = new Map<string, Cached>();
/** custom resource classes, or custom traits */
export type CustomKind = 'rc' | 'trait';
const PKS: Record<CustomKind, readonly string[]> = { rc: K.customResourceClassPks, trait: K.customTraitPks };

const cacheKey = (kind: CustomKind) => `${tableKey()}|${kind}`;

/** Remember every custom item of one kind (a caller that read them all anyway). */
export function rememberCustomItems(kind: CustomKind, items: Item[]): void {
  cache.set(cacheKey(kind), { at: Date.now(), seqs: new Map(items.map((it) => [String(it.sk), customSeq(it)])) });
}

async function seqsCovering(kind: CustomKind, names: string[]): Promise<Map<string, number>> {
  const hit = cache.get(cacheKey(kind));
  if (hit && (!names.length || (Date.now() - hit.at < CUSTOM_ORDER_TTL_MS && names.every((n) => hit.seqs.has(n))))) return hit.seqs;
  if (!names.length) return new Map();
  rememberCustomItems(kind, await queryAll(PKS[kind]));
  return cache.get(cacheKey(kind))!.seqs;
}

/**
 * The creation order of the custom classes and traits among `classes` / `traits`
 * (standard names cost nothing; at most one Query per kind when a name is new here).
 */
export async function customOrder(need: { classes?: Iterable<string>; traits?: Iterable<string> }): Promise<CustomOrder> {
  const [classes, traits] = await Promise.all([
    seqsCovering('rc', customNames(need.classes ?? [], 'resource_class')),
    seqsCovering('trait', customNames(need.traits ?? [], 'trait')),
  ]);
  return { classes, traits };
}

/** Forget one kind's cached order (this process deleted or renamed a custom name: it knows at once). */
export function forgetCustomOrder(kind: CustomKind): void {
  cache.delete(cacheKey(kind));
}
