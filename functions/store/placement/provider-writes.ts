/**
 * The one shape of every generation-guarded provider write (inventories, traits,
 * aggregates): read the provider, let the caller plan the change from what it read,
 * then write it in ONE TransactWriteItems
 *   Update RPU  [SET inv][, updated] [ADD gen 1][, invVer 1], SET last
 *               IF attribute_exists(pk) AND gen = <generation read> AND last < <entry>
 *               [AND <planned conditions>]
 *   Update RP   SET traits / aggs (when the change is one of those)
 *   Update refs +1 / -1 on the custom traits / classes gained / lost
 *   [the caller's extra actions, e.g. Put AGG IF absent: an aggregate's first sighting]
 *   Put LOG     (names the provider: every process's snapshot re-reads it)
 * The condition on the generation read makes the plan's view of the provider the one
 * the write applies to: anything that changed the provider in between (another
 * write, a claim: claims bump the generation too) makes the transaction fail, and the
 * write is re-planned on a fresh read. When the client sent a generation, a fresh read
 * that does not carry it is the client's 409 (placement.concurrent_update).
 */
import type { ProviderRecord } from '../../core/placement/model.js';
import { logPut, logStamp, stateGuard } from './changelog.js';
import { Expr } from '../ddb/expr.js';
import { K } from './keys.js';
import { readProvider } from './providers.js';
import { MANAGED_BY, sharingChanges } from './provider-items.js';
import { changedAspect, type ManagedAspect } from '../../core/placement/managed.js';
import { refUpdates, type RefChange } from './refs.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { providerView, type ChangeSpec } from '../../core/feed/change.js';
import { RETRY, withRetries } from '../ddb/retry.js';

export type GuardedWriteFailure =
  | { error: 'not_found' }
  /** the client's generation is not the provider's */
  | { error: 'generation' }
  /** the provider is managed elsewhere (MANAGED_BY: core/placement/managed.ts) and the write would change what follows its manager */
  | { error: 'managed_elsewhere'; by: string; what: ManagedAspect };

/** the attributes a patch may SET, and which of the provider's two items holds each (providers.ts) */
const ITEM_OF = { inv: 'state', traits: 'def', aggs: 'def' } as const;

export interface ProviderPatch {
  /** item attributes to SET (item attribute names, see providers.ts defItem / stateItem) */
  set: Partial<Record<keyof typeof ITEM_OF, unknown>>;
  /** bump the generation (and `updated`) */
  bumpGeneration: boolean;
  /** bump invVer: every inventory change does (claims condition on it) */
  bumpInvVersion?: boolean;
  /** more conditions on the provider's state item */
  condition?: (state: Expr) => void;
  /** reference-count changes on custom traits / resource classes */
  refs?: RefChange[];
  /** more actions for the same transaction (an aggregate's first sighting) */
  extra?: TxItem[];
  /** the provider as it is after the write (generation, invVersion, updatedAt are filled in) */
  next: ProviderRecord;
}

export interface GuardedWriteOptions {
  /** the generation the client sent; undefined = whatever was read (lost races re-plan) */
  generation?: number;
  /** a record the caller has just read: saves the first read */
  current?: ProviderRecord;
}

/**
 * Plan and apply one change to a provider. `plan` returns the patch, `null` when there
 * is nothing to change (nothing is written, the provider is returned as read), or its
 * own failure (returned as is).
 */
export async function guardedProviderWrite<F extends { error: string }>(
  uuid: string,
  opts: GuardedWriteOptions,
  plan: (cur: ProviderRecord) => Promise<ProviderPatch | F | null>,
): Promise<ProviderRecord | F | GuardedWriteFailure> {
  let first: { record: ProviderRecord; last?: string; managedBy?: string } | undefined = opts.current && { record: opts.current };
  return withRetries<ProviderRecord | F | GuardedWriteFailure>(async () => {
    const read = first ?? (await readProvider(uuid, { convert: true }));
    first = undefined;
    if (!read) return { error: 'not_found' } as const;
    const cur = read.record;
    if (opts.generation !== undefined && cur.generation !== opts.generation) return { error: 'generation' } as const;
    const patch = await plan(cur);
    if (patch === null) return cur;
    if ('error' in patch) return patch;
    // a provider managed elsewhere follows its manager: a write that changes its inventory,
    // traits or aggregates is refused (one that changes nothing goes through, as usual)
    const followed = changedAspect(cur, aspectsOf(patch));
    if (followed && read.managedBy) return { error: 'managed_elsewhere', by: read.managedBy, what: followed } as const;

    const now = new Date().toISOString();
    const stamp = logStamp(undefined, [read.last]);
    const state = new Expr();
    state.when(state.exists('pk')).when(state.eq('gen', cur.generation));
    stateGuard(stamp, state);
    // (a record the caller read does not say whether the provider is managed elsewhere:
    // the condition does, and a fresh read after it failed says by what)
    if (followed) state.when(state.absent(MANAGED_BY));
    patch.condition?.(state);
    const def = new Expr();
    for (const [attr, value] of Object.entries(patch.set) as Array<[keyof typeof ITEM_OF, unknown]>)
      (ITEM_OF[attr] === 'def' ? def : state).set(attr, value);
    if (patch.bumpGeneration) state.set('updated', now).add('gen', 1);
    if (patch.bumpInvVersion) state.add('invVer', 1);
    const items: TxItem[] = [state.updateItem(K.providerState(uuid))];
    if (def.hasUpdates) items.push(def.when(def.exists('pk')).updateItem(K.provider(uuid)));
    items.push(
      ...refUpdates(patch.refs ?? []).items,
      ...sharingChanges(uuid, cur, patch.next),
      ...(patch.extra ?? []),
      logPut({ rereads: [uuid] }, stamp),
    );
    const out = await transact(items, { change: patchChange(uuid, cur, patch) });
    if (!out.ok) return RETRY; // something moved under us (or a class/trait vanished): re-plan on a fresh read
    return {
      ...patch.next,
      generation: cur.generation + (patch.bumpGeneration ? 1 : 0),
      invVersion: cur.invVersion + (patch.bumpInvVersion ? 1 : 0),
      updatedAt: patch.bumpGeneration ? now : cur.updatedAt,
    };
  });
}

/** the feed's view of a patch: the provider before (as read: the write is guarded by its generation) and after */
function patchChange(uuid: string, cur: ProviderRecord, patch: ProviderPatch): ChangeSpec {
  const set = patch.set as Record<string, unknown>;
  const [op, field] =
    set.inv !== undefined
      ? (['provider.inventories', 'inventories'] as const)
      : set.traits !== undefined
        ? (['provider.traits', 'traits'] as const)
        : (['provider.aggregates', 'aggregates'] as const);
  const after = { ...patch.next, generation: cur.generation + (patch.bumpGeneration ? 1 : 0) };
  return { op, providers: [{ uuid, before: providerView(cur, [field]), after: providerView(after, [field]) }] };
}

/** the inventory, traits or aggregates a patch sets */
function aspectsOf(patch: ProviderPatch): Parameters<typeof changedAspect>[1] {
  const set = patch.set as { inv?: ProviderRecord['inventories']; traits?: string[]; aggs?: string[] };
  return { inventories: set.inv, traits: set.traits, aggregates: set.aggs };
}
