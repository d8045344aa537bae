/**
 * The standard resource classes (os-resource-classes) and traits (os-traits), and the
 * one order Placement gives names of each kind: its internal id order.
 *
 * Placement lists classes and traits — in inventories, usages, allocations, provider
 * traits, provider summaries, GET /traits, GET /resource_classes — in the order of
 * their database ids: the standard names first, as they were synced, then custom ones
 * in creation order. Standard classes are synced in os-resource-classes' order; the
 * standard traits from a Python set, i.e. in an order that differs between deployments
 * (hash seed), so any fixed order is upstream's order for some deployment: Berth uses
 * the os-traits list below. Custom names carry a creation sequence on their items
 * (`seq`; creation time for items older than that), which the store's catalog supplies
 * as a CustomOrder. Every view that lists classes or traits orders them with
 * compareResourceClasses / compareTraits; nothing else decides their order.
 */
import classes from './data/standard-resource-classes.json' with { type: 'json' };
import { STANDARD_TRAIT_INDEX as traitIndex } from '../os-traits.js';

// os-traits is both APIs' (core/os-traits.ts); Placement orders and lists it as its own
export { isStandardTrait, STANDARD_TRAITS } from '../os-traits.js';
export const STANDARD_RESOURCE_CLASSES: readonly string[] = classes as string[];

const rcIndex = new Map(STANDARD_RESOURCE_CLASSES.map((n, i) => [n, i]));

export const isStandardResourceClass = (n: string) => rcIndex.has(n);

export const CUSTOM_PREFIX = 'CUSTOM_';
/** os_traits / os_resource_classes custom-name rule */
export const CUSTOM_NAME_RE = /^CUSTOM_[A-Z0-9_]+$/;

/** Creation sequence of custom names (from their items); a name it lacks sorts after the known ones, by name. */
export interface CustomOrder {
  readonly classes: ReadonlyMap<string, number>;
  readonly traits: ReadonlyMap<string, number>;
}

/** No custom name known: custom names sort by name (what callers without the catalog get). */
export const NO_CUSTOM_ORDER: CustomOrder = { classes: new Map(), traits: new Map() };

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function compareIn(standard: ReadonlyMap<string, number>, custom: ReadonlyMap<string, number>) {
  return (a: string, b: string): number => {
    const sa = standard.get(a);
    const sb = standard.get(b);
    if (sa !== undefined || sb !== undefined) {
      if (sa === undefined) return 1;
      if (sb === undefined) return -1;
      return sa - sb;
    }
    const ca = custom.get(a);
    const cb = custom.get(b);
    if (ca !== undefined && cb !== undefined && ca !== cb) return ca - cb;
    if (ca !== undefined && cb === undefined) return -1;
    if (cb !== undefined && ca === undefined) return 1;
    return byName(a, b);
  };
}

/** Placement's resource class id order: standard classes in os-resource-classes order, then custom ones as created. */
export function compareResourceClasses(order: CustomOrder = NO_CUSTOM_ORDER): (a: string, b: string) => number {
  return compareIn(rcIndex, order.classes);
}

/** Placement's trait id order: standard traits (in Berth's fixed sync order), then custom ones as created. */
export function compareTraits(order: CustomOrder = NO_CUSTOM_ORDER): (a: string, b: string) => number {
  return compareIn(traitIndex, order.traits);
}

/** Trait names in Placement's order (a new array). */
export function sortTraits(names: Iterable<string>, order: CustomOrder = NO_CUSTOM_ORDER): string[] {
  return [...names].sort(compareTraits(order));
}

/** Resource class names in Placement's order (a new array). */
export function sortResourceClasses(names: Iterable<string>, order: CustomOrder = NO_CUSTOM_ORDER): string[] {
  return [...names].sort(compareResourceClasses(order));
}

/** A record keyed by resource class, its keys in Placement's order (a new object). */
export function inResourceClassOrder<T>(byClass: Readonly<Record<string, T>>, order: CustomOrder = NO_CUSTOM_ORDER): Record<string, T> {
  const out: Record<string, T> = {};
  for (const rc of sortResourceClasses(Object.keys(byClass), order)) out[rc] = byClass[rc]!;
  return out;
}

/** Custom names of an iterable (what a CustomOrder must cover to order them). */
export function customNames(names: Iterable<string>, kind: 'trait' | 'resource_class'): string[] {
  const standard = kind === 'trait' ? traitIndex : rcIndex;
  const out: string[] = [];
  for (const n of names) if (!standard.has(n)) out.push(n);
  return out;
}
