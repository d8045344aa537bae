/**
 * Every write transaction of the store goes through transact() (docs/consistency.md,
 * "Failures AWS has and DynamoDB Local has not" and "Changes larger than one
 * transaction"):
 *  - up to DynamoDB's 100 actions it is ONE TransactWriteItems whose outcome is always
 *    known (commit.ts), every action guarded against the locks a larger change holds
 *    (`attribute_not_exists(lk)`): a write that meets one is planned again later, as after
 *    any lost race (the change's writer finishes it within seconds; one whose writer is
 *    gone, the maintenance function finishes or undoes);
 *  - a larger change goes through the intent protocol (intents/protocol.ts): all of it, or none
 *    of it, as every reader and writer sees it;
 *  - every one carries the description of its change (`change`: what the writer did, the
 *    before and after it knows), written as the feed item (feed.ts) in the same
 *    transaction — at the commit point of a larger one — so a committed change has
 *    exactly one, and an attempt that did not commit none (docs/consistency.md, "The change feed").
 */
import { commitTransaction, isMarker, markerChangeId, MAX_TX_ACTIONS, type TxItem, type TxOptions, type TxOutcome } from './commit.js';
import { LOCK } from './intents/lock.js';
import { lockedBy, transactLarge } from './intents/protocol.js';
import { feedEnabled, feedWrite, newChangeId } from './feed.js';
import { batchPut } from './batch.js';
import { tableName } from './client.js';
import { completeChange, type ChangeSpec } from '../../core/feed/change.js';
import { count } from '../../observability/powertools.js';

export {
  asMarker,
  LATE_TRIES,
  MARKER_TTL_S,
  MAX_TX_ACTIONS,
  OutcomeUnknown,
  TooManyActionsError,
  type LateCommit,
  type TxItem,
  type TxOptions,
  type TxOutcome,
} from './commit.js';

const CONFLICT: TxOutcome = { ok: false, failed: [], oldItems: {}, conflict: true };

const feedItems = new WeakSet<object>();

/** Is `item` a transaction's feed item (transact() adds it; intents/protocol.ts writes it at the commit point)? */
export function isFeedItem(item: TxItem): boolean {
  return feedItems.has(item);
}

/** `item` with `attribute_not_exists(lk)` added to its condition (a marker or feed item is a new item: it stays as it is) */
function guarded(item: TxItem): TxItem {
  if (isMarker(item) || feedItems.has(item)) return item;
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

export interface TransactOptions extends TxOptions {
  /** what this transaction changes (core/feed/change.ts): recorded with it when the feed is on */
  change: ChangeSpec;
  /** the change id, for a transaction without a change-log entry whose items name it (a consumer's `last`) */
  id?: string;
}

/**
 * The feed item of `change` added to `items` (the change id: the change-log entry's sort
 * key when a marker is one, else a new one, which the added marker carries as `cid`).
 */
async function withFeed(items: TxItem[], opts: TransactOptions): Promise<{ items: TxItem[]; opts: TxOptions }> {
  const { change, id: given, ...rest } = opts;
  if (!feedEnabled()) return { items, opts: rest };
  const marker = items.find(isMarker);
  const id = (marker && markerChangeId(marker)) ?? given ?? newChangeId();
  const w = feedWrite(completeChange(change, id));
  if (w.parts.length) for (let i = 0; i < w.parts.length; i += 25) await batchPut(w.parts.slice(i, i + 25));
  const feed: TxItem = { Put: { TableName: tableName(), Item: w.item, ConditionExpression: 'attribute_not_exists(pk)' } };
  feedItems.add(feed);
  return { items: [...items, feed], opts: marker ? rest : { ...rest, markerAttrs: { ...rest.markerAttrs, cid: id } } };
}

/**
 * Write `items` atomically and learn the outcome: `{ ok: true }`, or not written with the
 * indexes of the actions whose own conditions failed (`failed`, the items as they were in
 * `oldItems`), or `conflict` (another write was in the way: plan again from fresh reads).
 * The indexes are into `items` (the feed item goes after them).
 */
export async function transact(given: TxItem[], options: TransactOptions): Promise<TxOutcome> {
  const { items, opts } = await withFeed(given, options);
  const actions = items.length + (items.some(isMarker) ? 0 : 1);
  if (actions > MAX_TX_ACTIONS) return transactLarge(items, opts, isFeedItem);
  const out = await commitTransaction(items.map(guarded), opts);
  if (out.ok) return out;
  // a larger change holds one of these items: a lost race, plan again later
  if (lockedBy(out).length) {
    count('LockedByLargeChange');
    return CONFLICT;
  }
  return out;
}
