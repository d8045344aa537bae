/**
 * The one write of a provider's inventory, traits or aggregates: a patch planned in core
 * (core/placement/provider-patch.ts) from the provider as read, applied in ONE
 * TransactWriteItems
 *   Update RPU  [SET inv][, updated] [ADD gen 1][, invVer 1], SET last
 *               IF attribute_exists(pk) AND gen = <generation read> AND last < <entry>
 *               [AND used.<rc> <= 0 for each class whose inventory goes away]
 *               [AND attribute_not_exists(MANAGED_BY) when it changes what a manager owns]
 *   Update RP   SET traits / aggs (when the change is one of those)
 *   Update refs +1 / -1 on the custom traits / classes gained / lost
 *   Put AGG     IF absent, for each aggregate seen for the first time
 *   Put LOG     (names the provider: every process's snapshot re-reads it)
 * The condition on the generation read makes the plan's view of the provider the one the
 * write applies to: anything that changed the provider in between (another write, a
 * claim: claims bump the generation too) fails the transaction, and the answer is
 * `{ error: 'stale' }`: the use case (usecases/placement/provider-aspects.ts) reads and
 * plans again.
 */
import type { ProviderRecord } from '../../core/placement/model.js';
import { patched, type ProviderPatch } from '../../core/placement/provider-patch.js';
import { providerView, type ChangeSpec } from '../../core/feed/change.js';
import { logPut, logStamp, stateGuard } from './changelog.js';
import { Expr, newItem } from '../ddb/expr.js';
import { K } from './keys.js';
import { MANAGED_BY, nextSeq, sharingChanges, type ProviderRead } from './provider-items.js';
import { refUpdates } from './refs.js';
import { transact, type TxItem } from '../ddb/tx.js';

/**
 * Apply `patch` to the provider as `read` (its `last` and `managedBy` may be unknown when
 * the caller read the record elsewhere: the conditions hold anyway). `guardManaged`: the
 * patch changes what a manager owns, so the provider must not be managed elsewhere.
 */
export async function writeProviderPatch(
  read: ProviderRead,
  patch: ProviderPatch,
  guardManaged: boolean,
): Promise<{ ok: ProviderRecord } | { error: 'stale' }> {
  const cur = read.record;
  const uuid = cur.uuid;
  const now = new Date().toISOString();
  const stamp = logStamp(undefined, [read.last]);
  const state = new Expr();
  state.when(state.exists('pk')).when(state.eq('gen', cur.generation));
  stateGuard(stamp, state);
  if (guardManaged) state.when(state.absent(MANAGED_BY));
  for (const rc of patch.mustBeUnused) state.when(state.atMost(['used', rc], 0));
  const def = new Expr();
  if ('inventories' in patch.set) state.set('inv', patch.set.inventories);
  if ('traits' in patch.set) def.set('traits', patch.set.traits);
  if ('aggregates' in patch.set) def.set('aggs', patch.set.aggregates);
  if (patch.bumpGeneration) state.set('updated', now).add('gen', 1);
  if (patch.bumpInvVersion) state.add('invVer', 1);
  const next = patched(cur, patch, now);
  const items: TxItem[] = [state.updateItem(K.providerState(uuid))];
  if (def.hasUpdates) items.push(def.when(def.exists('pk')).updateItem(K.provider(uuid)));
  items.push(
    ...refUpdates(patch.refs).items,
    ...sharingChanges(uuid, cur, next),
    ...patch.firstSeen.map((a) => newItem({ ...K.aggregate(a), type: 'AGG', seq: nextSeq(), created: now })),
    logPut({ rereads: [uuid] }, stamp),
  );
  const out = await transact(items, { change: patchChange(cur, patch, next) });
  // something moved under us (or a class/trait vanished, or an aggregate was first seen by another write)
  return out.ok ? { ok: next } : { error: 'stale' };
}

/** the feed's view of a patch: the provider before (as read: the write is guarded by its generation) and after */
function patchChange(cur: ProviderRecord, patch: ProviderPatch, next: ProviderRecord): ChangeSpec {
  const [op, field] =
    'inventories' in patch.set
      ? (['provider.inventories', 'inventories'] as const)
      : 'traits' in patch.set
        ? (['provider.traits', 'traits'] as const)
        : (['provider.aggregates', 'aggregates'] as const);
  return { op, providers: [{ uuid: cur.uuid, before: providerView(cur, [field]), after: providerView(next, [field]) }] };
}
