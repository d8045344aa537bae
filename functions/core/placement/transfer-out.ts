/**
 * Moving Placement's state out of Berth again (the export, cli/export-placement.ts):
 * the order an empty Placement accepts providers in, and the inventory a provider needs
 * while its allocations are written back. Pure.
 */
import type { Inventory, ProviderRecord } from './model.js';
import { InconsistentList } from './transfer.js';

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
