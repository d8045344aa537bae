/**
 * Claims: replacing the allocations of one or more consumers (PUT /allocations/{c},
 * POST /allocations, the allocation half of POST /reshaper), pure. Reproduces
 * placement/objects/allocation.py _set_allocations + _check_capacity_exceeded and the
 * handler checks before it, in upstream's order, and turns an accepted request into a
 * plan the store writes as ONE transaction:
 *
 *   1. consumer generations (checkConsumerGenerations)            409 concurrent_update
 *   2. every provider named by a non-empty allocation exists       400
 *   3. every resource class of the allocation list exists           400
 *   4. every provider has inventory of at least one requested class 409
 *   5. per allocation, in request order: inventory of the class,
 *      min_unit / max_unit / step_size, capacity                    409
 *
 * Capacity is (total - reserved) * allocation_ratio, checked against the provider's
 * usage without the old allocations of every consumer in the request (they are
 * replaced), as upstream. The plan expresses the same check as a condition the store
 * evaluates atomically against the provider's *current* usage: for every class with a
 * positive new amount, used <= capacity - delta (delta = new - old over the request),
 * so concurrent claims on one provider commute instead of failing on its generation.
 *
 * The "allocation list" is upstream's: the new allocations of consumers that send
 * some, and the old allocations (with amount 0: "remove") of consumers that send an
 * empty set. Providers in that list get their generation bumped; a provider that only
 * loses allocations because a consumer moved away does not (nor does DELETE), exactly
 * as upstream.
 */
import { capacity, type Inventory, type ProviderState } from './model.js';
import type { ManagedRefusal } from './managed.js';
import { compareResourceClasses, isStandardResourceClass } from './standard.js';
import {
  consumerGenerationConflict,
  nextGeneration,
  type AllocationMap,
  type ConsumerRecord,
  type GenerationCheck,
  type Resources,
} from './consumers.js';

export interface ConsumerRequest {
  uuid: string;
  /** the consumer's complete new allocations; empty = remove them all */
  allocations: AllocationMap;
  project: string;
  user: string;
  /** consumer type (1.38); undefined keeps the record's (none for a new consumer) */
  type?: string;
  generation: GenerationCheck;
}

/** What the store found for a consumer. */
export interface ConsumerState {
  record?: ConsumerRecord;
  /** allocation rows without a consumer record (imported legacy data) */
  legacy?: AllocationMap;
}

export type ClaimFailure =
  /** 409 placement.concurrent_update */
  | { error: 'consumer_generation'; detail: string }
  /** 400 */
  | { error: 'provider_missing'; provider: string; detail: string }
  /** 400 (exception.ResourceClassNotFound) */
  | { error: 'class_missing'; resourceClass: string; detail: string }
  /** 409 (exception.InvalidInventory and its capacity / constraint subclasses) */
  | { error: 'invalid_inventory'; detail: string }
  /** 409: a consumer or a provider's inventory managed elsewhere (managed.ts) */
  | ManagedRefusal;

export interface ProviderChange {
  uuid: string;
  /** the record the plan was computed from (undefined for providers that only lose allocations: not read) */
  read?: ProviderState;
  /** how much the provider generation goes up */
  generationDelta: number;
  /** class -> change of `used` (non-zero only) */
  usedDelta: Resources;
  /** class -> the largest current `used` with which the change still fits */
  limits: Resources;
  /** change of the number of consumers holding allocations here */
  allocsDelta: number;
}

export interface RowChange {
  provider: string;
  consumer: string;
  /** the row's resources; undefined = delete the row */
  resources?: Resources;
  /** the consumer generation the row carries */
  generation?: number;
}

export interface ConsumerChange {
  uuid: string;
  before?: ConsumerRecord;
  legacyBefore?: AllocationMap;
  /** undefined = the record is deleted (or never created) */
  after?: ConsumerRecord;
}

export interface ClaimPlan {
  providers: Map<string, ProviderChange>;
  rows: RowChange[];
  consumers: ConsumerChange[];
}

export const providerMissingMessage = (rp: string) => `Allocation for resource provider '${rp}' that does not exist.`;
export const classMissingMessage = (rc: string) => `No such resource class ${rc}.`;
const invalidInventory = (rc: string, rp: string) => `Inventory for '${rc}' on resource provider '${rp}' invalid.`;
const capacityExceeded = (rc: string, rp: string) =>
  `Unable to create allocation for '${rc}' on resource provider '${rp}'. The requested amount would exceed the capacity.`;
const constraintsViolated = (rc: string, rp: string) =>
  `Unable to create allocation for '${rc}' on resource provider '${rp}'. The requested amount would violate inventory constraints.`;

/** The consumer's allocations as they are now (record, else legacy rows). */
export function currentAllocations(s: ConsumerState | undefined): AllocationMap {
  return s?.record?.allocations ?? s?.legacy ?? {};
}

/** Step 1: every consumer's generation, in request order. */
export function checkConsumerGenerations(requests: ConsumerRequest[], states: Map<string, ConsumerState>): ClaimFailure | undefined {
  for (const r of requests) {
    const detail = consumerGenerationConflict(states.get(r.uuid)?.record, r.generation);
    if (detail) return { error: 'consumer_generation', detail };
  }
  return undefined;
}

/** Providers a claim must read: the new allocations' and those of consumers being emptied. */
export function providersToRead(requests: ConsumerRequest[], states: Map<string, ConsumerState>): string[] {
  const out = new Set<string>();
  for (const r of requests) {
    const src = Object.keys(r.allocations).length ? r.allocations : currentAllocations(states.get(r.uuid));
    for (const rp of Object.keys(src)) out.add(rp);
  }
  return [...out];
}

/** Step 2: handlers.allocation._resource_providers_by_uuid, consumer by consumer. */
export function checkProvidersExist(requests: ConsumerRequest[], providers: Map<string, ProviderState>): ClaimFailure | undefined {
  for (const r of requests) {
    for (const rp of Object.keys(r.allocations)) {
      if (!providers.has(rp)) return { error: 'provider_missing', provider: rp, detail: providerMissingMessage(rp) };
    }
  }
  return undefined;
}

interface Entry {
  provider: string;
  consumer: string;
  resourceClass: string;
  amount: number;
}

/** upstream's allocation list, in request order */
function allocationList(requests: ConsumerRequest[], states: Map<string, ConsumerState>): Entry[] {
  const out: Entry[] = [];
  for (const r of requests) {
    if (Object.keys(r.allocations).length) {
      for (const [provider, res] of Object.entries(r.allocations)) {
        for (const [resourceClass, amount] of Object.entries(res)) out.push({ provider, consumer: r.uuid, resourceClass, amount });
      }
    } else {
      for (const [provider, res] of Object.entries(currentAllocations(states.get(r.uuid)))) {
        for (const resourceClass of Object.keys(res)) out.push({ provider, consumer: r.uuid, resourceClass, amount: 0 });
      }
    }
  }
  return out;
}

export type InventoryOf = (provider: ProviderState) => Record<string, Inventory>;
const storedInventory: InventoryOf = (p) => p.inventories;

/**
 * Resource classes whose existence the store must look up before planning: those that
 * are neither standard nor in the inventory of the provider they are requested from
 * (a class some inventory uses exists: custom classes in use cannot be deleted).
 */
export function classesToLookUp(
  requests: ConsumerRequest[],
  states: Map<string, ConsumerState>,
  providers: Map<string, ProviderState>,
  inventoryOf: InventoryOf = storedInventory,
): string[] {
  const out = new Set<string>();
  for (const e of allocationList(requests, states)) {
    if (isStandardResourceClass(e.resourceClass)) continue;
    const p = providers.get(e.provider);
    if (!p || !Object.hasOwn(inventoryOf(p), e.resourceClass)) out.add(e.resourceClass);
  }
  return [...out];
}

/** resource classes in upstream's id order, custom ones by name (error texts, where no catalog is at hand) */
export const byClassId = compareResourceClasses();

function add(m: Resources, k: string, d: number) {
  m[k] = (m[k] ?? 0) + d;
}

export interface PlanOptions {
  /** resource classes that do not exist (from the store's catalog look-up) */
  missingClasses: Set<string>;
  /** the inventory capacity is checked against (the reshaper's interim inventory) */
  inventoryOf?: InventoryOf;
  now: string;
}

/**
 * Steps 3-5 and the plan. `providers` must hold every provider of providersToRead().
 */
export function planAllocations(
  requests: ConsumerRequest[],
  states: Map<string, ConsumerState>,
  providers: Map<string, ProviderState>,
  opts: PlanOptions,
): ClaimPlan | ClaimFailure {
  const inventoryOf = opts.inventoryOf ?? storedInventory;
  const list = allocationList(requests, states);

  // 3. resource classes (upstream resolves every class of the list to its id first)
  for (const e of list) {
    if (opts.missingClasses.has(e.resourceClass)) {
      return { error: 'class_missing', resourceClass: e.resourceClass, detail: classMissingMessage(e.resourceClass) };
    }
  }

  // usage without the replaced allocations of every consumer in the request
  const old = new Map<string, Resources>();
  for (const r of requests) {
    for (const [rp, res] of Object.entries(currentAllocations(states.get(r.uuid)))) {
      const m = old.get(rp) ?? {};
      for (const [rc, n] of Object.entries(res)) add(m, rc, n);
      old.set(rp, m);
    }
  }
  const usedWithout = (rp: string, rc: string) => (providers.get(rp)!.usages[rc] ?? 0) - (old.get(rp)?.[rc] ?? 0);

  // 4. every provider needs inventory of at least one class of the whole list
  const classes = [...new Set(list.map((e) => e.resourceClass))];
  const listed = [...new Set(list.map((e) => e.provider))];
  const withoutInventory = listed.filter((rp) => !classes.some((rc) => Object.hasOwn(inventoryOf(providers.get(rp)!), rc)));
  if (withoutInventory.length) {
    return { error: 'invalid_inventory', detail: invalidInventory([...classes].sort(byClassId).join(', '), withoutInventory.join(', ')) };
  }

  // 5. each allocation in order
  const sums = new Map<string, Resources>();
  for (const e of list) {
    const sum = sums.get(e.provider) ?? {};
    sums.set(e.provider, sum);
    add(sum, e.resourceClass, e.amount);
    if (e.amount === 0) continue;
    const inv = inventoryOf(providers.get(e.provider)!)[e.resourceClass];
    if (!inv) return { error: 'invalid_inventory', detail: invalidInventory(e.resourceClass, e.provider) };
    if (e.amount < inv.min_unit || e.amount > inv.max_unit || e.amount % inv.step_size !== 0) {
      return { error: 'invalid_inventory', detail: constraintsViolated(e.resourceClass, e.provider) };
    }
    const used = usedWithout(e.provider, e.resourceClass);
    const cap = capacity(inv);
    if (cap < used + e.amount || cap < used + sum[e.resourceClass]!) {
      return { error: 'invalid_inventory', detail: capacityExceeded(e.resourceClass, e.provider) };
    }
  }

  // the plan
  const changes = new Map<string, ProviderChange>();
  const change = (rp: string): ProviderChange => {
    let c = changes.get(rp);
    if (!c) {
      c = { uuid: rp, read: providers.get(rp), generationDelta: 0, usedDelta: {}, limits: {}, allocsDelta: 0 };
      changes.set(rp, c);
    }
    return c;
  };
  for (const rp of listed) change(rp).generationDelta = 1;

  const rows: RowChange[] = [];
  const consumers: ConsumerChange[] = [];
  const visited = new Set(list.map((e) => e.consumer));
  for (const r of requests) {
    const state = states.get(r.uuid);
    const before = currentAllocations(state);
    const after: AllocationMap = {};
    for (const [rp, res] of Object.entries(r.allocations)) {
      const kept = Object.fromEntries(Object.entries(res).filter(([, n]) => n > 0));
      if (Object.keys(kept).length) after[rp] = kept;
    }
    for (const rp of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const c = change(rp);
      for (const [rc, n] of Object.entries(before[rp] ?? {})) add(c.usedDelta, rc, -n);
      for (const [rc, n] of Object.entries(after[rp] ?? {})) add(c.usedDelta, rc, n);
      c.allocsDelta += (after[rp] ? 1 : 0) - (before[rp] ? 1 : 0);
    }
    if (!visited.has(r.uuid)) continue; // nothing before, nothing after: no record, nothing to do
    const record = state?.record;
    const next: ConsumerRecord | undefined = Object.keys(after).length
      ? {
          uuid: r.uuid,
          project: r.project,
          user: r.user,
          type: r.type !== undefined ? r.type : (record?.type ?? null),
          generation: nextGeneration(record),
          allocations: after,
          createdAt: record?.createdAt ?? opts.now,
          updatedAt: opts.now,
        }
      : undefined;
    consumers.push({ uuid: r.uuid, before: record, legacyBefore: record ? undefined : state?.legacy, after: next });
    for (const rp of Object.keys(after)) rows.push({ provider: rp, consumer: r.uuid, resources: after[rp], generation: next!.generation });
    for (const rp of Object.keys(before)) if (!after[rp]) rows.push({ provider: rp, consumer: r.uuid });
  }

  // capacity as a condition on the current usage: used <= capacity - delta
  for (const c of changes.values()) {
    for (const [rc, d] of Object.entries(c.usedDelta)) if (d === 0) delete c.usedDelta[rc];
    if (!c.read) continue;
    const positive = new Set<string>();
    for (const r of requests) for (const [rc, n] of Object.entries(r.allocations[c.uuid] ?? {})) if (n > 0) positive.add(rc);
    for (const rc of positive) {
      const inv = inventoryOf(c.read)[rc]!;
      c.limits[rc] = capacity(inv) - (c.usedDelta[rc] ?? 0);
    }
  }
  return { providers: changes, rows, consumers };
}

export function isClaimFailure(x: unknown): x is ClaimFailure {
  return typeof x === 'object' && x !== null && 'error' in x && 'detail' in x;
}
