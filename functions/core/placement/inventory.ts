/**
 * Inventory rules (placement/handlers/inventory.py, placement/objects/inventory.py and
 * the inventory parts of objects/resource_provider.py), pure: defaults, capacity, the
 * per-microversion capacity check, what a change does to a provider's inventory map,
 * and the representation. No I/O; the store applies the result atomically.
 */
import { INVENTORY_DEFAULTS, type Inventory } from './model.js';
import { pyFloat, type PyFloat } from '../compat/pyfloat.js';

export const MAX_INT = 0x7fffffff;
/** db_const.SQL_SP_FLOAT_MAX: the schema's maximum for allocation_ratio */
export const SQL_SP_FLOAT_MAX = 3.40282e38;

export const INVENTORY_FIELDS = ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const;

export type InventoryInput = Partial<Inventory> & { total: number };

/** handlers.inventory._extract_inventory: INVENTORY_DEFAULTS overlaid with the request's fields. */
export function withDefaults(data: InventoryInput): Inventory {
  const out: Inventory = { total: data.total, ...INVENTORY_DEFAULTS };
  for (const f of INVENTORY_FIELDS) if (data[f] !== undefined) out[f] = data[f]!;
  return out;
}

/** Inventory.capacity: int((total - reserved) * allocation_ratio) */
export function inventoryCapacity(inv: Inventory): number {
  return Math.trunc((inv.total - inv.reserved) * inv.allocation_ratio);
}

/**
 * handlers.inventory._validate_inventory_capacity: before 1.26 capacity must be > 0,
 * from 1.26 >= 0 (reserved may equal total). Returns the exception text of the first
 * invalid inventory (in request order), or undefined.
 */
export function capacityError(providerUuid: string, inventories: Iterable<[string, Inventory]>, reservedMayEqualTotal: boolean): string | undefined {
  for (const [rc, inv] of inventories) {
    const cap = inventoryCapacity(inv);
    if (reservedMayEqualTotal ? cap < 0 : cap <= 0) {
      const why = reservedMayEqualTotal ? 'greater than total' : 'greater than or equal to total';
      return `Invalid inventory for '${rc}' on resource provider '${providerUuid}'. The reserved value is ${why}.`;
    }
  }
  return undefined;
}

/** exception.InventoryInUse */
export function inventoryInUseMessage(classes: string[], providerUuid: string): string {
  return `Inventory for '${classes.join(', ')}' on resource provider '${providerUuid}' in use.`;
}

/** What one inventory write does to a provider's inventory map. */
export type InventoryChange =
  /** PUT /inventories (and DELETE /inventories = replace with {}) */
  | { kind: 'replace'; inventories: Record<string, Inventory> }
  /** POST /inventories */
  | { kind: 'add'; resourceClass: string; inventory: Inventory }
  /** PUT /inventories/{rc} */
  | { kind: 'update'; resourceClass: string; inventory: Inventory }
  /** DELETE /inventories/{rc} */
  | { kind: 'delete'; resourceClass: string };

export type InventoryChangeFailure =
  /** add: the class already has inventory on this provider */
  | { error: 'exists'; resourceClass: string }
  /** update / delete: the class has no inventory on this provider */
  | { error: 'absent'; resourceClass: string };

/** The provider's inventory map after `change`, or why the change does not apply. */
export function applyInventoryChange(
  current: Record<string, Inventory>,
  change: InventoryChange,
): { inventories: Record<string, Inventory> } | InventoryChangeFailure {
  switch (change.kind) {
    case 'replace':
      return { inventories: { ...change.inventories } };
    case 'add':
      if (Object.hasOwn(current, change.resourceClass)) return { error: 'exists', resourceClass: change.resourceClass };
      return { inventories: { ...current, [change.resourceClass]: change.inventory } };
    case 'update':
      if (!Object.hasOwn(current, change.resourceClass)) return { error: 'absent', resourceClass: change.resourceClass };
      return { inventories: { ...current, [change.resourceClass]: change.inventory } };
    case 'delete': {
      if (!Object.hasOwn(current, change.resourceClass)) return { error: 'absent', resourceClass: change.resourceClass };
      const next = { ...current };
      delete next[change.resourceClass];
      return { inventories: next };
    }
  }
}

/** Classes whose inventory goes away (deleting those with usage is refused). */
export function removedClasses(before: Record<string, Inventory>, after: Record<string, Inventory>): string[] {
  return Object.keys(before).filter((rc) => !Object.hasOwn(after, rc));
}

/** Classes that get inventory they did not have (they must exist). */
export function addedClasses(before: Record<string, Inventory>, after: Record<string, Inventory>): string[] {
  return Object.keys(after).filter((rc) => !Object.hasOwn(before, rc));
}

/** Classes of `removed` that have allocations against them (used > 0). */
export function classesInUse(removed: string[], usages: Record<string, number>): string[] {
  return removed.filter((rc) => (usages[rc] ?? 0) > 0);
}

/** handlers.inventory._serialize_inventory (the generation only when truthy, as upstream) */
/**
 * handlers.inventory._serialize_inventory. allocation_ratio is a Python float: a stored
 * one prints as such (`1.0`, `16.0`: render with pyJson); an echo of the client's own
 * request prints the value Python parsed, an int where the client sent `16`
 * (`ratioIsFloat` false).
 */
export function inventoryView(inv: Inventory, generation?: number, ratioIsFloat = true): Record<string, number | PyFloat> {
  const out: Record<string, number | PyFloat> = {};
  for (const f of INVENTORY_FIELDS) out[f] = inv[f];
  if (ratioIsFloat) out.allocation_ratio = pyFloat(inv.allocation_ratio);
  if (generation) out.resource_provider_generation = generation;
  return out;
}

/** handlers.inventory._serialize_inventories: in the given key order (stored: Placement's class order; an echo: the request's) */
export function inventoriesView(
  inventories: Record<string, Inventory>,
  generation: number,
  ratioIsFloat: (rc: string) => boolean = () => true,
): Record<string, unknown> {
  const out: Record<string, Record<string, number | PyFloat>> = {};
  for (const [rc, inv] of Object.entries(inventories)) out[rc] = inventoryView(inv, undefined, ratioIsFloat(rc));
  return { resource_provider_generation: generation, inventories: out };
}
