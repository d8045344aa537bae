/**
 * Providers and consumers managed elsewhere (docs/baremetal.md, "Bare metal through
 * Placement"), pure: another API of the same table writes them, in the same transactions
 * as its own objects, and Placement's own writes may not change what follows them.
 * Placement knows the mark, these rules and how its answers name the manager; the manager
 * (functions/bridge/: the bare-metal API with BAREMETAL_SCHEDULER=placement) imports
 * them, never the other way round.
 *
 *   provider  its state item names the object that manages it (store/placement/
 *             provider-items.ts MANAGED_BY): its inventory, traits, aggregates and its
 *             existence follow that object; claims against it are Placement's business
 *   consumer  of type MANAGED_CONSUMER_TYPE: written by its manager alone while the
 *             manager runs (every such consumer is one of the manager's objects)
 */
import type { Inventory } from './model.js';

/** the consumer type of the consumers a manager writes (a bare-metal allocation's) */
export const MANAGED_CONSUMER_TYPE = 'BAREMETAL';

/** A write Placement refuses because its object is managed elsewhere (409). */
export type ManagedRefusal = { error: 'managed_elsewhere'; detail: string };

/** What a Placement write would change of a managed provider. */
export type ManagedAspect = 'inventory' | 'traits' | 'aggregates';

const ACTION: Record<ManagedAspect | 'existence', string> = {
  inventory: 'change the inventory of',
  traits: 'change the traits of',
  aggregates: 'change the aggregates of',
  existence: 'delete',
};

/**
 * Placement's 409 detail for a write to a provider managed elsewhere (`by`: the managing
 * object, a bare-metal node): the provider follows it, only claims come through Placement.
 */
export function managedProviderRefusal(rp: string, by: string, what: ManagedAspect | 'existence'): string {
  return `Unable to ${ACTION[what]} resource provider ${rp}: it is bare-metal node ${by}, whose provider follows the node (inventory, traits, aggregates, existence). Change the node through the bare-metal API.`;
}

/** Placement's 409 detail for a write to a consumer managed elsewhere. */
export function managedConsumerRefusal(consumer: string): string {
  return `Unable to change the allocations of consumer ${consumer}: it is a bare-metal allocation (consumer type ${MANAGED_CONSUMER_TYPE}). Release it through the bare-metal API.`;
}

/**
 * A Placement write naming a consumer managed elsewhere, or giving a consumer that type, is
 * refused: its manager writes those consumers in the same transactions as its own objects
 * (only while the manager runs; the caller asks).
 */
export function managedConsumerProblem(
  requests: ReadonlyArray<{ uuid: string; type?: string }>,
  states: ReadonlyMap<string, { record?: { type?: string | null } }>,
): ManagedRefusal | undefined {
  for (const r of requests) {
    if (states.get(r.uuid)?.record?.type === MANAGED_CONSUMER_TYPE || r.type === MANAGED_CONSUMER_TYPE) {
      return { error: 'managed_elsewhere', detail: managedConsumerRefusal(r.uuid) };
    }
  }
  return undefined;
}

/** What a change of a provider's inventory, traits or aggregates changes (undefined: nothing). */
export function changedAspect(
  cur: { inventories: Readonly<Record<string, Inventory>>; traits: readonly string[]; aggregates: readonly string[] },
  next: { inventories?: Readonly<Record<string, Inventory>>; traits?: readonly string[]; aggregates?: readonly string[] },
): ManagedAspect | undefined {
  if (next.inventories !== undefined && !sameInventories(cur.inventories, next.inventories)) return 'inventory';
  if (next.traits !== undefined && !sameSet(cur.traits, next.traits)) return 'traits';
  if (next.aggregates !== undefined && !sameSet(cur.aggregates, next.aggregates)) return 'aggregates';
  return undefined;
}

/** A reshape may not change the inventory of a provider managed elsewhere. */
export function managedInventoryProblem(
  replacements: ReadonlyArray<{ provider: string; inventories: Readonly<Record<string, Inventory>> }>,
  providers: ReadonlyMap<string, { inventories: Readonly<Record<string, Inventory>>; managedBy?: string }>,
): ManagedRefusal | undefined {
  for (const r of replacements) {
    const p = providers.get(r.provider);
    if (p?.managedBy && !sameInventories(p.inventories, r.inventories)) {
      return { error: 'managed_elsewhere', detail: managedProviderRefusal(r.provider, p.managedBy, 'inventory') };
    }
  }
  return undefined;
}

/** Two inventory maps say the same (every field of every class). */
export function sameInventories(a: Readonly<Record<string, Inventory>>, b: Readonly<Record<string, Inventory>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((rc) => {
    const x = a[rc]!;
    const y = b[rc];
    return (
      !!y &&
      x.total === y.total &&
      x.reserved === y.reserved &&
      x.min_unit === y.min_unit &&
      x.max_unit === y.max_unit &&
      x.step_size === y.step_size &&
      x.allocation_ratio === y.allocation_ratio
    );
  });
}

/** Two lists hold the same names (as sets). */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}
