/**
 * The plan of one change to a provider's inventory, traits or aggregates: pure data the
 * store writes in one generation-guarded transaction (store/placement/provider-writes.ts)
 * and the use case (usecases/placement/provider-aspects.ts) decides from what it read.
 * Reads the plan needs (which names exist, which aggregates were seen before) are
 * passed in, so every rule here is a function of its arguments.
 */
import { classesInUse, removedClasses } from './inventory.js';
import { changedAspect, type ManagedAspect } from './managed.js';
import type { Inventory, ProviderRecord } from './model.js';

/** A change of a custom trait's or custom class's reference count (store/placement/refs.ts writes it) */
export interface RefChange {
  kind: 'trait' | 'resource_class';
  name: string;
  delta: number;
}

/** The reference changes from `before` to `after`: +1 for each name gained, -1 for each lost. */
export function diffRefs(kind: RefChange['kind'], before: Iterable<string>, after: Iterable<string>): RefChange[] {
  const b = new Set(before);
  const a = new Set(after);
  const out: RefChange[] = [];
  for (const n of a) if (!b.has(n)) out.push({ kind, name: n, delta: 1 });
  for (const n of b) if (!a.has(n)) out.push({ kind, name: n, delta: -1 });
  return out;
}

export interface ProviderPatch {
  /** what the change replaces: exactly one of the three */
  set: { inventories: Record<string, Inventory> } | { traits: string[] } | { aggregates: string[] };
  /** bump the generation (and `updated`) */
  bumpGeneration: boolean;
  /** bump invVer: every inventory change does (claims condition on it) */
  bumpInvVersion: boolean;
  /** classes whose inventory goes away: the write requires that they still have no usage */
  mustBeUnused: string[];
  /** reference-count changes on custom traits / resource classes */
  refs: RefChange[];
  /** aggregates named for the first time: recorded with the write (condition: absent) */
  firstSeen: string[];
}

export type InventoryRefusal =
  /** inventory of these classes would go away but has allocations */
  | { error: 'in_use'; classes: string[] }
  /** a class that is neither standard nor an existing custom class */
  | { error: 'unknown_class'; name: string };

/** traits that are neither standard nor existing custom traits */
export type TraitRefusal = { error: 'unknown_traits'; names: string[] };

/**
 * Replace the inventory with `inventories`. `missingClasses` are the added classes that
 * neither are standard nor exist (the use case asks the catalog about inventory.ts addedClasses()).
 */
export function planInventories(
  cur: ProviderRecord,
  inventories: Record<string, Inventory>,
  missingClasses: string[],
): ProviderPatch | InventoryRefusal {
  if (missingClasses.length) return { error: 'unknown_class', name: missingClasses[0]! };
  const removed = removedClasses(cur.inventories, inventories);
  const inUse = classesInUse(removed, cur.usages);
  if (inUse.length) return { error: 'in_use', classes: inUse };
  return {
    set: { inventories },
    bumpGeneration: true,
    bumpInvVersion: true,
    // inventory that goes away has no allocations, whatever raced us
    mustBeUnused: removed,
    refs: diffRefs('resource_class', Object.keys(cur.inventories), Object.keys(inventories)),
    firstSeen: [],
  };
}

/**
 * Replace the traits (duplicates dropped). Unchanged traits plan nothing (null): nothing
 * is written and the generation stays, as upstream.
 */
export function planTraits(cur: ProviderRecord, traits: string[], missingTraits: string[]): ProviderPatch | TraitRefusal | null {
  if (missingTraits.length) return { error: 'unknown_traits', names: missingTraits };
  const want = [...new Set(traits)];
  const refs = diffRefs('trait', cur.traits, want);
  if (!refs.length) return null;
  return { set: { traits: want }, bumpGeneration: true, bumpInvVersion: false, mustBeUnused: [], refs, firstSeen: [] };
}

/**
 * Replace the aggregates. Before 1.19 the generation does not move (`bumpGeneration`
 * false) and an unchanged list plans nothing; from 1.19 the write always bumps it.
 * `known` are the aggregates already recorded (the use case reads those of addedAggregates()).
 */
export function planAggregates(cur: ProviderRecord, aggregates: string[], bumpGeneration: boolean, known: ReadonlySet<string>): ProviderPatch | null {
  const same = cur.aggregates.length === aggregates.length && cur.aggregates.every((a, i) => a === aggregates[i]);
  if (same && !bumpGeneration) return null;
  // aggregates never seen before: recorded with this write, in the request's order
  const firstSeen = addedAggregates(cur, aggregates).filter((a) => !known.has(a));
  return { set: { aggregates: [...aggregates] }, bumpGeneration, bumpInvVersion: false, mustBeUnused: [], refs: [], firstSeen };
}

/** The aggregates `aggregates` adds to the provider's. */
export function addedAggregates(cur: ProviderRecord, aggregates: readonly string[]): string[] {
  return aggregates.filter((a) => !cur.aggregates.includes(a));
}

/** The provider as it is after the patch, `now` being the write's time. */
export function patched(cur: ProviderRecord, patch: ProviderPatch, now: string): ProviderRecord {
  return {
    ...cur,
    ...patch.set,
    generation: cur.generation + (patch.bumpGeneration ? 1 : 0),
    invVersion: cur.invVersion + (patch.bumpInvVersion ? 1 : 0),
    updatedAt: patch.bumpGeneration ? now : cur.updatedAt,
  };
}

/** What of the provider the patch changes (undefined: nothing a manager owns). */
export function patchedAspect(cur: ProviderRecord, patch: ProviderPatch): ManagedAspect | undefined {
  return changedAspect(cur, patch.set);
}
