/**
 * Interning for the forest (forest.ts): one shared, frozen value for what many provider
 * records have in common — an inventory definition, a trait or aggregate list. Pure.
 */
import type { Inventory } from './model.js';

/**
 * Shared, frozen values for what many providers have in common. Entries are never
 * evicted while the forest lives; they are few (distinct inventory definitions, trait
 * and aggregate combinations), and a full reload starts a new forest.
 */
export class Interner {
  private readonly inventories = new Map<string, Readonly<Record<string, Inventory>>>();
  private readonly lists = new Map<string, readonly string[]>();
  /** the values this interner handed out: interning one again costs a lookup, not a key */
  private readonly canonical = new WeakSet<object>();
  static readonly EMPTY_INV: Readonly<Record<string, Inventory>> = Object.freeze({});
  static readonly EMPTY_LIST: readonly string[] = Object.freeze([]);

  inventory(inv: Record<string, Inventory>): Readonly<Record<string, Inventory>> {
    if (this.canonical.has(inv)) return inv;
    const keys = Object.keys(inv);
    if (!keys.length) return Interner.EMPTY_INV;
    let key = '';
    for (const rc of keys) {
      const i = inv[rc]!;
      key += `${rc}:${i.total},${i.reserved},${i.min_unit},${i.max_unit},${i.step_size},${i.allocation_ratio};`;
    }
    let hit = this.inventories.get(key);
    if (!hit) {
      const copy: Record<string, Inventory> = {};
      for (const rc of keys) copy[rc] = Object.freeze({ ...inv[rc]! });
      hit = Object.freeze(copy);
      this.inventories.set(key, hit);
      this.canonical.add(hit);
    }
    return hit;
  }

  /** a list with this content, in this order */
  list(xs: readonly string[]): readonly string[] {
    if (!xs.length) return Interner.EMPTY_LIST;
    if (this.canonical.has(xs)) return xs;
    const key = xs.join('\u0000');
    let hit = this.lists.get(key);
    if (!hit) {
      hit = Object.freeze([...xs]);
      this.lists.set(key, hit);
      this.canonical.add(hit);
    }
    return hit;
  }

  get size(): { inventories: number; lists: number } {
    return { inventories: this.inventories.size, lists: this.lists.size };
  }
}
