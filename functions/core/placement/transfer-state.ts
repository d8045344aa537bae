/**
 * The state an import pass leaves (transfer.ts): the source's providers and consumers as
 * read over the state the table holds, and everything the API derives from them — roots
 * and child counts, usage, custom names and their reference counts, aggregates — derived
 * from the state itself, so the items always agree with each other. Pure.
 */
import { type ProviderRecord, providerRecord } from './model.js';
import { isStandardResourceClass, isStandardTrait } from './standard.js';
import { sameInventories } from './managed.js';
import { type CatalogEntry, InconsistentList, type PassRead, type PlacementState } from './transfer.js';
import { aggregateOrder, monotoneSeqs } from './transfer-order.js';

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
