/**
 * ONE TransactWriteItems (at most 100 actions) with Placement-shaped outcomes, and every
 * outcome KNOWN. (tx.ts transact() is what the store calls: it guards every write
 * against the locks of a change larger than one transaction, and hands such changes to
 * intents/protocol.ts, which commits its steps through here.)
 *
 * DynamoDB cancels a transaction either because one of our conditions failed
 * (ConditionalCheckFailed, with the index of the failing action) or because another
 * transaction touched the same item (TransactionConflict): the first is a domain
 * answer, the second is retried by the caller.
 *
 * Between those and success lies "outcome unknown": a lost response, a timeout, a 5xx,
 * TransactionInProgress, or any answer to a retry (the SDK resends a request up to
 * three times) whose earlier attempt may have committed. Such an outcome is resolved
 * here, before anyone answers a client (docs/consistency.md, "Unknown outcomes"):
 *
 *  - every transaction carries a MARKER: a Put of an item whose key belongs to this
 *    one attempt, conditioned on attribute_not_exists — the change-log entry of a
 *    Placement write (changelog.ts logPut marks it), otherwise an item TX#<token>;
 *  - the marker exists if and only if this attempt committed (nobody else writes that
 *    key; the transaction is atomic);
 *  - to learn the outcome, a FENCE is written at the marker's key (PutItem IF
 *    attribute_not_exists OR fence = <token>): if the fence is stored, no copy of the
 *    transaction can commit any more (its marker condition now fails) — not committed
 *    (a retried fence finds its own earlier copy and succeeds too); if the condition
 *    fails, the key holds the marker — committed.
 *
 * ClientRequestToken is set to the attempt's token, so the SDK's own retries of a
 * committed transaction are answered "success" by DynamoDB (idempotent for 10 minutes)
 * and rarely reach the fence; correctness does not depend on it.
 *
 * A commit learnt late (retries, a fence, a slow attempt) may have landed behind a reader
 * of the change log that already read past its timestamp: a marker that is a change-log
 * entry is then written again, stamped now, before the write is answered (LateCommit).
 */
import { randomUUID } from 'node:crypto';
import { PutItemCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddbDoc, ddbRaw, tableName } from './client.js';
import { backoffMs, sleep } from './retry.js';
import { count } from '../../observability/powertools.js';
import { log } from '../../observability/log.js';
import { tally } from '../../observability/counters.js';

export type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export const MAX_TX_ACTIONS = 100;

/** markers and fences expire after a day (DynamoDB TTL); a request is refused by DynamoDB minutes after it was signed */
export const MARKER_TTL_S = 24 * 3600;

export type TxOutcome =
  | { ok: true }
  | {
      ok: false;
      /** indexes of actions whose condition failed */
      failed: number[];
      /** the items as they were when a condition failed (ReturnValuesOnConditionCheckFailure) */
      oldItems: Record<number, Record<string, unknown> | undefined>;
      /** not committed, and worth trying again from fresh reads (a concurrent transaction, throttling, an attempt fenced off) */
      conflict: boolean;
    };

/** A bug: one TransactWriteItems was asked for more than DynamoDB's 100 actions (tx.ts transact() splits larger changes). */
export class TooManyActionsError extends Error {
  constructor(readonly count: number) {
    super(`a transaction of ${count} actions: at most ${MAX_TX_ACTIONS} (larger changes go through intents/protocol.ts)`);
    this.name = 'TooManyActionsError';
  }
}

/** The outcome could not be learnt (DynamoDB kept failing for the whole resolution budget). Answered as a 5xx. */
export class OutcomeUnknown extends Error {
  constructor(readonly last: unknown) {
    super('the outcome of a write could not be determined');
    this.name = 'OutcomeUnknown';
  }
}

const markers = new WeakSet<object>();

/**
 * A marker whose readers look only a bounded time back from its timestamp (the change
 * log's entries: changelog.ts). A commit learnt more than `lateAfterMs` after `stampedAt`
 * may have landed behind a reader that already read past that timestamp, so before the
 * write is answered the same change is announced again by a new marker stamped now
 * (`again()`, one more transaction; see transact()).
 */
export interface LateCommit {
  stampedAt: number;
  lateAfterMs: number;
  again: () => TxItem;
}

const lateCommits = new WeakMap<object, LateCommit>();
/** the change id a marker stands for (a change-log entry's sort key is its change's id) */
const markerChangeIds = new WeakMap<object, string>();

/**
 * Mark a Put as the transaction's marker: its key must be unique to this one attempt
 * (a fresh random part), it must be a new item. The Put gets attribute_not_exists(pk).
 * `changeId`: the id of the change it records (store/ddb/feed.ts), when the key is one.
 */
export function asMarker(put: TxItem, late?: LateCommit, changeId?: string): TxItem {
  if (!put.Put) throw new Error('a transaction marker must be a Put');
  put.Put.ConditionExpression = 'attribute_not_exists(pk)';
  markers.add(put);
  if (late) lateCommits.set(put, late);
  if (changeId) markerChangeIds.set(put, changeId);
  return put;
}

/** The change id a marker stands for (asMarker's), if it names one. */
export function markerChangeId(item: TxItem): string | undefined {
  return markerChangeIds.get(item);
}

export interface TxOptions {
  /** the key of the marker added when no action is one (default TX#<token>; bare metal: BMTX#<token>) */
  marker?: (token: string) => { pk: string; sk: string };
  /**
   * attributes of that added marker: `cid`, the id of the change it commits (tx.ts); `intent`,
   * the change larger than one transaction a step belongs to (intents/protocol.ts). A committed
   * transaction is thus one change, one step of one, or a late change announced again
   * (changelog.ts `again`): what the change-feed tests count.
   */
  markerAttrs?: Record<string, string>;
}

const defaultMarker = (token: string) => ({ pk: `TX#${token}`, sk: 'TX' });

/** The marker of transactions that have none of their own. */
function markerItem(token: string, key: (token: string) => { pk: string; sk: string }, attrs: Record<string, string> = {}): TxItem {
  return asMarker({ Put: { TableName: tableName(), Item: { ...key(token), ...attrs, ttl: Math.floor(Date.now() / 1000) + MARKER_TTL_S } } });
}

/**
 * Errors that prove the one attempt that was made did not commit. Anything else — a
 * network error, a timeout, a 5xx, TransactionInProgress, or any error after the SDK
 * retried — leaves the outcome unknown.
 */
const NOT_COMMITTED = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'ValidationException',
  'ResourceNotFoundException',
  'AccessDeniedException',
  'UnrecognizedClientException',
]);
/**
 * Not applied because of another transaction: worth planning again from fresh reads
 * (the store's retry loop). Anything else that was not applied — throttling the SDK
 * already retried, a 5xx, a timeout, a bug — is thrown: re-planning would not help,
 * and the API answers a 5xx, with nothing stored.
 */
const CONTENTION = new Set(['TransactionConflictException', 'TransactionInProgressException', 'TransactionCanceledException']);

const CONFLICT: TxOutcome = { ok: false, failed: [], oldItems: {}, conflict: true };

function attemptsOf(e: unknown): number {
  return Number((e as { $metadata?: { attempts?: number } })?.$metadata?.attempts ?? 1);
}

function isCancellation(e: unknown): e is TransactionCanceledException {
  return e instanceof TransactionCanceledException || (e as Error)?.name === 'TransactionCanceledException';
}

/** The answer of a cancellation DynamoDB evaluated on the only attempt made. */
function cancelled(e: TransactionCanceledException): TxOutcome {
  const reasons = e.CancellationReasons ?? [];
  const failed: number[] = [];
  const oldItems: Record<number, Record<string, unknown> | undefined> = {};
  reasons.forEach((r, i) => {
    if (r.Code === 'ConditionalCheckFailed') {
      failed.push(i);
      oldItems[i] = r.Item ? unmarshall(r.Item as never) : undefined;
    }
  });
  return { ok: false, failed, oldItems, conflict: failed.length === 0 };
}

/**
 * Write `items` as one transaction and learn its outcome. A committed transaction whose
 * marker asks for it (LateCommit) and whose commit was learnt late is announced again
 * before this returns, so the caller's answer never precedes what readers can see.
 */
export async function commitTransaction(items: TxItem[], opts: TxOptions = {}): Promise<TxOutcome> {
  const outcome = await commit(items, opts);
  if (outcome.ok) await announceIfLate(items.find((it) => lateCommits.has(it)));
  return outcome;
}

/** Is `item` a transaction's marker (asMarker)? */
export function isMarker(item: TxItem): boolean {
  return markers.has(item);
}

/** how many times a late commit is announced again at most (each new marker is itself checked for lateness) */
export const LATE_TRIES = 5;

async function announceIfLate(marker: TxItem | undefined): Promise<void> {
  let late = marker && lateCommits.get(marker);
  for (let i = 0; late && Date.now() - late.stampedAt > late.lateAfterMs; i++) {
    if (i === LATE_TRIES) {
      // stored and answered as stored; readers that missed it see it at their next full
      // resync (SNAPSHOT_RESYNC_S) or at the next write to the same providers
      count('LateCommitUnannounced');
      log.error('a late commit could not be announced again in time', { tries: LATE_TRIES });
      return;
    }
    const again = late.again();
    try {
      const o = await commit([again], {});
      if (!o.ok) continue;
      tally('tx.announcedAgain');
      count('LateCommitAnnounced');
      late = lateCommits.get(again);
    } catch (e) {
      // the write itself is stored: its answer stays success; try again with a new marker
      log.warn('announcing a late commit again failed', { error: (e as Error)?.name ?? String(e) });
    }
  }
}

async function commit(items: TxItem[], opts: TxOptions): Promise<TxOutcome> {
  if (items.length === 0) return { ok: true };
  const token = randomUUID();
  let markerIdx = items.findIndex((it) => markers.has(it));
  let all = items;
  if (markerIdx < 0) {
    markerIdx = items.length;
    all = [...items, markerItem(token, opts.marker ?? defaultMarker, opts.markerAttrs)];
  }
  if (all.length > MAX_TX_ACTIONS) throw new TooManyActionsError(all.length);
  const marker = all[markerIdx]!.Put!;
  const markerKey = { table: String(marker.TableName), pk: String(marker.Item!.pk), sk: String(marker.Item!.sk) };
  tally('tx.transactions');
  try {
    const r = await ddbDoc().send(new TransactWriteCommand({ TransactItems: all, ClientRequestToken: token }));
    tally('tx.attempts', r.$metadata.attempts ?? 1);
    return { ok: true };
  } catch (e) {
    const attempts = attemptsOf(e);
    tally('tx.attempts', attempts);
    if (isCancellation(e)) {
      // our marker exists: a copy of this very transaction committed (an SDK retry after a lost answer)
      if (e.CancellationReasons?.[markerIdx]?.Code === 'ConditionalCheckFailed') {
        tally('tx.resolvedCommitted');
        count('TxResolvedCommitted');
        return { ok: true };
      }
      if (attempts <= 1) return cancelled(e);
    } else if (attempts <= 1 && NOT_COMMITTED.has((e as Error)?.name)) {
      if (CONTENTION.has((e as Error).name)) return CONFLICT;
      throw e;
    }
    if (await resolve(markerKey, token, e)) return { ok: true };
    // not committed, and it never will be: contention is planned again, anything else thrown
    if (CONTENTION.has((e as Error)?.name)) return CONFLICT;
    throw e;
  }
}

/** how many times the fence is tried (each try is one SDK call of up to 3 attempts) */
const FENCE_TRIES = 12;

/**
 * Did the attempt whose marker is at `key` commit? Writes the fence (see the module
 * comment). True: committed. False: not committed, and it never will.
 */
async function resolve(key: { table: string; pk: string; sk: string }, token: string, cause: unknown): Promise<boolean> {
  tally('tx.unknown');
  count('TxOutcomeUnknown');
  log.warn('write outcome unknown: resolving', { error: (cause as Error)?.name ?? String(cause), attempts: attemptsOf(cause) });
  let last: unknown = cause;
  for (let i = 0; i < FENCE_TRIES; i++) {
    tally('tx.fenceAttempts');
    try {
      // stored (or already ours: a fence whose answer was lost): the attempt did not commit and never will
      await ddbRaw().send(
        new PutItemCommand({
          TableName: key.table,
          Item: { pk: { S: key.pk }, sk: { S: key.sk }, fence: { S: token }, ttl: { N: String(Math.floor(Date.now() / 1000) + MARKER_TTL_S) } },
          ConditionExpression: 'attribute_not_exists(pk) OR fence = :t',
          ExpressionAttributeValues: { ':t': { S: token } },
        }),
      );
      tally('tx.resolvedNotCommitted');
      count('TxResolvedNotCommitted');
      return false;
    } catch (e) {
      // the key holds something that is not our fence: the marker, so the attempt committed
      if ((e as Error)?.name === 'ConditionalCheckFailedException') {
        tally('tx.resolvedCommitted');
        count('TxResolvedCommitted');
        return true;
      }
      // a transaction still in flight on the marker (TransactionConflict), throttling, 5xx, network: try again
      last = e;
      await sleep(backoffMs(i, 25, 1000));
    }
  }
  count('TxOutcomeUnresolved');
  log.error('write outcome could not be resolved', { error: (last as Error)?.name ?? String(last) });
  throw new OutcomeUnknown(last);
}
