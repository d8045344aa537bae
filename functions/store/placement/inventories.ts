/**
 * Inventory writes: one generation-guarded transaction (provider-writes.ts) that sets the
 * provider's whole inventory map; its items and conditions are written down once, in
 * docs/consistency.md, "Which condition guards which write" (provider writes).
 * New capacity below current usage is allowed, as upstream does (it only logs).
 */
import type { Inventory, ProviderRecord } from '../../core/placement/model.js';
import { addedClasses, classesInUse, removedClasses } from '../../core/placement/inventory.js';
import { missingResourceClasses } from './catalog.js';
import { diffRefs } from './refs.js';
import { guardedProviderWrite, type GuardedWriteFailure, type GuardedWriteOptions } from './provider-writes.js';

export type InventoryWriteFailure =
  | GuardedWriteFailure
  /** inventory of these classes would go away but has allocations */
  | { error: 'in_use'; classes: string[] }
  /** a class that is neither standard nor an existing custom class */
  | { error: 'unknown_class'; name: string };

/**
 * Replace a provider's inventory with what `plan` computes from its current state.
 * `plan` may refuse with its own failure (returned as is). Returns the provider as
 * written (new generation) or a failure; nothing is written on failure.
 */
export async function writeInventories<F extends { error: string }>(
  uuid: string,
  opts: GuardedWriteOptions,
  plan: (cur: ProviderRecord) => { inventories: Record<string, Inventory> } | F,
): Promise<ProviderRecord | F | InventoryWriteFailure> {
  return guardedProviderWrite<F | InventoryWriteFailure>(uuid, opts, async (cur) => {
    const next = plan(cur);
    if (!('inventories' in next)) return next;
    const inv = next.inventories;
    const missing = await missingResourceClasses(addedClasses(cur.inventories, inv));
    if (missing.length) return { error: 'unknown_class', name: missing[0]! };
    const removed = removedClasses(cur.inventories, inv);
    const inUse = classesInUse(removed, cur.usages);
    if (inUse.length) return { error: 'in_use', classes: inUse };
    return {
      set: { inv },
      bumpGeneration: true,
      bumpInvVersion: true,
      // inventory that goes away has no allocations, whatever raced us
      condition: (e) => {
        for (const rc of removed) e.when(e.atMost(['used', rc], 0));
      },
      refs: diffRefs('resource_class', Object.keys(cur.inventories), Object.keys(inv)),
      next: { ...cur, inventories: inv },
    };
  });
}
