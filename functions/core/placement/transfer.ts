/**
 * Moving a cloud's Placement state into Berth and out again, pure: what an import pass
 * reads of the source again, and the state it leaves — provider records (the model's
 * factory) with the source's uuids, names, parents and generations, consumer records
 * with the source's project, user, type and consumer generation, custom resource
 * classes and traits with their reference counts, aggregates in their first-seen
 * order. The store turns that state into items (store/placement/transfer.ts); the
 * operators' CLI reads the source through its API (cli/placement-api.ts).
 *
 * A pass overlays what it read on the state the table holds (the earlier passes):
 *  - the provider list is read whole every pass (one answer: a consistent snapshot of
 *    every provider's name, parent and generation); a provider whose generation differs
 *    from the one imported, or that is new, is read again whole (inventories, traits,
 *    aggregates, allocations). A final pass also reads every other provider's
 *    aggregates (below 1.19 an aggregate change keeps the generation) and allocations
 *    (DELETE /allocations and a consumer moving away keep the generation);
 *  - a consumer is read again (GET /allocations/{c}) when a provider's allocation list
 *    shows it new, at another consumer generation, with other amounts, or no longer
 *    there;
 *  - the generation recorded for a provider is the one the list showed. A provider that
 *    changed while it was read (a sub-read answered another generation) is left at that
 *    older generation, so the next pass reads it again; a final pass, which runs while
 *    the source is frozen, reports it.
 * Everything the API derives (roots, child counts, usage, reference counts) is derived
 * from the state itself, so the items always agree with each other.
 *
 * This module holds the state and what a pass reads; the state a pass leaves is
 * transfer-state.ts (nextState), the orders it keeps transfer-order.ts, moving out
 * transfer-out.ts.
 */
import type { ConsumerRecord } from './consumers.js';
import type { Inventory, ProviderRecord } from './model.js';

/** A provider as GET /resource_providers lists it. */
export interface ListedProvider {
  uuid: string;
  name: string;
  generation: number;
  /** parent provider (1.14); undefined for a root */
  parent?: string;
}

/** One consumer of a provider's allocation list (GET /resource_providers/{u}/allocations). */
export interface ListedAllocation {
  consumer: string;
  resources: Record<string, number>;
  /** the consumer's generation (1.28); undefined below */
  generation?: number;
}

/** What a pass read of one provider (a part left undefined was not read). */
export interface ProviderRead {
  inventories?: Record<string, Inventory>;
  traits?: string[];
  aggregates?: string[];
  /** the provider's allocations, in the order the source lists them */
  allocations?: ListedAllocation[];
  /** every provider generation the sub-reads answered with */
  generations: number[];
  /** a sub-read found no such provider (deleted after the list was read) */
  gone?: boolean;
}

/** A consumer as GET /allocations/{consumer} shows it: the record without Berth's timestamps (type null: "unknown", and every consumer before 1.38). */
export type SourceConsumer = Omit<ConsumerRecord, 'createdAt' | 'updatedAt'>;

/** A custom resource class or trait as the table keeps it (store/placement/catalog.ts CustomName). */
export interface CatalogEntry {
  name: string;
  refs: number;
  createdAt: string;
  updatedAt?: string;
  seq: number;
}

/** Placement's state as the table holds it (or a pass leaves it). */
export interface PlacementState {
  providers: Map<string, ProviderRecord>;
  consumers: Map<string, ConsumerRecord>;
  /** custom resource classes (and names the source has that Berth does not know as standard) */
  classes: Map<string, CatalogEntry>;
  traits: Map<string, CatalogEntry>;
  /** aggregate -> its first-sighting sequence */
  aggregates: Map<string, number>;
}

export function emptyState(): PlacementState {
  return { providers: new Map(), consumers: new Map(), classes: new Map(), traits: new Map(), aggregates: new Map() };
}

/** What one pass read. */
export interface PassRead {
  /** every provider, in the source's order (creation order: upstream lists by id) */
  list: ListedProvider[];
  /** every resource class and every trait the source lists, in its order */
  classes: string[];
  traits: string[];
  providers: Map<string, ProviderRead>;
  /** consumers read again; null: it holds no allocations any more */
  consumers: Map<string, SourceConsumer | null>;
  /** the allocation lists carry consumer generations (1.28) */
  consumerGenerations: boolean;
}

export interface ReadPlan {
  /** providers to read whole: new, or at another generation */
  full: string[];
  /** providers whose aggregates and allocations a final pass reads again */
  allocationsAndAggregates: string[];
}

/** Which providers a pass reads (see the module comment). */
export function providersForPass(prev: PlacementState, list: readonly ListedProvider[], final: boolean): ReadPlan {
  const full: string[] = [];
  const rest: string[] = [];
  for (const p of list) {
    const had = prev.providers.get(p.uuid);
    if (!had || had.generation !== p.generation) full.push(p.uuid);
    else if (final) rest.push(p.uuid);
  }
  return { full, allocationsAndAggregates: rest };
}

/** provider -> the consumers the state has on it */
export function consumersByProvider(consumers: Iterable<ConsumerRecord>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const c of consumers) {
    for (const rp of Object.keys(c.allocations)) {
      let s = out.get(rp);
      if (!s) out.set(rp, (s = new Set()));
      s.add(c.uuid);
    }
  }
  return out;
}

export function sameResources(a: Readonly<Record<string, number>> | undefined, b: Readonly<Record<string, number>> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b?.[k] === a?.[k]);
}

/**
 * The consumers a pass reads again: on every provider whose allocations it read, those
 * the state does not have, has at another generation (or, below 1.28, every one) or
 * with other amounts there, and those the state has there that the source no longer
 * lists; and every consumer the state has on a provider the source no longer lists.
 */
export function consumersForPass(
  prev: PlacementState,
  list: readonly ListedProvider[],
  read: ReadonlyMap<string, ProviderRead>,
  consumerGenerations: boolean,
): string[] {
  const out = new Set<string>();
  const onProvider = consumersByProvider(prev.consumers.values());
  for (const [rp, r] of read) {
    const had = new Set(onProvider.get(rp) ?? []);
    if (r.gone) {
      for (const c of had) out.add(c);
      continue;
    }
    if (!r.allocations) continue;
    for (const a of r.allocations) {
      had.delete(a.consumer);
      const c = prev.consumers.get(a.consumer);
      if (!c || !consumerGenerations || a.generation !== c.generation || !sameResources(a.resources, c.allocations[rp])) out.add(a.consumer);
    }
    for (const c of had) out.add(c);
  }
  const listed = new Set(list.map((p) => p.uuid));
  for (const [rp, cs] of onProvider) if (!listed.has(rp)) for (const c of cs) out.add(c);
  return [...out];
}

/** Where a provider's parent chain is broken: a parent the list does not show, or a cycle. */
export class InconsistentList extends Error {}
