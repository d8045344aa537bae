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

/**
 * The one place a provider record is made: every record (read from the table, decoded
 * from an image, compacted into a forest, bulk-loaded, created) comes from this literal,
 * so all of them have their fields in this order and share one V8 hidden class (see
 * forest.ts WIDEST_SHAPE for why that matters at a million records).
 */
export function providerRecord(f: ProviderRecord): ProviderRecord {
  return {
    uuid: f.uuid,
    name: f.name,
    generation: f.generation,
    parent: f.parent,
    root: f.root,
    inventories: f.inventories,
    invVersion: f.invVersion,
    usages: f.usages,
    traits: f.traits,
    aggregates: f.aggregates,
    children: f.children,
    allocationCount: f.allocationCount,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
    seq: f.seq,
  };
}

/** The fields of a provider record, in the order providerRecord() gives them. */
export const PROVIDER_FIELDS = Object.keys(providerRecord({} as ProviderRecord)) as readonly (keyof ProviderRecord)[];

/** A provider as created: no inventory, usage, traits, aggregates or children yet; generation 0. */
export function newProviderRecord(f: Pick<ProviderRecord, 'uuid' | 'name' | 'parent' | 'root' | 'seq'> & { at: string }): ProviderRecord {
  return providerRecord({
    uuid: f.uuid,
    name: f.name,
    generation: 0,
    parent: f.parent,
    root: f.root,
    inventories: {},
    invVersion: 0,
    usages: {},
    traits: [],
    aggregates: [],
    children: 0,
    allocationCount: 0,
    createdAt: f.at,
    updatedAt: f.at,
    seq: f.seq,
  });
}

/**
 * What a claim reads of a provider: the part that allocations change (the store keeps it
 * in its own small item, apart from the name, tree links, traits and aggregates).
 */
export type ProviderState = Pick<ProviderRecord, 'uuid' | 'generation' | 'inventories' | 'invVersion' | 'usages' | 'allocationCount' | 'updatedAt'>;

/** A usage change of one provider, as a claim or a delete makes it (and readers add it up). */
export interface ProviderDelta {
  /** class -> change of the amount allocated (non-zero only) */
  used: Record<string, number>;
  generation: number;
  allocations: number;
  /** the provider's updatedAt after the change */
  updatedAt: string;
}

/** `p` with `d` added: what a reader that holds `p` sees after the change. */
export function withProviderDelta<P extends ProviderState>(p: P, d: ProviderDelta): P {
  const usages = { ...p.usages };
  for (const [rc, n] of Object.entries(d.used)) {
    const v = (usages[rc] ?? 0) + n;
    // a class whose allocations are all gone keeps its entry at 0, as the stored map does
    usages[rc] = v;
  }
  return {
    ...p,
    usages,
    generation: p.generation + d.generation,
    allocationCount: p.allocationCount + d.allocations,
    // ISO timestamps: the later of two strings (Math.max would turn them into NaN)
    // biome-ignore lint/complexity/useMathMinMax: strings, not numbers
    updatedAt: d.updatedAt > p.updatedAt ? d.updatedAt : p.updatedAt,
  };
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
