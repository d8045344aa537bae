/**
 * Every write transaction of the store goes through transact() (docs/design.md,
 * "Failures AWS has and DynamoDB Local has not" and "Changes larger than one
 * transaction"):
 *  - up to DynamoDB's 100 actions it is ONE TransactWriteItems whose outcome is always
 *    known (commit.ts), every action guarded against the locks a larger change holds
 *    (`attribute_not_exists(lk)`): a write that meets one is planned again later, as after
 *    any lost race (the change's writer finishes it within seconds; one whose writer is
 *    gone, the maintenance function finishes or undoes);
 *  - a larger change goes through the intent protocol (intents.ts): all of it, or none
 *    of it, as every reader and writer sees it.
 */
import { commitTransaction, isMarker, MAX_TX_ACTIONS, type TxItem, type TxOptions, type TxOutcome } from './commit.js';
import { LOCK, lockedBy, transactLarge } from './intents.js';
import { count } from '../../observability/powertools.js';

export {
  asMarker,
  LATE_TRIES,
  MARKER_TTL_S,
  MAX_TX_ACTIONS,
  OutcomeUnknown,
  TooManyActionsError,
  txStats,
  type LateCommit,
  type TxItem,
  type TxOptions,
  type TxOutcome,
} from './commit.js';

const CONFLICT: TxOutcome = { ok: false, failed: [], oldItems: {}, conflict: true };

/** `item` with `attribute_not_exists(lk)` added to its condition (a marker is a new item: it stays as it is) */
function guarded(item: TxItem): TxItem {
  if (isMarker(item)) return item;
  const [kind, a] = Object.entries(item)[0] as [keyof TxItem, Record<string, unknown>];
  const cond = a.ConditionExpression as string | undefined;
  return {
    [kind]: {
      ...a,
      ConditionExpression: cond ? `(${cond}) AND attribute_not_exists(#lk)` : 'attribute_not_exists(#lk)',
      ExpressionAttributeNames: { ...(a.ExpressionAttributeNames as object), '#lk': LOCK },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  } as TxItem;
}

/**
 * Write `items` atomically and learn the outcome: `{ ok: true }`, or not written with the
 * indexes of the actions whose own conditions failed (`failed`, the items as they were in
 * `oldItems`), or `conflict` (another write was in the way: plan again from fresh reads).
 */
export async function transact(items: TxItem[], opts: TxOptions = {}): Promise<TxOutcome> {
  const actions = items.length + (items.some(isMarker) ? 0 : 1);
  if (actions > MAX_TX_ACTIONS) return transactLarge(items, opts);
  const out = await commitTransaction(items.map(guarded), opts);
  if (out.ok) return out;
  // a larger change holds one of these items: a lost race, plan again later
  if (lockedBy(out).length) {
    count('LockedByLargeChange');
    return CONFLICT;
  }
  return out;
}
