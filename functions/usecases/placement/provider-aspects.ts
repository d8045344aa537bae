/**
 * A provider's inventory, traits and aggregates as use cases: read the provider through
 * the store, ask the catalog what the plan needs (do the classes and traits exist, which
 * aggregates were seen before), plan the patch by Placement's rules
 * (core/placement/provider-patch.ts), write it once (store/placement/provider-writes.ts),
 * and when the write was stale — anything changed the provider in between — read and plan
 * again (bounded; running out is a 409 placement.concurrent_update). When the client sent
 * a generation, a fresh read that does not carry it is the client's 409.
 */
import { addedClasses, applyInventoryChange, type InventoryChange, type InventoryChangeFailure } from '../../core/placement/inventory.js';
import type { ManagedAspect } from '../../core/placement/managed.js';
import type { ProviderRecord } from '../../core/placement/model.js';
import {
  addedAggregates,
  patchedAspect,
  planAggregates,
  planInventories,
  planTraits,
  type InventoryRefusal,
  type ProviderPatch,
  type TraitRefusal,
} from '../../core/placement/provider-patch.js';
import { RETRY, withRetries } from '../../store/ddb/retry.js';
import { knownAggregates } from '../../store/placement/aggregates.js';
import { missingResourceClasses, missingTraits } from '../../store/placement/catalog.js';
import type { ProviderRead } from '../../store/placement/provider-items.js';
import { writeProviderPatch } from '../../store/placement/provider-writes.js';
import { readProvider } from '../../store/placement/providers.js';

export type PatchFailure =
  | { error: 'not_found' }
  /** the client's generation is not the provider's */
  | { error: 'generation' }
  /** the provider is managed elsewhere (core/placement/managed.ts) and the change would touch what follows its manager */
  | { error: 'managed_elsewhere'; by: string; what: ManagedAspect };

export interface PatchOptions {
  /** the generation the client sent; undefined = whatever was read (lost races re-plan) */
  generation?: number;
  /** the provider as the caller has just read it: saves the first read */
  current?: ProviderRecord;
}

/** Apply an inventory change (add, update, delete one class, replace all). Returns the provider as written. */
export async function changeInventories(
  uuid: string,
  opts: PatchOptions,
  change: InventoryChange,
): Promise<ProviderRecord | InventoryChangeFailure | InventoryRefusal | PatchFailure> {
  return patchProvider<InventoryChangeFailure | InventoryRefusal>(uuid, opts, async (cur) => {
    const next = applyInventoryChange(cur.inventories, change);
    if ('error' in next) return next;
    return planInventories(cur, next.inventories, await missingResourceClasses(addedClasses(cur.inventories, next.inventories)));
  });
}

/** Replace the traits; unchanged traits write nothing and keep the generation, as upstream. */
export async function replaceTraits(uuid: string, opts: PatchOptions, traits: string[]): Promise<ProviderRecord | TraitRefusal | PatchFailure> {
  const want = [...new Set(traits)];
  return patchProvider<TraitRefusal>(uuid, opts, async (cur) => planTraits(cur, want, await missingTraits(want)));
}

/**
 * Replace the aggregates. From 1.19 the write is generation-guarded and bumps the
 * generation; before, it is not (upstream keeps the generation there, nova relies on
 * it) but it is still one conditional write on the provider as read.
 */
export async function replaceAggregates(
  uuid: string,
  opts: PatchOptions & { bumpGeneration: boolean },
  aggregates: string[],
): Promise<ProviderRecord | PatchFailure> {
  return patchProvider<never>(uuid, opts, async (cur) =>
    planAggregates(cur, aggregates, opts.bumpGeneration, await knownAggregates(addedAggregates(cur, aggregates))),
  );
}

/**
 * Read → plan → one write, again on a stale write. `plan` returns the patch, null when
 * nothing changes (the provider is returned as read) or its own refusal (returned as is).
 */
async function patchProvider<F extends { error: string }>(
  uuid: string,
  opts: PatchOptions,
  plan: (cur: ProviderRecord) => Promise<ProviderPatch | F | null>,
): Promise<ProviderRecord | F | PatchFailure> {
  let first: ProviderRead | undefined = opts.current && { record: opts.current };
  return withRetries<ProviderRecord | F | PatchFailure>(async () => {
    const read = first ?? (await readProvider(uuid, { convert: true }));
    first = undefined;
    if (!read) return { error: 'not_found' } as const;
    const cur = read.record;
    if (opts.generation !== undefined && cur.generation !== opts.generation) return { error: 'generation' } as const;
    const patch = await plan(cur);
    if (patch === null) return cur;
    if ('error' in patch) return patch;
    // a provider managed elsewhere follows its manager: a change of its inventory, traits
    // or aggregates is refused (one that changes nothing goes through, as usual). A record
    // the caller read does not say whether the provider is managed: the write's condition
    // does, and the fresh read after it failed says by what.
    const followed = patchedAspect(cur, patch);
    if (followed && read.managedBy) return { error: 'managed_elsewhere', by: read.managedBy, what: followed } as const;
    const out = await writeProviderPatch(read, patch, followed !== undefined);
    return 'ok' in out ? out.ok : RETRY;
  });
}
