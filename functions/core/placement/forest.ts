/**
 * The in-memory provider forest: every provider with its inventories, usages,
 * traits, aggregates and tree links, plus the indexes queries need (by resource
 * class, trait, aggregate, root, parent). The store keeps one warm per process and
 * feeds it changes; provider listing and the allocation-candidates solver read it.
 * Pure data structure: no I/O.
 */
import type { ProviderRecord } from './model.js';

function addTo(m: Map<string, Set<string>>, k: string, v: string) {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}
function removeFrom(m: Map<string, Set<string>>, k: string, v: string) {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (!s.size) m.delete(k);
}

let forestIds = 0;

export class Forest {
  /** unique in the process: (id, version) names one state of one forest */
  readonly id = ++forestIds;
  readonly providers = new Map<string, ProviderRecord>();
  readonly byResourceClass = new Map<string, Set<string>>();
  readonly byTrait = new Map<string, Set<string>>();
  readonly byAggregate = new Map<string, Set<string>>();
  readonly byRoot = new Map<string, Set<string>>();
  readonly childrenOf = new Map<string, Set<string>>();
  /** bumped on every change: lets callers cache derived results */
  version = 0;
  private sorted: ProviderRecord[] | undefined;
  /** uuid -> position in `sorted` (O(1) in-place replacement) */
  private sortedAt: Map<string, number> | undefined;
  private rootList: ProviderRecord[] | undefined;
  private rootAt: Map<string, number> | undefined;

  get size(): number {
    return this.providers.size;
  }

  get(uuid: string): ProviderRecord | undefined {
    return this.providers.get(uuid);
  }

  /** Insert or replace a provider. */
  put(p: ProviderRecord): void {
    const old = this.providers.get(p.uuid);
    if (old) this.unindex(old);
    this.providers.set(p.uuid, p);
    this.index(p);
    this.version++;
    if (!old) {
      // a new provider normally has the highest seq: append instead of re-sorting
      this.appendSorted(p);
      return;
    }
    if (old.seq !== p.seq) this.sorted = this.sortedAt = undefined;
    else if (this.sorted) {
      const i = this.sortedAt?.get(p.uuid);
      if (i !== undefined && this.sorted[i] === old) this.sorted[i] = p;
      else this.sorted = this.sortedAt = undefined;
    }
    if (old.seq !== p.seq || !old.parent !== !p.parent) this.rootList = this.rootAt = undefined;
    else if (this.rootList && !p.parent) {
      const i = this.rootAt?.get(p.uuid);
      if (i !== undefined && this.rootList[i] === old) this.rootList[i] = p;
      else this.rootList = this.rootAt = undefined;
    }
  }

  private appendSorted(p: ProviderRecord): void {
    const after = (last: ProviderRecord | undefined) => !last || last.seq < p.seq || (last.seq === p.seq && last.uuid < p.uuid);
    if (this.sorted && after(this.sorted[this.sorted.length - 1])) {
      this.sortedAt!.set(p.uuid, this.sorted.length);
      this.sorted.push(p);
    } else this.sorted = this.sortedAt = undefined;
    if (p.parent) return;
    if (this.rootList && after(this.rootList[this.rootList.length - 1])) {
      this.rootAt!.set(p.uuid, this.rootList.length);
      this.rootList.push(p);
    } else this.rootList = this.rootAt = undefined;
  }

  delete(uuid: string): void {
    const old = this.providers.get(uuid);
    if (!old) return;
    this.unindex(old);
    this.providers.delete(uuid);
    this.version++;
    this.sorted = this.sortedAt = undefined;
    this.rootList = this.rootAt = undefined;
  }

  private index(p: ProviderRecord) {
    for (const rc of Object.keys(p.inventories)) addTo(this.byResourceClass, rc, p.uuid);
    for (const t of p.traits) addTo(this.byTrait, t, p.uuid);
    for (const a of p.aggregates) addTo(this.byAggregate, a, p.uuid);
    addTo(this.byRoot, p.root, p.uuid);
    if (p.parent) addTo(this.childrenOf, p.parent, p.uuid);
  }

  private unindex(p: ProviderRecord) {
    for (const rc of Object.keys(p.inventories)) removeFrom(this.byResourceClass, rc, p.uuid);
    for (const t of p.traits) removeFrom(this.byTrait, t, p.uuid);
    for (const a of p.aggregates) removeFrom(this.byAggregate, a, p.uuid);
    removeFrom(this.byRoot, p.root, p.uuid);
    if (p.parent) removeFrom(this.childrenOf, p.parent, p.uuid);
  }

  /** All providers in creation order. */
  all(): ProviderRecord[] {
    if (!this.sorted) {
      this.sorted = [...this.providers.values()].sort((a, b) => a.seq - b.seq || (a.uuid < b.uuid ? -1 : 1));
      this.sortedAt = new Map(this.sorted.map((p, i) => [p.uuid, i]));
    }
    return this.sorted;
  }

  /** Root providers in creation order. */
  roots(): ProviderRecord[] {
    if (!this.rootList) {
      this.rootList = this.all().filter((p) => !p.parent);
      this.rootAt = new Map(this.rootList.map((p, i) => [p.uuid, i]));
    }
    return this.rootList;
  }

  /** Is any provider nested under another (Placement's `_has_provider_trees`)? */
  hasTrees(): boolean {
    return this.childrenOf.size > 0;
  }

  /** Providers of the tree rooted at `root`. */
  tree(root: string): ProviderRecord[] {
    return [...(this.byRoot.get(root) ?? [])].map((u) => this.providers.get(u)!).filter(Boolean);
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
