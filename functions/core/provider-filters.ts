/**
 * GET /resource_providers filtering over the in-memory forest, with the semantics of
 * placement.objects.resource_provider.get_all_by_filters: every filter applies to
 * the provider itself (aggregates and traits are not inherited from the tree here).
 */
import type { Forest } from './forest.js';
import { fits, type ProviderRecord } from './model.js';
import type { AggregateFilter, TraitFilter } from './query.js';

export interface ProviderFilters {
  name?: string;
  uuid?: string;
  inTree?: string;
  traits?: TraitFilter;
  aggregates?: AggregateFilter;
  resources?: Record<string, number>;
}

export function hasCapacity(p: ProviderRecord, rc: string, amount: number): boolean {
  const inv = p.inventories[rc];
  return !!inv && fits(inv, p.usages[rc] ?? 0, amount);
}

export function matchesTraits(p: ProviderRecord, f: TraitFilter): boolean {
  const mine = new Set(p.traits);
  for (const any of f.required) if (![...any].some((t) => mine.has(t))) return false;
  for (const t of f.forbidden) if (mine.has(t)) return false;
  return true;
}

export function matchesAggregates(aggs: Iterable<string>, f: AggregateFilter): boolean {
  const mine = new Set(aggs);
  for (const any of f.required) if (![...any].some((a) => mine.has(a))) return false;
  for (const a of f.forbidden) if (mine.has(a)) return false;
  return true;
}

export function filterProviders(forest: Forest, f: ProviderFilters): ProviderRecord[] {
  let root: string | undefined;
  if (f.inTree !== undefined) {
    const anchor = forest.get(f.inTree);
    if (!anchor) return [];
    root = anchor.root;
  }
  return forest.all().filter((p) => {
    if (f.name !== undefined && p.name !== f.name) return false;
    if (f.uuid !== undefined && p.uuid !== f.uuid) return false;
    if (root !== undefined && p.root !== root) return false;
    if (f.traits && !matchesTraits(p, f.traits)) return false;
    if (f.aggregates && !matchesAggregates(p.aggregates, f.aggregates)) return false;
    if (f.resources) for (const [rc, n] of Object.entries(f.resources)) if (!hasCapacity(p, rc, n)) return false;
    return true;
  });
}
