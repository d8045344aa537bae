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
 * here from the state itself, so the items always agree with each other.
 */
import type { ConsumerRecord } from './consumers.js';
import { type Inventory, type ProviderRecord, providerRecord } from './model.js';
import { isStandardResourceClass, isStandardTrait } from './standard.js';
import { sameInventories } from './managed.js';

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

/**
 * Sequences for `order` that keep it (strictly increasing), keeping every existing
 * sequence that already does: a name the source lists after another gets a larger
 * number. New names (and the few an out-of-order existing one forces to move) get the
 * previous one's + 1; the first of all `base`.
 */
export function monotoneSeqs(order: readonly string[], existing: ReadonlyMap<string, number>, base: number): Map<string, number> {
  const out = new Map<string, number>();
  let prev: number | undefined;
  for (const k of order) {
    if (out.has(k)) continue;
    const s = existing.get(k);
    const v = s !== undefined && (prev === undefined || s > prev) ? s : prev === undefined ? base : prev + 1;
    out.set(k, v);
    prev = v;
  }
  return out;
}

/**
 * One order of every aggregate that keeps each provider's list (upstream lists a
 * provider's aggregates by the aggregate's id: its first sighting, so the lists agree
 * with one global order): a topological order of "comes before in some list", ties
 * (and, should lists disagree, a cycle) broken by the existing sequence, then by first
 * appearance.
 */
export function aggregateOrder(lists: Iterable<readonly string[]>, existing: ReadonlyMap<string, number>): string[] {
  const first = new Map<string, number>();
  const after = new Map<string, Set<string>>();
  const indegree = new Map<string, number>();
  for (const l of lists) {
    for (let i = 0; i < l.length; i++) {
      const a = l[i]!;
      if (!first.has(a)) {
        first.set(a, first.size);
        indegree.set(a, 0);
        after.set(a, new Set());
      }
      if (i > 0) {
        const b = l[i - 1]!;
        if (b !== a && !after.get(b)!.has(a)) {
          after.get(b)!.add(a);
          indegree.set(a, indegree.get(a)! + 1);
        }
      }
    }
  }
  const rank = (a: string): [number, number] => [existing.get(a) ?? Number.POSITIVE_INFINITY, first.get(a)!];
  const less = (a: string, b: string) => {
    const [sa, fa] = rank(a);
    const [sb, fb] = rank(b);
    return sa < sb || (sa === sb && fa < fb);
  };
  const heap = new MinHeap<string>(less);
  for (const [a, d] of indegree) if (d === 0) heap.push(a);
  const out: string[] = [];
  const done = new Set<string>();
  while (out.length < first.size) {
    let a = heap.pop();
    if (a === undefined) {
      // a cycle (lists that disagree): take the best-ranked aggregate left
      a = [...first.keys()].filter((x) => !done.has(x)).reduce((x, y) => (less(y, x) ? y : x));
    }
    if (done.has(a)) continue;
    done.add(a);
    out.push(a);
    for (const b of after.get(a)!) {
      const d = indegree.get(b)! - 1;
      indegree.set(b, d);
      if (d === 0 && !done.has(b)) heap.push(b);
    }
  }
  return out;
}

class MinHeap<T> {
  private xs: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}
  push(x: T): void {
    const xs = this.xs;
    xs.push(x);
    for (let i = xs.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.less(xs[i]!, xs[p]!)) break;
      [xs[i], xs[p]] = [xs[p]!, xs[i]!];
      i = p;
    }
  }
  pop(): T | undefined {
    const xs = this.xs;
    if (!xs.length) return undefined;
    const top = xs[0];
    const last = xs.pop()!;
    if (xs.length) {
      xs[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < xs.length && this.less(xs[l]!, xs[m]!)) m = l;
        if (r < xs.length && this.less(xs[r]!, xs[m]!)) m = r;
        if (m === i) break;
        [xs[i], xs[m]] = [xs[m]!, xs[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** What a pass noticed that makes its state provisional (a final pass must have none). */
export interface PassNotes {
  /** providers that changed while they were read, or vanished after the list was read */
  unsettled: string[];
  /** consumers read naming a provider the list did not show (left out this pass) */
  deferred: string[];
  /** names the source lists as standard that Berth does not know (kept as catalog items) */
  unknownStandard: string[];
}

export interface PassOutcome {
  state: PlacementState;
  notes: PassNotes;
}

/** Where a provider's parent chain is broken: a parent the list does not show, or a cycle. */
export class InconsistentList extends Error {}

/**
 * The state a pass leaves: the source's list of providers (their content as read, or
 * as the state had it when their generation did not move), the consumers as read over
 * those the state had, and everything derived from both.
 */
export function nextState(prev: PlacementState, read: PassRead, opts: { now: string; seqBase: number }): PassOutcome {
  const notes: PassNotes = { unsettled: [], deferred: [], unknownStandard: [] };
  const listed = new Map(read.list.map((p) => [p.uuid, p]));
  for (const [u, r] of read.providers) {
    const p = listed.get(u);
    if (p && (r.gone || r.generations.some((g) => g !== p.generation))) notes.unsettled.push(u);
  }

  // consumers: the state's, with what was read over them; none may name a provider
  // the list does not show (a consumer read after a provider was created or deleted:
  // left out, and read again next pass, where it shows on a changed provider)
  const consumers = new Map(prev.consumers);
  for (const [c, src] of read.consumers) {
    if (src === null) consumers.delete(c);
    else
      consumers.set(c, {
        uuid: c,
        project: src.project,
        user: src.user,
        type: src.type,
        generation: src.generation,
        allocations: src.allocations,
        createdAt: prev.consumers.get(c)?.createdAt ?? opts.now,
        updatedAt: prev.consumers.get(c)?.updatedAt ?? opts.now,
      });
  }
  for (const [c, rec] of consumers) {
    if (Object.keys(rec.allocations).every((rp) => listed.has(rp))) continue;
    consumers.delete(c);
    notes.deferred.push(c);
  }

  // roots and child counts from the parent links (the list is one snapshot)
  const roots = new Map<string, string>();
  const rootOf = (u: string, seen: Set<string> = new Set()): string => {
    const known = roots.get(u);
    if (known) return known;
    if (seen.has(u)) throw new InconsistentList(`provider ${u} is its own ancestor in the source's list`);
    seen.add(u);
    const p = listed.get(u)!;
    if (p.parent !== undefined && !listed.has(p.parent))
      throw new InconsistentList(`provider ${u} names parent ${p.parent}, which the source's list does not show`);
    const r = p.parent === undefined ? u : rootOf(p.parent, seen);
    roots.set(u, r);
    return r;
  };
  const children = new Map<string, number>();
  for (const p of read.list) {
    rootOf(p.uuid);
    if (p.parent !== undefined) children.set(p.parent, (children.get(p.parent) ?? 0) + 1);
  }

  // usage from the consumers
  const used = new Map<string, Record<string, number>>();
  const allocs = new Map<string, number>();
  for (const c of consumers.values()) {
    for (const [rp, res] of Object.entries(c.allocations)) {
      allocs.set(rp, (allocs.get(rp) ?? 0) + 1);
      let u = used.get(rp);
      if (!u) used.set(rp, (u = {}));
      for (const [rc, n] of Object.entries(res)) u[rc] = (u[rc] ?? 0) + n;
    }
  }

  const seqs = monotoneSeqs(
    read.list.map((p) => p.uuid),
    new Map([...prev.providers].map(([u, r]) => [u, r.seq])),
    opts.seqBase,
  );
  const providers = new Map<string, ProviderRecord>();
  for (const p of read.list) {
    const had = prev.providers.get(p.uuid);
    const r = read.providers.get(p.uuid);
    const inventories = r?.inventories ?? had?.inventories ?? {};
    const invChanged = !had || !sameInventories(had.inventories, inventories);
    providers.set(
      p.uuid,
      providerRecord({
        uuid: p.uuid,
        name: p.name,
        generation: p.generation,
        parent: p.parent,
        root: roots.get(p.uuid)!,
        inventories,
        invVersion: had ? had.invVersion + (invChanged ? 1 : 0) : Object.keys(inventories).length ? 1 : 0,
        usages: used.get(p.uuid) ?? {},
        traits: r?.traits ?? had?.traits ?? [],
        aggregates: r?.aggregates ?? had?.aggregates ?? [],
        children: children.get(p.uuid) ?? 0,
        allocationCount: allocs.get(p.uuid) ?? 0,
        createdAt: had?.createdAt ?? opts.now,
        updatedAt: had?.updatedAt ?? opts.now,
        seq: seqs.get(p.uuid)!,
      }),
    );
  }

  // custom names: the source's (in its order), and any a provider or consumer uses
  // that was created after the lists were read; reference counts from the providers
  const classRefs = new Map<string, number>();
  const traitRefs = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const p of providers.values()) {
    for (const rc of Object.keys(p.inventories)) if (!isStandardResourceClass(rc)) bump(classRefs, rc);
    for (const t of p.traits) if (!isStandardTrait(t)) bump(traitRefs, t);
  }
  const usedClasses = new Set<string>();
  for (const c of consumers.values()) for (const res of Object.values(c.allocations)) for (const rc of Object.keys(res)) usedClasses.add(rc);
  const catalog = (
    source: readonly string[],
    referenced: Iterable<string>,
    refs: Map<string, number>,
    had: ReadonlyMap<string, CatalogEntry>,
    standard: (n: string) => boolean,
  ): Map<string, CatalogEntry> => {
    const names = [...new Set([...source.filter((n) => !standard(n)), ...[...referenced].filter((n) => !standard(n))])];
    for (const n of names) if (!n.startsWith('CUSTOM_')) notes.unknownStandard.push(n);
    const s = monotoneSeqs(names, new Map([...had].map(([n, e]) => [n, e.seq])), opts.seqBase);
    return new Map(
      names.map((n) => [
        n,
        { name: n, refs: refs.get(n) ?? 0, createdAt: had.get(n)?.createdAt ?? opts.now, updatedAt: had.get(n)?.updatedAt, seq: s.get(n)! },
      ]),
    );
  };
  const classes = catalog(read.classes, [...classRefs.keys(), ...usedClasses], classRefs, prev.classes, isStandardResourceClass);
  const traits = catalog(read.traits, traitRefs.keys(), traitRefs, prev.traits, isStandardTrait);

  // aggregates: every one a provider has, in an order that keeps each provider's list;
  // aggregates no provider has any more keep their items (never deleted, as upstream)
  const order = aggregateOrder(
    [...providers.values()].map((p) => p.aggregates),
    prev.aggregates,
  );
  const aggregates = new Map(prev.aggregates);
  for (const [a, s] of monotoneSeqs(order, prev.aggregates, opts.seqBase)) aggregates.set(a, s);

  return { state: { providers, consumers, classes, traits, aggregates }, notes };
}

// ------------------------------------------------------------------ moving out

/**
 * Providers in an order an empty Placement accepts them in (a parent before its
 * children), otherwise as `providers` come (their creation order).
 */
export function parentsFirst(providers: readonly ProviderRecord[]): ProviderRecord[] {
  const byUuid = new Map(providers.map((p) => [p.uuid, p]));
  const done = new Set<string>();
  const out: ProviderRecord[] = [];
  const visit = (p: ProviderRecord, path: Set<string>) => {
    if (done.has(p.uuid)) return;
    if (path.has(p.uuid)) throw new InconsistentList(`provider ${p.uuid} is its own ancestor`);
    path.add(p.uuid);
    const parent = p.parent !== undefined ? byUuid.get(p.parent) : undefined;
    if (parent) visit(parent, path);
    done.add(p.uuid);
    out.push(p);
  };
  for (const p of providers) visit(p, new Set());
  return out;
}

/**
 * The inventory a provider needs while its allocations are written back, when its own
 * does not take them (Placement accepts an inventory change that leaves usage above
 * capacity, or outside min_unit / max_unit / step_size, but not an allocation that
 * does): each such class widened just enough. Undefined when the real one takes them.
 */
export function inventoryForAllocations(
  inventories: Readonly<Record<string, Inventory>>,
  allocations: Iterable<Readonly<Record<string, number>>>,
): Record<string, Inventory> | undefined {
  const used: Record<string, number> = {};
  const largest: Record<string, number> = {};
  const smallest: Record<string, number> = {};
  const offStep = new Set<string>();
  for (const res of allocations) {
    for (const [rc, n] of Object.entries(res)) {
      used[rc] = (used[rc] ?? 0) + n;
      largest[rc] = Math.max(largest[rc] ?? 0, n);
      smallest[rc] = Math.min(smallest[rc] ?? Number.POSITIVE_INFINITY, n);
      const inv = inventories[rc];
      if (inv && n % inv.step_size !== 0) offStep.add(rc);
    }
  }
  let widened: Record<string, Inventory> | undefined;
  for (const [rc, inv] of Object.entries(inventories)) {
    if (used[rc] === undefined) continue;
    const capacity = Math.trunc((inv.total - inv.reserved) * inv.allocation_ratio);
    const fits = used[rc]! <= capacity && largest[rc]! <= inv.max_unit && smallest[rc]! >= inv.min_unit && !offStep.has(rc);
    if (fits) continue;
    widened ??= { ...inventories };
    widened[rc] = {
      total: Math.max(inv.total, used[rc]! + inv.reserved),
      reserved: inv.reserved,
      min_unit: Math.min(inv.min_unit, smallest[rc]!),
      max_unit: Math.max(inv.max_unit, largest[rc]!),
      step_size: offStep.has(rc) ? 1 : inv.step_size,
      allocation_ratio: Math.max(inv.allocation_ratio, 1),
    };
  }
  return widened;
}
