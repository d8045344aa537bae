/** Placement's data model as the domain core sees it (no storage concerns). */

export interface Inventory {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

export interface ProviderRecord {
  uuid: string;
  name: string;
  generation: number;
  /** parent provider uuid; undefined for a root */
  parent?: string;
  root: string;
  inventories: Record<string, Inventory>;
  /** bumped on every inventory change; claims are conditioned on it */
  invVersion: number;
  /** resource class -> amount allocated */
  usages: Record<string, number>;
  traits: string[];
  aggregates: string[];
  /** number of child providers */
  children: number;
  /** number of consumers with allocations against this provider */
  allocationCount: number;
  createdAt: string;
  updatedAt: string;
  /** creation order (upstream lists providers by internal id) */
  seq: number;
}

export const INVENTORY_DEFAULTS: Omit<Inventory, 'total'> = {
  reserved: 0,
  min_unit: 1,
  max_unit: 2147483647,
  step_size: 1,
  allocation_ratio: 1.0,
};

/** (total - reserved) * allocation_ratio, as Placement's SQL computes it */
export function capacity(inv: Inventory): number {
  return (inv.total - inv.reserved) * inv.allocation_ratio;
}

/** Would `amount` more of this inventory fit, honouring min/max unit and step size? */
export function fits(inv: Inventory, used: number, amount: number): boolean {
  return used + amount <= capacity(inv) && inv.min_unit <= amount && inv.max_unit >= amount && amount % inv.step_size === 0;
}
