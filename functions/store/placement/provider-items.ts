/**
 * How a resource provider is stored (docs/items.md, "Items (Placement)"): its two items (`RP`, the
 * definition; `RPU`, the state), their mapping to and from the record, the items a
 * provider adds to an aggregate's sharing list and to its root's tree. No I/O: the
 * reads and transactions are providers.ts's, the bulk tools' and the layout migration's.
 */
import { type ProviderRecord, providerRecord, type ProviderState } from '../../core/placement/model.js';
import { sharedVia } from '../../core/placement/provider-filters.js';
import type { Item } from '../ddb/client.js';
import { K } from './keys.js';
import { Expr } from '../ddb/expr.js';
import type { TxItem } from '../ddb/tx.js';

export const providerKey = K.provider;

let lastSeq = 0;
/**
 * creation order: the ms timestamp scaled by 1,000, strictly increasing within a process
 * (more than a thousand in one millisecond — a request naming 1,000 new aggregates —
 * borrow from the next millisecond's range instead of wrapping around)
 */
export function nextSeq(): number {
  lastSeq = Math.max(lastSeq + 1, Date.now() * 1000);
  return lastSeq;
}

/**
 * A provider is two items in its partition (docs/items.md, "Items (Placement)"): what rarely changes
 * (`RP`: name, tree links, traits, aggregates; in gsi1, which enumerates providers) and
 * what claims change (`RPU`: generation, inventory, usage; in no index, and small, so a
 * claim writes one small item). `updated` is on both: the record's is the later one.
 */
export function defItem(p: ProviderRecord): Record<string, unknown> {
  return {
    ...K.provider(p.uuid),
    ...K.providerIndex(p.uuid),
    type: 'RP',
    uuid: p.uuid,
    name: p.name,
    parent: p.parent,
    root: p.root,
    traits: p.traits,
    aggs: p.aggregates,
    children: p.children,
    created: p.createdAt,
    updated: p.updatedAt,
    seq: p.seq,
  };
}

/** The state item; `last` is the sort key of the change-log entry of its latest write (changelog.ts stateGuard). */
export function stateItem(p: ProviderState, last: string): Record<string, unknown> {
  return {
    ...K.providerState(p.uuid),
    gen: p.generation,
    inv: p.inventories,
    invVer: p.invVersion,
    used: p.usages,
    allocs: p.allocationCount,
    updated: p.updatedAt,
    last,
  };
}

/** Both items of a provider, as createProvider and the bulk loader write them. */
export function toItems(p: ProviderRecord, last: string): Record<string, unknown>[] {
  return [defItem(p), stateItem(p, last)];
}

/**
 * The attribute of a state item that names the object managing the provider elsewhere
 * (core/placement/managed.ts; a bare-metal node, written by functions/bridge/): such a
 * provider follows that object, and Placement writes that would change its inventory,
 * traits or aggregates, or delete it, are refused. Stored as `bm` (layout 2).
 */
export const MANAGED_BY = 'bm';

export type StateRead = ProviderState & {
  last?: string;
  /** the object managing this provider elsewhere (MANAGED_BY), if any */
  managedBy?: string;
};

export function stateFromItem(it: Item): StateRead {
  return {
    ...(it[MANAGED_BY] !== undefined ? { managedBy: String(it[MANAGED_BY]) } : {}),
    uuid: String(it.pk).slice(3),
    generation: Number(it.gen ?? 0),
    inventories: it.inv ?? {},
    invVersion: Number(it.invVer ?? 0),
    usages: it.used ?? {},
    allocationCount: Number(it.allocs ?? 0),
    updatedAt: it.updated,
    last: it.last,
  };
}

/** The record of a provider from its two items (a state item that is missing reads as none of either). */
export function fromItems(def: Item, state: Item | undefined): ProviderRecord {
  const s = state ? stateFromItem(state) : undefined;
  const updated = String(def.updated ?? def.created);
  return providerRecord({
    uuid: def.uuid,
    name: def.name,
    generation: s?.generation ?? 0,
    parent: def.parent ?? undefined,
    root: def.root ?? def.uuid,
    inventories: s?.inventories ?? {},
    invVersion: s?.invVersion ?? 0,
    usages: s?.usages ?? {},
    traits: def.traits ?? [],
    aggregates: def.aggs ?? [],
    children: Number(def.children ?? 0),
    allocationCount: s?.allocationCount ?? 0,
    createdAt: def.created,
    updatedAt: s?.updatedAt && s.updatedAt > updated ? s.updatedAt : updated,
    seq: Number(def.seq ?? 0),
  });
}

/** A provider as read from the table, with its state item's `last` (undefined: no provider). */
export interface ProviderRead {
  record: ProviderRecord;
  last?: string;
  /** the object managing this provider elsewhere (its state item's MANAGED_BY), if any */
  managedBy?: string;
}

/** A provider read from its definition and state items. */
export function readOf(def: Item, state: Item | undefined): ProviderRead {
  const managed = state?.[MANAGED_BY] !== undefined ? { managedBy: String(state[MANAGED_BY]) } : {};
  return { record: fromItems(def, state), last: state?.last, ...managed };
}

// ------------------------------------------------------------------ sharing providers

/**
 * The aggregate partitions' list of sharing providers (K.sharing) as a provider goes from
 * `before` to `after` (undefined: not there): items for aggregates it newly shares
 * through, deletions for those it no longer does.
 */
export function sharingChanges(
  uuid: string,
  before: Pick<ProviderRecord, 'traits' | 'aggregates'> | undefined,
  after: Pick<ProviderRecord, 'traits' | 'aggregates'> | undefined,
): TxItem[] {
  const was = new Set(sharedVia(before));
  const is = new Set(sharedVia(after));
  const out: TxItem[] = [];
  for (const a of is) if (!was.has(a)) out.push(new Expr().putItem({ ...K.sharing(a, uuid), uuid }));
  for (const a of was) if (!is.has(a)) out.push(new Expr().deleteItem(K.sharing(a, uuid)));
  return out;
}

/** the sharing-provider items of bulk-loaded records */
export function sharingItems(records: ProviderRecord[]): Record<string, unknown>[] {
  return records.flatMap((r) => sharedVia(r).map((a) => ({ ...K.sharing(a, r.uuid), uuid: r.uuid })));
}

/** The tree items of bulk-loaded records: each root with descendants and its members. */
export function treeItems(records: ProviderRecord[]): Record<string, unknown>[] {
  const members = new Map<string, Set<string>>();
  for (const r of records) {
    if (r.root === r.uuid) continue;
    let m = members.get(r.root);
    if (!m) members.set(r.root, (m = new Set()));
    m.add(r.uuid);
  }
  return [...members].map(([root, m]) => ({ ...K.providerTree(root), members: m }));
}
