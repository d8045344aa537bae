/**
 * Changes larger than one TransactWriteItems (DynamoDB's 100 actions), all or nothing as
 * every reader and writer sees them: the intent protocol (docs/design.md, "Changes larger
 * than one transaction").
 *
 *  1. INTENT: the change's actions (the very TransactWriteItems actions a single
 *     transaction would have carried) are stored under `INTENT#<id>` (chunks `A#<n>`, then
 *     the intent `I`: status pending, a lease, in the sparse open-intents index).
 *  2. LOCK, in steps of at most 98 actions (+ a check that the intent is still pending
 *     + the step's marker): every item the change writes gets `lk = <id>`, under the
 *     action's own condition (generation, capacity, absence…) and `attribute_not_exists(lk)`.
 *     Nothing else changes yet, so readers still see every item as it was; an item that
 *     did not exist is a placeholder (nothing but its keys and `lk`) that readers do not
 *     see. Every other write is guarded by `attribute_not_exists(lk)` (tx.ts), so the
 *     conditions stay true until the change is applied. A failed condition undoes the
 *     locks (ABORT) and is answered as a single transaction's would be.
 *  3. COMMIT POINT: one transaction sets the intent committed (if still pending) together
 *     with the change-log entry. From then on every reader that meets a lock sees the item
 *     as the change leaves it, written yet or not (reads.ts → views.ts lockedViews: the
 *     locked item cannot change in between), so all readers see it whole.
 *  4. APPLY, in steps: each original action, conditioned on `lk = <id>` instead of its
 *     own condition (checked while locking, kept true by the lock), with `lk` removed.
 *     Idempotent: an action whose lock is gone was applied already.
 *  5. CLOSE: the intent leaves the open index and expires.
 *
 * The intent and its actions as stored: items.ts; what readers see of locked items:
 * views.ts; the lock: lock.ts.
 *
 * Recovery (recovery.ts): the maintenance function walks the open intents every minute:
 * committed, it rolls the change forward; pending with its lease run out (its writer timed out or
 * crashed), it aborts it — the status moves pending → aborted, or pending → committed,
 * exactly once — and releases the locks. Until then a writer that meets a lock treats it
 * as a lost race (plans again; 409 once its retries run out): each function keeps the
 * rights to its own items only, and finishing another's change could need anyone's.
 * Readers never write: they see a committed change whole and any other not at all.
 */
import { randomUUID } from 'node:crypto';
import { commitTransaction, isMarker, MAX_TX_ACTIONS, type TxItem, type TxOptions, type TxOutcome } from '../commit.js';
import { ddbPlain, tableName, type Item } from '../client.js';
import { batchGetFrom, keyId } from '../batch.js';
import { backoffMs, sleep } from '../retry.js';
import { count } from '../../../observability/powertools.js';
import { applyAction, close, INTENT_KEYS, type Intent, keyOf, lockAction, readActions, readIntent, settle, writeIntent } from './items.js';
import { isPlaceholder, LOCK, lockOf } from './lock.js';
import { tally } from '../../../observability/counters.js';

/** actions per lock or apply step: DynamoDB's 100 less the intent check and the step's own marker */
const STEP = MAX_TX_ACTIONS - 2;
/** lock and apply steps in flight at once */
const STEP_PARALLELISM = 4;
const LOST_RACE_TRIES = 6;

/** the marker of a lock, apply or release step names its intent: a step, not a change of its own */
const stepOf = (id: string): TxOptions => ({ markerAttrs: { intent: id } });

// ------------------------------------------------------------------ steps

function chunked<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

async function inParallel<T>(jobs: T[], run: (job: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await run(jobs[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(STEP_PARALLELISM, jobs.length) }, worker));
}

const stillPending = (id: string): TxItem =>
  ({
    ConditionCheck: {
      TableName: tableName(),
      Key: INTENT_KEYS.intent(id),
      ConditionExpression: '#s = :pending',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':pending': 'pending' },
    },
  }) as TxItem;

/** the intents whose locks made a transaction's conditions fail (its oldItems) */
export function lockedBy(out: TxOutcome): string[] {
  if (out.ok) return [];
  return [
    ...new Set(
      Object.values(out.oldItems)
        .map(lockOf)
        .filter((x): x is string => !!x),
    ),
  ];
}

type LockResult = { ok: true } | { ok: false; failed: number[]; oldItems: Record<number, Item | undefined> } | { ok: false; lost: true };

/** Step 2 for the actions `order` names (indexes into `actions`). */
async function lockAll(id: string, actions: TxItem[], order: number[]): Promise<LockResult> {
  let result: LockResult = { ok: true };
  await inParallel(chunked(order, STEP), async (step) => {
    for (let attempt = 0; result.ok; attempt++) {
      const out = await commitTransaction([stillPending(id), ...step.map((i) => lockAction(actions[i]!, id))], stepOf(id));
      if (out.ok) return;
      if (out.failed.includes(0)) {
        // no longer pending: someone aborted this intent (its lease ran out)
        result = { ok: false, lost: true };
        return;
      }
      const others = lockedBy(out).filter((l) => l !== id);
      if (out.conflict || others.length) {
        // another transaction or another large change is on these items: wait, then give way
        // (the caller plans again; two large changes that want the same items never wait for each other for long)
        if (attempt + 1 >= LOST_RACE_TRIES) {
          result = { ok: false, lost: true };
          return;
        }
        await sleep(backoffMs(attempt, 20, 500));
        continue;
      }
      // an action's own condition failed: the answer a single transaction would have given
      const failed = out.failed.filter((f) => f > 0).map((f) => step[f - 1]!);
      const oldItems: Record<number, Item | undefined> = {};
      for (const f of out.failed) if (f > 0) oldItems[step[f - 1]!] = out.oldItems[f];
      result = { ok: false, failed, oldItems };
      return;
    }
  });
  return result;
}

/** Step 4: apply every action still locked by `id` (those whose lock is gone were applied). */
async function applyAll(id: string, actions: TxItem[]): Promise<void> {
  await inParallel(chunked([...actions.keys()], STEP + 1), async (step) => {
    let todo = step;
    for (let attempt = 0; todo.length; attempt++) {
      const out = await commitTransaction(
        todo.map((i) => applyAction(actions[i]!, id)),
        stepOf(id),
      );
      if (out.ok) return;
      if (out.failed.length) {
        // no longer locked by us: applied already (by a helper, or an earlier attempt)
        const done = new Set(out.failed);
        todo = todo.filter((_, k) => !done.has(k));
        continue;
      }
      await sleep(backoffMs(attempt, 20, 1000));
    }
  });
}

/**
 * Undo an aborted intent's locks: a locked item goes back to what it was (lk removed), a
 * placeholder (nothing but its keys and lk) goes.
 */
async function release(id: string, actions: TxItem[]): Promise<void> {
  const keys = actions.map(keyOf);
  const items = await batchGetFrom(ddbPlain(), keys, { consistent: true });
  const undo: TxItem[] = [];
  for (const k of keys) {
    const it = items.get(keyId(k));
    if (lockOf(it) !== id) continue;
    const placeholder = isPlaceholder(it!);
    const common = {
      TableName: tableName(),
      Key: k,
      ConditionExpression: '#lk = :lk',
      ExpressionAttributeNames: { '#lk': LOCK },
      ExpressionAttributeValues: { ':lk': id },
    };
    undo.push(placeholder ? ({ Delete: common } as TxItem) : ({ Update: { ...common, UpdateExpression: 'REMOVE #lk' } } as TxItem));
  }
  await inParallel(chunked(undo, STEP + 1), async (step) => {
    let todo = step;
    for (let attempt = 0; todo.length; attempt++) {
      const out = await commitTransaction(todo, stepOf(id));
      if (out.ok) return;
      const gone = new Set(out.failed);
      todo = todo.filter((_, k) => !gone.has(k));
      if (!gone.size) await sleep(backoffMs(attempt, 20, 1000));
    }
  });
  tally('intent.released');
}

// ------------------------------------------------------------------ the protocol

/**
 * Write `items` (more than one transaction holds) all or nothing. Answers as transact()
 * does: ok, or the indexes (into `items`) of actions whose own conditions failed, or a
 * conflict (plan again).
 */
export async function transactLarge(items: TxItem[], opts: TxOptions = {}, isFeedItem: (it: TxItem) => boolean = () => false): Promise<TxOutcome> {
  const marker = items.find(isMarker);
  // the change's feed item commits at the commit point: the change is recorded once, whole
  const feed = items.filter(isFeedItem);
  const at = items.map((it, i) => [it, i] as const).filter(([it]) => !isMarker(it) && !isFeedItem(it));
  const actions = at.map(([it]) => it);
  const id = randomUUID();
  tally('intent.started');
  count('LargeChanges');
  await writeIntent(id, actions);
  // in key order: two large changes that want the same items meet at the first of them
  const order = [...actions.keys()].sort((x, y) => {
    const a = keyId(keyOf(actions[x]!));
    const b = keyId(keyOf(actions[y]!));
    return a < b ? -1 : a > b ? 1 : 0;
  });
  let locked: LockResult;
  try {
    locked = await lockAll(id, actions, order);
  } catch (e) {
    // DynamoDB refused work (throttling, 5xx after the SDK's retries): undo what we can now;
    // what we cannot, the maintenance function undoes once the lease has run out
    await abort(id, actions).catch(() => undefined);
    throw e;
  }
  if (!locked.ok) {
    await abort(id, actions);
    if ('lost' in locked) return { ok: false, failed: [], oldItems: {}, conflict: true };
    const oldItems: Record<number, Item | undefined> = {};
    for (const [k, v] of Object.entries(locked.oldItems)) oldItems[at[Number(k)]![1]] = v;
    return { ok: false, failed: locked.failed.map((f) => at[f]![1]), oldItems, conflict: false };
  }
  // the commit point: the intent committed and the change-log entry, in one transaction
  const commitItems: TxItem[] = [
    {
      Update: {
        TableName: tableName(),
        Key: INTENT_KEYS.intent(id),
        UpdateExpression: 'SET #s = :committed',
        ConditionExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':committed': 'committed', ':pending': 'pending' },
      },
    } as TxItem,
    ...(marker ? [marker] : []),
    ...feed,
  ];
  for (let attempt = 0; ; attempt++) {
    const out = await commitTransaction(commitItems, opts);
    if (out.ok) break;
    if (out.failed.includes(0)) {
      // aborted meanwhile (our lease ran out): nothing of it stays
      await abort(id, actions);
      return { ok: false, failed: [], oldItems: {}, conflict: true };
    }
    if (attempt + 1 >= LOST_RACE_TRIES) {
      await abort(id, actions);
      return { ok: false, failed: [], oldItems: {}, conflict: true };
    }
    await sleep(backoffMs(attempt, 20, 500));
  }
  tally('intent.committed');
  await applyAll(id, actions);
  await close(id);
  return { ok: true };
}

/** Abort intent `id` unless it committed (then roll it forward); release its locks. */
export async function abort(id: string, actions?: TxItem[]): Promise<void> {
  if (!(await settle(id, 'aborted'))) {
    const now = await readIntent(id);
    if (now?.status === 'committed') return rollForward(now, actions);
    if (!now || now.closed) return;
  }
  tally('intent.aborted');
  const acts = actions ?? (await readActions((await readIntent(id))!));
  await release(id, acts);
  await close(id);
}

export async function rollForward(intent: Intent, actions?: TxItem[]): Promise<void> {
  await applyAll(intent.id, actions ?? (await readActions(intent)));
  await close(intent.id);
  tally('intent.rolledForward');
}
