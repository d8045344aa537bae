/**
 * GET /resource_providers filtering over the in-memory forest, with the semantics of
 * placement.objects.resource_provider.get_all_by_filters: every filter applies to
 * the provider itself (aggregates and traits are not inherited from the tree here),
 * and all of them are ANDed. Results keep creation order (upstream lists by id).
 *
 * The forest's indexes (by uuid, root, resource class, trait, aggregate) narrow the
 * scan to the smallest candidate set any filter allows before the full predicate
 * runs, so a selective filter costs O(matches), not O(providers).
 */
import type { Forest } from './forest.js';
import type { Members } from './forest-index.js';
import { fits, type ProviderRecord } from './model.js';
import type { AggregateFilter, TraitFilter } from './query.js';
import { SHARING_TRAIT } from './candidates/view.js';

export interface ProviderFilters {
  name?: string;
  uuid?: string;
  inTree?: string;
  traits?: TraitFilter;
  aggregates?: AggregateFilter;
  resources?: Record<string, number>;
}

/** the aggregates through which `p` shares its resources (it has MISC_SHARES_VIA_AGGREGATE) */
export function sharedVia(p: Pick<ProviderRecord, 'traits' | 'aggregates'> | undefined): string[] {
  return p?.traits.includes(SHARING_TRAIT) ? [...new Set(p.aggregates)] : [];
}

/**
 * The aggregates a list asks for the sharing providers of, when that is all it asks — what
 * Nova's report client sends for every compute host in an aggregate,
 * `member_of=in:<aggs>&required=MISC_SHARES_VIA_AGGREGATE` — else undefined.
 */
export function sharingQuery(f: ProviderFilters): string[] | undefined {
  if (f.uuid !== undefined || f.name !== undefined || f.inTree !== undefined || f.resources) return undefined;
  const t = f.traits;
  const a = f.aggregates;
  if (!t || !a || t.forbidden.size || a.forbidden.size || t.required.length !== 1 || a.required.length !== 1) return undefined;
  const [want] = t.required;
  if (want!.size !== 1 || !want!.has(SHARING_TRAIT)) return undefined;
  return [...a.required[0]!];
}

export function hasCapacity(p: ProviderRecord, rc: string, amount: number): boolean {
  const inv = Object.hasOwn(p.inventories, rc) ? p.inventories[rc] : undefined;
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

const EMPTY: ReadonlySet<string> = new Set();

function union(index: ReadonlyMap<string, Members>, keys: Iterable<string>): Members {
  const out = new Set<string>();
  for (const k of keys) for (const u of index.get(k) ?? EMPTY) out.add(u);
  return out;
}

/** The smallest set of provider uuids some filter restricts the answer to (undefined: no index applies). */
function narrowest(forest: Forest, f: ProviderFilters, root: string | undefined): Members | undefined {
  let best: Members | undefined;
  const offer = (s: Members) => {
    if (!best || s.size < best.size) best = s;
  };
  if (f.uuid !== undefined) offer(new Set([f.uuid]));
  if (root !== undefined) offer(forest.treeIds(root));
  for (const rc of Object.keys(f.resources ?? {})) offer(forest.byResourceClass.get(rc) ?? EMPTY);
  for (const any of f.traits?.required ?? []) offer(union(forest.byTrait, any));
  for (const any of f.aggregates?.required ?? []) offer(union(forest.byAggregate, any));
  return best;
}

export function filterProviders(forest: Forest, f: ProviderFilters): ProviderRecord[] {
  let root: string | undefined;
  if (f.inTree !== undefined) {
    const anchor = forest.get(f.inTree);
    if (!anchor) return [];
    root = anchor.root;
  }
  const keep = (p: ProviderRecord) => {
    if (f.name !== undefined && p.name !== f.name) return false;
    if (f.uuid !== undefined && p.uuid !== f.uuid) return false;
    if (root !== undefined && p.root !== root) return false;
    if (f.traits && !matchesTraits(p, f.traits)) return false;
    if (f.aggregates && !matchesAggregates(p.aggregates, f.aggregates)) return false;
    if (f.resources) for (const [rc, n] of Object.entries(f.resources)) if (!hasCapacity(p, rc, n)) return false;
    return true;
  };
  const subset = narrowest(forest, f, root);
  if (!subset) return forest.all().filter(keep);
  const out: ProviderRecord[] = [];
  for (const u of subset) {
    const p = forest.get(u);
    if (p && keep(p)) out.push(p);
  }
  return out.sort((a, b) => a.seq - b.seq || (a.uuid < b.uuid ? -1 : 1));
}
