/**
 * The in-memory provider forest: every provider with its inventories, usages,
 * traits, aggregates and tree links, plus the indexes queries need (by resource
 * class, trait, aggregate, tree, parent). The store keeps one warm per process and
 * feeds it changes; provider listing and the allocation-candidates solver read it.
 * Pure data structure: no I/O.
 *
 * Sized for a million providers in one Lambda (docs/consistency.md, "Memory at a million providers"): records
 * share what providers have in common — an inventory definition, a trait set, an
 * aggregate set, the uuid strings their parent and root name — through interning
 * (`Interner`), so a record holds little more than its uuid, name, counters and usage;
 * a one-provider tree needs no tree index entry; creation order is kept by binary
 * search instead of position maps. Records are immutable: a change puts a new record.
 *
 * The index entries are in forest-index.ts, the interner in forest-interner.ts.
 */
import { type Inventory, PROVIDER_FIELDS, type ProviderRecord, providerRecord } from './model.js';
import { addTo, bulkIndex, groupPush, IdSet, newIdSet, newSet, removeFrom } from './forest-index.js';
import { Interner } from './forest-interner.js';

/**
 * V8 gives every object literal with the same properties in the same order one hidden
 * class, and each field of it the narrowest representation the values stored so far
 * allow (a small integer, a double, an object of one shape). A later record that stores
 * a wider value widens the field, which deprecates the hidden class of every record made
 * before: V8 then migrates each of them on its next access, allocating as it goes. A
 * million records loaded from an image, then a delta decoded into the forest, made the
 * next request that walked them all 3 s slower (the coldstart bench: a fresh process's
 * first candidates answer 7.4-9.9 s instead of ~4 s). These records, made once before any
 * real one (every record is made by model.ts providerRecord()), give every field its widest representation
 * from the start, so no record can widen it later. Kept alive: an unused hidden class
 * may be collected, and the next record would start narrow again.
 */
const WIDEST_SHAPE: readonly unknown[] = [undefined, 'x', 0.5, 1, {}, []].map((v) =>
  providerRecord(Object.fromEntries(PROVIDER_FIELDS.map((f) => [f, v])) as unknown as ProviderRecord),
);

let forestIds = 0;

const bySeqThenUuid = (a: ProviderRecord, b: ProviderRecord) => a.seq - b.seq || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0);

/** Index of `p` (by seq, then uuid) in a list sorted that way, or -1. */
function positionOf(list: readonly ProviderRecord[], p: ProviderRecord): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = bySeqThenUuid(list[mid]!, p);
    if (c === 0) return list[mid]!.uuid === p.uuid ? mid : -1;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export class Forest {
  /** (holds WIDEST_SHAPE for as long as forests exist) */
  static readonly recordShapes = WIDEST_SHAPE;
  /** unique in the process: (id, version) names one state of one forest */
  readonly id = ++forestIds;
  readonly providers = new Map<string, ProviderRecord>();
  byResourceClass = new Map<string, IdSet>();
  byTrait = new Map<string, IdSet>();
  byAggregate = new Map<string, IdSet>();
  /** the members of every tree with more than one provider (a lone root is its own tree) */
  readonly byRoot = new Map<string, Set<string>>();
  readonly childrenOf = new Map<string, Set<string>>();
  readonly intern = new Interner();
  /** bumped on every change: lets callers cache derived results */
  version = 0;
  private sorted: ProviderRecord[] | undefined;
  private rootList: ProviderRecord[] | undefined;

  get size(): number {
    return this.providers.size;
  }

  get(uuid: string): ProviderRecord | undefined {
    return this.providers.get(uuid);
  }

  /** The members of the tree rooted at `root` (just the root for a one-provider tree; empty if unknown). */
  treeIds(root: string): ReadonlySet<string> {
    const s = this.byRoot.get(root);
    if (s) return s;
    return this.providers.has(root) ? new Set([root]) : EMPTY;
  }

  /** The record as the forest keeps it: shared parts interned, tree links pointing at canonical uuid strings. */
  compact(p: ProviderRecord): ProviderRecord {
    const uuidOf = (u: string | undefined) => (u === undefined ? undefined : u === p.uuid ? p.uuid : (this.providers.get(u)?.uuid ?? u));
    return providerRecord({
      ...p,
      parent: uuidOf(p.parent),
      root: uuidOf(p.root)!,
      inventories: this.intern.inventory(p.inventories) as Record<string, Inventory>,
      traits: this.intern.list(p.traits) as string[],
      aggregates: this.intern.list(p.aggregates) as string[],
    });
  }

  /**
   * Fill an empty forest with records that are already compact (their shared parts come
   * from this forest's interner and their links are canonical: decodeForest), in creation
   * order — the cold-start path, which skips per-record interning and sorting.
   */
  loadCompacted(records: ProviderRecord[]): void {
    if (this.providers.size) throw new Error('loadCompacted needs an empty forest');
    // the class, trait and aggregate indexes in bulk: providers grouped by their shared
    // (interned) inventory, trait list and aggregate list, each group's uuids handed to
    // every key of that value at once
    const byInv = new Map<Readonly<Record<string, Inventory>>, string[]>();
    const byTraits = new Map<readonly string[], string[]>();
    const byAggs = new Map<readonly string[], string[]>();
    for (const p of records) {
      this.providers.set(p.uuid, p);
      if (p.inventories !== Interner.EMPTY_INV) groupPush(byInv, p.inventories, p.uuid);
      if (p.traits.length) groupPush(byTraits, p.traits, p.uuid);
      if (p.aggregates.length) groupPush(byAggs, p.aggregates, p.uuid);
      this.indexTree(p);
    }
    this.byResourceClass = bulkIndex(byInv, (inv) => Object.keys(inv));
    this.byTrait = bulkIndex(byTraits, (l) => l);
    this.byAggregate = bulkIndex(byAggs, (l) => l);
    this.version++;
    let ordered = true;
    for (let i = 1; i < records.length && ordered; i++) ordered = bySeqThenUuid(records[i - 1]!, records[i]!) < 0;
    this.sorted = ordered ? records.slice() : undefined;
    this.rootList = undefined;
  }

  /** Insert or replace a provider (kept compacted: see compact()). Re-putting an identical record changes nothing. */
  put(record: ProviderRecord): void {
    const p = this.compact(record);
    const old = this.providers.get(p.uuid);
    if (old && sameRecord(old, p)) return;
    // a claim changes usage only: the indexes stay as they are
    const reindex = !old || !sameIndexing(old, p);
    if (old && reindex) this.unindex(old);
    this.providers.set(p.uuid, p);
    if (reindex) this.index(p);
    this.version++;
    if (!old) {
      this.appendSorted(p);
      return;
    }
    if (old.seq !== p.seq) this.sorted = this.rootList = undefined;
    else {
      if (this.sorted) {
        const i = positionOf(this.sorted, old);
        if (i >= 0 && this.sorted[i] === old) this.sorted[i] = p;
        else this.sorted = undefined;
      }
      if (!old.parent !== !p.parent) this.rootList = undefined;
      else if (this.rootList && !p.parent) {
        const i = positionOf(this.rootList, old);
        if (i >= 0 && this.rootList[i] === old) this.rootList[i] = p;
        else this.rootList = undefined;
      }
    }
  }

  /**
   * put() for each of `records`, in order. Providers new to the forest are indexed in bulk
   * (grouped by their shared inventory, trait and aggregate values, each group appended
   * to every entry of its value at once, as loadCompacted() does): a catch-up after a bulk
   * load puts tens of thousands, and one Set insertion per provider and index entry cost
   * more than reading them.
   */
  putMany(records: Iterable<ProviderRecord>): void {
    const byInv = new Map<Readonly<Record<string, Inventory>>, string[]>();
    const byTraits = new Map<readonly string[], string[]>();
    const byAggs = new Map<readonly string[], string[]>();
    const flush = () => {
      for (const [groups, index, keysOf] of [
        [byInv, this.byResourceClass, (v: object) => Object.keys(v)],
        [byTraits, this.byTrait, (v: object) => new Set(v as string[])],
        [byAggs, this.byAggregate, (v: object) => new Set(v as string[])],
      ] as const) {
        for (const [v, uuids] of groups as Map<object, string[]>) {
          for (const k of keysOf(v)) {
            let s = index.get(k);
            if (!s) index.set(k, (s = new IdSet()));
            s.addMany(uuids);
          }
        }
        groups.clear();
      }
    };
    for (const r of records) {
      if (this.providers.has(r.uuid)) {
        // a provider the forest holds (or one this call put): its index entries must be complete first
        flush();
        this.put(r);
        continue;
      }
      const p = this.compact(r);
      this.providers.set(p.uuid, p);
      if (p.inventories !== Interner.EMPTY_INV) groupPush(byInv, p.inventories, p.uuid);
      if (p.traits.length) groupPush(byTraits, p.traits, p.uuid);
      if (p.aggregates.length) groupPush(byAggs, p.aggregates, p.uuid);
      this.indexTree(p);
      this.version++;
      this.appendSorted(p);
    }
    flush();
  }

  /** a new provider normally has the highest seq: append instead of re-sorting */
  private appendSorted(p: ProviderRecord): void {
    const after = (last: ProviderRecord | undefined) => !last || bySeqThenUuid(last, p) < 0;
    if (this.sorted && after(this.sorted[this.sorted.length - 1])) this.sorted.push(p);
    else this.sorted = undefined;
    if (p.parent) return;
    if (this.rootList && after(this.rootList[this.rootList.length - 1])) this.rootList.push(p);
    else this.rootList = undefined;
  }

  delete(uuid: string): void {
    const old = this.providers.get(uuid);
    if (!old) return;
    this.unindex(old);
    this.providers.delete(uuid);
    this.version++;
    this.sorted = this.rootList = undefined;
  }

  private index(p: ProviderRecord) {
    for (const rc of Object.keys(p.inventories)) addTo(this.byResourceClass, rc, p.uuid, newIdSet);
    for (const t of new Set(p.traits)) addTo(this.byTrait, t, p.uuid, newIdSet);
    for (const a of new Set(p.aggregates)) addTo(this.byAggregate, a, p.uuid, newIdSet);
    this.indexTree(p);
  }

  private indexTree(p: ProviderRecord) {
    if (p.root !== p.uuid) {
      // the first member below a root makes the tree worth an index entry
      if (!this.byRoot.has(p.root)) this.byRoot.set(p.root, new Set([p.root]));
      this.byRoot.get(p.root)!.add(p.uuid);
    } else this.byRoot.get(p.uuid)?.add(p.uuid);
    if (p.parent) addTo(this.childrenOf, p.parent, p.uuid, newSet);
  }

  private unindex(p: ProviderRecord) {
    for (const rc of Object.keys(p.inventories)) removeFrom(this.byResourceClass, rc, p.uuid);
    for (const t of new Set(p.traits)) removeFrom(this.byTrait, t, p.uuid);
    for (const a of new Set(p.aggregates)) removeFrom(this.byAggregate, a, p.uuid);
    const tree = this.byRoot.get(p.root);
    if (tree) {
      tree.delete(p.uuid);
      // back to a lone root (or an empty tree): no entry
      if (tree.size === 0 || (tree.size === 1 && tree.has(p.root))) this.byRoot.delete(p.root);
    }
    if (p.parent) removeFrom(this.childrenOf, p.parent, p.uuid);
  }

  /** All providers in creation order. */
  all(): ProviderRecord[] {
    if (!this.sorted) this.sorted = [...this.providers.values()].sort(bySeqThenUuid);
    return this.sorted;
  }

  /** Root providers in creation order. */
  roots(): ProviderRecord[] {
    if (!this.rootList) this.rootList = this.all().filter((p) => !p.parent);
    return this.rootList;
  }

  /** Is any provider nested under another (Placement's `_has_provider_trees`)? */
  hasTrees(): boolean {
    return this.childrenOf.size > 0;
  }

  /** Providers of the tree rooted at `root`. */
  tree(root: string): ProviderRecord[] {
    return [...this.treeIds(root)].map((u) => this.providers.get(u)!).filter(Boolean);
  }

  children(uuid: string): ProviderRecord[] {
    return [...(this.childrenOf.get(uuid) ?? [])].map((u) => this.providers.get(u)!).filter(Boolean);
  }

  /** The provider and all its descendants (depth first). */
  subtree(uuid: string): ProviderRecord[] {
    const out: ProviderRecord[] = [];
    const walk = (u: string) => {
      const p = this.providers.get(u);
      if (!p) return;
      out.push(p);
      for (const c of this.childrenOf.get(u) ?? []) walk(c);
    };
    walk(uuid);
    return out;
  }

  /** Ancestors from the parent up to the root. */
  ancestors(uuid: string): ProviderRecord[] {
    const out: ProviderRecord[] = [];
    let p = this.providers.get(uuid);
    const seen = new Set<string>();
    while (p?.parent && !seen.has(p.parent)) {
      seen.add(p.parent);
      p = this.providers.get(p.parent);
      if (p) out.push(p);
    }
    return out;
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/** Do two compacted records of one provider sit in the same index entries? */
function sameIndexing(a: ProviderRecord, b: ProviderRecord): boolean {
  if (a.traits !== b.traits || a.aggregates !== b.aggregates || a.root !== b.root || a.parent !== b.parent) return false;
  if (a.inventories === b.inventories) return true;
  const ka = Object.keys(a.inventories);
  const kb = Object.keys(b.inventories);
  return ka.length === kb.length && ka.every((k) => k in b.inventories);
}

/** Two compacted records say the same (shared parts compare by identity: the interner made them). */
function sameRecord(a: ProviderRecord, b: ProviderRecord): boolean {
  for (const f of PROVIDER_FIELDS) if (f !== 'usages' && a[f] !== b[f]) return false;
  const ka = Object.keys(a.usages);
  const kb = Object.keys(b.usages);
  return ka.length === kb.length && ka.every((k) => a.usages[k] === b.usages[k]);
}
