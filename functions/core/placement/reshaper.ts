/**
 * POST /reshaper (placement/handlers/reshaper.py, objects/reshaper.py), pure: the
 * inventories of several providers and the allocations of several consumers replaced
 * in one step. Upstream does it in three moves inside one SQL transaction:
 *   1. "interim" inventory per provider = current inventory overlaid with the new one
 *      (skipped when the new one is empty), generation + 1
 *   2. the allocations, checked against the interim inventory (the claim rules),
 *      generation + 1 for every provider in the allocation list
 *   3. the final inventory (refused if a class that goes away still has allocations),
 *      generation + 1
 * Here the outcome of all three is one plan, so the store writes it as one
 * TransactWriteItems: the providers with new inventory are conditioned on the
 * generation the client sent (every claim bumps it), the others like a claim.
 */
import type { Inventory, ProviderState } from './model.js';
import { isStandardResourceClass } from './standard.js';
import { inventoryInUseMessage } from './inventory.js';
import {
  byClassId,
  checkConsumerGenerations,
  checkProvidersExist,
  classesToLookUp,
  classMissingMessage,
  planAllocations,
  type ClaimFailure,
  type ClaimPlan,
  type ConsumerRequest,
  type ConsumerState,
} from './claim.js';

export interface InventoryReplacement {
  provider: string;
  /** the generation the client read */
  generation: number;
  /** the provider's complete new inventory (defaults applied), in request order */
  inventories: Record<string, Inventory>;
}

export type ReshapeFailure =
  | ClaimFailure
  /** 400 placement.resource_provider.not_found */
  | { error: 'inventory_provider_missing'; detail: string }
  /** 409 placement.concurrent_update */
  | { error: 'provider_generation'; detail: string }
  /** 409 placement.inventory.inuse */
  | { error: 'inventory_in_use'; detail: string };

export interface InventoryChangePlan {
  provider: string;
  before: Record<string, Inventory>;
  after: Record<string, Inventory>;
}

export interface ReshapePlan extends ClaimPlan {
  inventories: InventoryChangePlan[];
}

/** The early per-provider checks of the handler, in request order. */
export function checkInventoryProviders(replacements: InventoryReplacement[], providers: Map<string, ProviderState>): ReshapeFailure | undefined {
  for (const r of replacements) {
    const p = providers.get(r.provider);
    if (!p) {
      return {
        error: 'inventory_provider_missing',
        detail: `Resource provider ${r.provider} in inventories not found: No resource provider with uuid ${r.provider} found`,
      };
    }
    if (p.generation !== r.generation) {
      return {
        error: 'provider_generation',
        detail: `resource provider generation conflict for provider ${r.provider}: actual: ${p.generation}, given: ${r.generation}`,
      };
    }
  }
  return undefined;
}

/** Steps 1-2 of the handler: provider checks, consumer generations, allocation providers. */
export function checkReshape(
  replacements: InventoryReplacement[],
  requests: ConsumerRequest[],
  states: Map<string, ConsumerState>,
  providers: Map<string, ProviderState>,
): ReshapeFailure | undefined {
  return checkInventoryProviders(replacements, providers) ?? checkConsumerGenerations(requests, states) ?? checkProvidersExist(requests, providers);
}

/** Inventory classes the store must look up (custom classes a provider does not have yet). */
export function inventoryClassesToLookUp(replacements: InventoryReplacement[], providers: Map<string, ProviderState>): string[] {
  const out = new Set<string>();
  for (const r of replacements) {
    const cur = providers.get(r.provider)?.inventories ?? {};
    for (const rc of Object.keys(r.inventories)) if (!isStandardResourceClass(rc) && !Object.hasOwn(cur, rc)) out.add(rc);
  }
  return [...out];
}

/** The interim inventory: current overlaid with the new one (unchanged when the new one is empty). */
export function interimInventory(p: ProviderState, r: InventoryReplacement | undefined): Record<string, Inventory> {
  if (!r || !Object.keys(r.inventories).length) return p.inventories;
  return { ...p.inventories, ...r.inventories };
}

/** Every resource class the store must look up before planning a reshape. */
export function reshapeClassesToLookUp(
  replacements: InventoryReplacement[],
  requests: ConsumerRequest[],
  states: Map<string, ConsumerState>,
  providers: Map<string, ProviderState>,
): string[] {
  const byProvider = new Map(replacements.map((r) => [r.provider, r]));
  return [
    ...inventoryClassesToLookUp(replacements, providers),
    ...classesToLookUp(requests, states, providers, (p) => interimInventory(p, byProvider.get(p.uuid))),
  ];
}

/**
 * Everything after the checks: class existence, the claim against the interim
 * inventory, the final inventory and its in-use check, generation arithmetic.
 */
export function planReshape(
  replacements: InventoryReplacement[],
  requests: ConsumerRequest[],
  states: Map<string, ConsumerState>,
  providers: Map<string, ProviderState>,
  opts: { missingClasses: Set<string>; now: string },
): ReshapePlan | ReshapeFailure {
  const byProvider = new Map(replacements.map((r) => [r.provider, r]));
  for (const r of replacements) {
    for (const rc of Object.keys(r.inventories)) {
      if (opts.missingClasses.has(rc)) return { error: 'class_missing', resourceClass: rc, detail: classMissingMessage(rc) };
    }
  }
  const plan = planAllocations(requests, states, providers, {
    missingClasses: opts.missingClasses,
    inventoryOf: (p) => interimInventory(p, byProvider.get(p.uuid)),
    now: opts.now,
  });
  if ('error' in plan) return plan;

  const inventories: InventoryChangePlan[] = [];
  for (const r of replacements) {
    const p = providers.get(r.provider)!;
    const c = plan.providers.get(r.provider) ?? {
      uuid: r.provider,
      read: p,
      generationDelta: 0,
      usedDelta: {},
      limits: {},
      allocsDelta: 0,
    };
    c.read = p;
    plan.providers.set(r.provider, c);
    const mid = interimInventory(p, r);
    const inUse = Object.keys(mid)
      .filter((rc) => !Object.hasOwn(r.inventories, rc))
      .filter((rc) => (p.usages[rc] ?? 0) + (c.usedDelta[rc] ?? 0) > 0)
      .sort(byClassId);
    if (inUse.length) return { error: 'inventory_in_use', detail: inventoryInUseMessage(inUse, r.provider) };
    // interim write (unless empty), allocation write (counted by the claim plan), final write
    c.generationDelta += (Object.keys(r.inventories).length ? 1 : 0) + 1;
    // the generation condition covers these providers: no capacity conditions needed
    c.limits = {};
    inventories.push({ provider: r.provider, before: p.inventories, after: r.inventories });
  }
  return { ...plan, inventories };
}
