/**
 * The forest's index entries (forest.ts: the providers with a resource class, a trait or
 * an aggregate, the members of a tree, a provider's children) and how they are built and
 * changed: one by one, or in bulk from providers grouped by a shared value. Pure.
 */

/**
 * The members of one index entry (the providers with a class, a trait or an aggregate):
 * what readers need — size and iteration — without a hash table per entry. A cold load
 * builds `base` in bulk (arrays of uuids, no hashing: a million providers would otherwise
 * cost millions of Set insertions before the first answer); later changes go to two small
 * sets and are folded into `base` when they grow. The forest keeps the invariant this
 * relies on: add() only for a provider not in the entry, delete() only for one in it.
 * Iteration order is not meaningful (readers sort by creation order).
 */
export class IdSet implements Iterable<string> {
  private base: string[];
  private added: Set<string> | undefined;
  private removed: Set<string> | undefined;

  constructor(base: string[] = []) {
    this.base = base;
  }

  get size(): number {
    return this.base.length - (this.removed?.size ?? 0) + (this.added?.size ?? 0);
  }

  add(uuid: string): void {
    if (this.removed?.delete(uuid)) return;
    (this.added ??= new Set()).add(uuid);
    this.foldIfLarge();
  }

  /** add() for each of `uuids` (none of them in the entry): appended to the array, no hashing */
  addMany(uuids: readonly string[]): void {
    for (const u of uuids) if (!this.removed?.delete(u)) this.base.push(u);
  }

  delete(uuid: string): void {
    if (this.added?.delete(uuid)) return;
    (this.removed ??= new Set()).add(uuid);
    this.foldIfLarge();
  }

  *[Symbol.iterator](): Iterator<string> {
    const removed = this.removed;
    if (removed?.size) {
      for (const u of this.base) if (!removed.has(u)) yield u;
    } else yield* this.base;
    if (this.added) yield* this.added;
  }

  /** changes beyond a quarter of the base (and a few hundred): one array again */
  private foldIfLarge(): void {
    const changes = (this.added?.size ?? 0) + (this.removed?.size ?? 0);
    if (changes > 256 && changes * 4 > this.base.length) {
      this.base = [...this];
      this.added = this.removed = undefined;
    }
  }
}

/** An index entry's members, as the forest's readers see them. */
export type Members = Iterable<string> & { readonly size: number };

/** An index entry's members as the forest changes them: an IdSet, or a Set for tree links. */
interface Entry {
  add(uuid: string): unknown;
  delete(uuid: string): unknown;
  readonly size: number;
}

/** the makers of a new entry: an IdSet (class, trait, aggregate), a Set (tree links) */
export const newIdSet = () => new IdSet();
export const newSet = () => new Set<string>();

/** Add `v` to the entry of `k` (made by `make` if there is none). */
export function addTo<S extends Entry>(m: Map<string, S>, k: string, v: string, make: () => S) {
  let s = m.get(k);
  if (!s) m.set(k, (s = make()));
  s.add(v);
}

/** Remove `v` from the entry of `k`, and the entry once it is empty. */
export function removeFrom(m: Map<string, Entry>, k: string, v: string) {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (!s.size) m.delete(k);
}

/** Group uuids by a shared (interned) value, then give every key of a value's group its members in bulk. */
export function bulkIndex<V>(groups: Map<V, string[]>, keysOf: (v: V) => Iterable<string>): Map<string, IdSet> {
  const parts = new Map<string, string[][]>();
  for (const [v, uuids] of groups) {
    for (const k of new Set(keysOf(v))) {
      let l = parts.get(k);
      if (!l) parts.set(k, (l = []));
      l.push(uuids);
    }
  }
  const out = new Map<string, IdSet>();
  for (const [k, l] of parts) out.set(k, new IdSet(l.length === 1 ? l[0]!.slice() : ([] as string[]).concat(...l)));
  return out;
}

/** Append `uuid` to the group of `v`. */
export function groupPush<V>(groups: Map<V, string[]>, v: V, uuid: string) {
  const l = groups.get(v);
  if (l) l.push(uuid);
  else groups.set(v, [uuid]);
}
