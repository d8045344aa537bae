/**
 * Changes larger than one TransactWriteItems (DynamoDB's 100 actions), all or nothing as
 * every reader and writer sees them: the intent protocol (docs/consistency.md, "Changes larger
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
 *     as the change leaves it, written yet or not (client.ts's read middleware →
 *     lockedViews: the locked item cannot change in between), so all readers see it whole.
 *  4. APPLY, in steps: each original action, conditioned on `lk = <id>` instead of its
 *     own condition (checked while locking, kept true by the lock), with `lk` removed.
 *     Idempotent: an action whose lock is gone was applied already.
 *  5. CLOSE: the intent leaves the open index and expires.
 *
 * Recovery: the maintenance function walks the open intents every minute: committed, it
 * rolls the change forward; pending with its lease run out (its writer timed out or
 * crashed), it aborts it — the status moves pending → aborted, or pending → committed,
 * exactly once — and releases the locks. Until then a writer that meets a lock treats it
 * as a lost race (plans again; 409 once its retries run out): each function keeps the
 * rights to its own items only, and finishing another's change could need anyone's.
 * Readers never write: they see a committed change whole and any other not at all.
 */
import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { commitTransaction, isMarker, MAX_TX_ACTIONS, type TxItem, type TxOptions, type TxOutcome } from './commit.js';
import { ddbPlain, tableName, type Item } from './client.js';
import { batchGet, batchPut, keyId, type Key } from './batch.js';
import { shardOf } from './keys.js';
import { backoffMs, sleep } from './retry.js';
import { config } from '../../config.js';
import { updatedItem } from './update-expression.js';
import { count } from '../../observability/powertools.js';
import { log } from '../../observability/log.js';

/** the attribute a change larger than one transaction locks its items with (its intent's id) */
export const LOCK = 'lk';
/** actions per lock or apply step: DynamoDB's 100 less the intent check and the step's own marker */
const STEP = MAX_TX_ACTIONS - 2;
/** lock and apply steps in flight at once */
const STEP_PARALLELISM = 4;
/** bytes of compressed actions per chunk item (an item stops at 400 KB) */
const CHUNK_BYTES = 300_000;
/** closed intents and their chunks expire (DynamoDB TTL) */
const CLOSED_TTL_S = 24 * 3600;
const OPEN_SHARDS = 4;
const LOST_RACE_TRIES = 6;

/** the intent protocol's items (docs/items.md, "Items (Placement)") */
export const INTENT_KEYS = {
  intent: (id: string) => ({ pk: `INTENT#${id}`, sk: 'I' }),
  chunk: (id: string, n: number) => ({ pk: `INTENT#${id}`, sk: `A#${String(n).padStart(5, '0')}` }),
  /** gsi2 keys of an open intent (sparse: removed when it closes) */
  open: (id: string, created: number) => ({ gsi2pk: `INTENTS#${shardOf(id, OPEN_SHARDS)}`, gsi2sk: `${created}#${id}` }),
  openPks: Array.from({ length: OPEN_SHARDS }, (_, s) => `INTENTS#${s}`),
};

export type IntentStatus = 'pending' | 'committed' | 'aborted';

interface Intent {
  id: string;
  status: IntentStatus;
  lease: number;
  chunks: number;
  closed: boolean;
}

/** Process-wide counters (tests, the chaos run and the bench read them). */
export const intentStats = { started: 0, committed: 0, aborted: 0, rolledForward: 0, released: 0, helped: 0 };

// ------------------------------------------------------------------ actions as data

type Kind = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';
type Action = Record<string, unknown> & {
  TableName?: string;
  Key?: Key;
  Item?: Record<string, unknown>;
  ConditionExpression?: string;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

function split(item: TxItem): [Kind, Action] {
  return Object.entries(item)[0] as [Kind, Action];
}

function keyOf(item: TxItem): Key {
  const [kind, a] = split(item);
  const k = kind === 'Put' ? a.Item! : a.Key!;
  return { pk: String(k.pk), sk: String(k.sk) };
}

/** the names and values among `names` / `values` that `expressions` use */
function used(expressions: Array<string | undefined>, a: Action): { names?: Record<string, string>; values?: Record<string, unknown> } {
  const text = expressions.filter(Boolean).join(' ');
  const names = Object.fromEntries(Object.entries(a.ExpressionAttributeNames ?? {}).filter(([k]) => new RegExp(`${k}\\b`).test(text)));
  const values = Object.fromEntries(Object.entries(a.ExpressionAttributeValues ?? {}).filter(([k]) => new RegExp(`${k}\\b`).test(text)));
  return { ...(Object.keys(names).length ? { names } : {}), ...(Object.keys(values).length ? { values } : {}) };
}

function expressionParts(
  expressions: Array<string | undefined>,
  a: Action,
  extra: { names?: Record<string, string>; values?: Record<string, unknown> },
) {
  const u = used(expressions, a);
  const names = { ...u.names, ...extra.names };
  const values = { ...u.values, ...extra.values };
  return {
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

/** Step 2: lock the action's item under its own condition; nothing else changes. */
function lockAction(item: TxItem, id: string): TxItem {
  const [, a] = split(item);
  const own = a.ConditionExpression;
  const ConditionExpression = own ? `(${own}) AND attribute_not_exists(#lk)` : 'attribute_not_exists(#lk)';
  return {
    Update: {
      TableName: a.TableName ?? tableName(),
      Key: keyOf(item),
      UpdateExpression: 'SET #lk = :lk',
      ConditionExpression,
      ...expressionParts([own], a, { names: { '#lk': LOCK }, values: { ':lk': id } }),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  } as TxItem;
}

/**
 * Step 4: the original action, conditioned on our lock instead of its own condition, and
 * leaving the item unlocked. A ConditionCheck only releases the lock: a check that the
 * item is absent (`attribute_not_exists(pk)`) left a placeholder, which goes.
 */
function applyAction(item: TxItem, id: string): TxItem {
  const [kind, a] = split(item);
  const lockCond = { ConditionExpression: '#lk = :lk' };
  const lockParts = { names: { '#lk': LOCK }, values: { ':lk': id } };
  const TableName = a.TableName ?? tableName();
  if (kind === 'Put') return { Put: { TableName, Item: a.Item, ...lockCond, ...expressionParts([], a, lockParts) } } as TxItem;
  if (kind === 'Delete') return { Delete: { TableName, Key: a.Key, ...lockCond, ...expressionParts([], a, lockParts) } } as TxItem;
  if (kind === 'ConditionCheck') {
    if (checksAbsence(a)) {
      return { Delete: { TableName, Key: a.Key, ...lockCond, ...expressionParts([], a, lockParts) } } as TxItem;
    }
    return { Update: { TableName, Key: a.Key, UpdateExpression: 'REMOVE #lk', ...lockCond, ...expressionParts([], a, lockParts) } } as TxItem;
  }
  const ue = a.UpdateExpression!;
  const UpdateExpression = /\bREMOVE\b/.test(ue) ? ue.replace(/\bREMOVE\b/, 'REMOVE #lk,') : `${ue} REMOVE #lk`;
  return { Update: { TableName, Key: a.Key, UpdateExpression, ...lockCond, ...expressionParts([ue], a, lockParts) } } as TxItem;
}

/**
 * Does the action's condition require its item to be absent: `attribute_not_exists(pk)`,
 * spelled out or through a name placeholder (`attribute_not_exists(#pk)`, as
 * store/ddb/expr.ts writes it)?
 */
function checksAbsence(a: Action): boolean {
  const names = a.ExpressionAttributeNames ?? {};
  const cond = (a.ConditionExpression ?? '').replace(/#\w+/g, (p) => names[p] ?? p);
  return /attribute_not_exists\(\s*pk\s*\)/.test(cond);
}

/** actions as text: JSON with sets kept (string-set members of a tree item) */
function encodeActions(actions: TxItem[]): string {
  return JSON.stringify(actions, (_k, v) => (v instanceof Set ? { $set: [...v] } : v));
}

function decodeActions(text: string): TxItem[] {
  return JSON.parse(text, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) && Array.isArray(v.$set) && Object.keys(v).length === 1 ? new Set(v.$set) : v,
  );
}

/** the marker of a lock, apply or release step names its intent: a step, not a change of its own */
const stepOf = (id: string): TxOptions => ({ markerAttrs: { intent: id } });

// ------------------------------------------------------------------ the intent item

async function writeIntent(id: string, actions: TxItem[]): Promise<void> {
  const zipped = gzipSync(Buffer.from(encodeActions(actions)));
  const now = Date.now();
  const ttl = Math.floor(now / 1000) + 7 * 24 * 3600;
  const chunks: Record<string, unknown>[] = [];
  for (let at = 0, n = 0; at < zipped.length; at += CHUNK_BYTES, n++) {
    chunks.push({ ...INTENT_KEYS.chunk(id, n), data: zipped.subarray(at, at + CHUNK_BYTES).toString('base64'), ttl });
  }
  // the chunks first: an intent never names chunks that are not there
  for (let i = 0; i < chunks.length; i += 25) await batchPut(chunks.slice(i, i + 25));
  await ddbPlain().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...INTENT_KEYS.intent(id),
        ...INTENT_KEYS.open(id, now),
        status: 'pending',
        lease: now + config().intentLeaseMs,
        created: now,
        chunks: chunks.length,
        actions: actions.length,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

async function readIntent(id: string): Promise<Intent | undefined> {
  const r = await ddbPlain().send(new GetCommand({ TableName: tableName(), Key: INTENT_KEYS.intent(id), ConsistentRead: true }));
  const it = r.Item;
  if (!it) return undefined;
  return { id, status: it.status, lease: Number(it.lease), chunks: Number(it.chunks), closed: it.closed === true };
}

async function readActions(intent: Intent): Promise<TxItem[]> {
  const keys = Array.from({ length: intent.chunks }, (_, n) => INTENT_KEYS.chunk(intent.id, n));
  const got = await batchGet(keys, { consistent: true, raw: true });
  const parts = keys.map((k) => {
    const it = got.get(keyId(k));
    if (!it) throw new Error(`intent ${intent.id}: chunk ${k.sk} is missing`);
    return Buffer.from(String(it.data), 'base64');
  });
  return decodeActions(gunzipSync(Buffer.concat(parts)).toString('utf8'));
}

/** The intent leaves pending for `to`, exactly once: true when this call moved it. */
async function settle(id: string, to: 'aborted'): Promise<boolean> {
  try {
    await ddbPlain().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: INTENT_KEYS.intent(id),
        UpdateExpression: 'SET #s = :to',
        ConditionExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':to': to, ':pending': 'pending' },
      }),
    );
    return true;
  } catch (e) {
    if ((e as Error).name === 'ConditionalCheckFailedException') return false;
    throw e;
  }
}

async function close(id: string): Promise<void> {
  await ddbPlain().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: INTENT_KEYS.intent(id),
      UpdateExpression: 'SET #c = :t, #ttl = :ttl REMOVE #g2pk, #g2sk',
      ExpressionAttributeNames: { '#c': 'closed', '#ttl': 'ttl', '#g2pk': 'gsi2pk', '#g2sk': 'gsi2sk' },
      ExpressionAttributeValues: { ':t': true, ':ttl': Math.floor(Date.now() / 1000) + CLOSED_TTL_S },
    }),
  );
}

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

const lockOf = (it: Item | undefined): string | undefined => {
  const v = it?.[LOCK];
  return typeof v === 'string' ? v : typeof v?.S === 'string' ? v.S : undefined;
};

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
  const items = await batchGet(keys, { consistent: true, raw: true });
  const undo: TxItem[] = [];
  for (const k of keys) {
    const it = items.get(keyId(k));
    if (lockOf(it) !== id) continue;
    const placeholder = Object.keys(it!).every((a) => a === 'pk' || a === 'sk' || a === LOCK);
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
  intentStats.released++;
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
  intentStats.started++;
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
  intentStats.committed++;
  await applyAll(id, actions);
  await close(id);
  return { ok: true };
}

/** Abort intent `id` unless it committed (then roll it forward); release its locks. */
async function abort(id: string, actions?: TxItem[]): Promise<void> {
  if (!(await settle(id, 'aborted'))) {
    const now = await readIntent(id);
    if (now?.status === 'committed') return rollForward(now, actions);
    if (!now || now.closed) return;
  }
  intentStats.aborted++;
  const acts = actions ?? (await readActions((await readIntent(id))!));
  await release(id, acts);
  await close(id);
}

async function rollForward(intent: Intent, actions?: TxItem[]): Promise<void> {
  await applyAll(intent.id, actions ?? (await readActions(intent)));
  await close(intent.id);
  intentStats.rolledForward++;
}

/**
 * Finish each of these intents that committed, abort each one whose writer is gone (its
 * lease ran out), release each aborted one's locks (the maintenance function's recovery).
 * One within its lease is left alone (its writer is at work).
 */
export async function helpIntents(ids: string[]): Promise<void> {
  for (const id of ids) {
    const it = await readIntent(id);
    if (!it || it.closed) continue;
    intentStats.helped++;
    if (it.status === 'committed') await rollForward(it);
    else if (it.status === 'aborted') await abort(id);
    else if (it.lease < Date.now()) await abort(id);
  }
}

/** the actions of committed intents, by intent (they never change): readers look them up */
const committedActions = new Map<string, Map<string, TxItem>>();

async function actionsByKey(intent: Intent): Promise<Map<string, TxItem>> {
  let m = committedActions.get(intent.id);
  if (!m) {
    m = new Map((await readActions(intent)).map((a) => [keyId(keyOf(a)), a]));
    if (committedActions.size >= 64) committedActions.delete(committedActions.keys().next().value!);
    committedActions.set(intent.id, m);
  }
  return m;
}

const isPlaceholder = (it: Item) => Object.keys(it).every((a) => a === 'pk' || a === 'sk' || a === LOCK);

/** `it` as it was before the change that locked it (lock gone; a placeholder is no item) */
function before(it: Item): Item | undefined {
  if (isPlaceholder(it)) return undefined;
  const { [LOCK]: _, ...rest } = it;
  return rest;
}

/**
 * What readers see of locked items (undefined: no such item). A change not committed —
 * pending, aborted, or whose writer is gone (only a writer aborts it: a read changes
 * nothing) — is not seen at all: each item as it was. A committed one is seen whole:
 * each item as its action leaves it (update-expression.ts), whether or not it has been
 * written yet — its item cannot change in between, the lock keeps every other writer out.
 */
export async function lockedViews(items: Item[]): Promise<Map<Item, Item | undefined>> {
  const out = new Map<Item, Item | undefined>();
  const byIntent = new Map<string, Item[]>();
  for (const it of items) {
    const id = lockOf(it);
    if (!id) continue;
    if (!byIntent.has(id)) byIntent.set(id, []);
    byIntent.get(id)!.push(it);
  }
  for (const [id, locked] of byIntent) {
    const intent = await readIntent(id);
    const actions = intent?.status === 'committed' && !intent.closed ? await actionsByKey(intent) : undefined;
    for (const it of locked) {
      const action = actions?.get(keyId({ pk: String(it.pk), sk: String(it.sk) }));
      if (!action) {
        out.set(it, before(it));
        continue;
      }
      const [kind, a] = split(action);
      if (kind === 'Delete') out.set(it, undefined);
      else if (kind === 'ConditionCheck') out.set(it, before(it));
      else out.set(it, updatedItem(before(it), a));
    }
  }
  return out;
}

/** The maintenance function's pass: every open intent nobody is finishing (committed, or past its lease). */
export async function recoverIntents(): Promise<{ open: number; recovered: number }> {
  let open = 0;
  let recovered = 0;
  for (const pk of INTENT_KEYS.openPks) {
    let start: Record<string, unknown> | undefined;
    do {
      const r = await ddbPlain().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ExclusiveStartKey: start,
        }),
      );
      for (const it of r.Items ?? []) {
        open++;
        const id = String(it.pk).slice('INTENT#'.length);
        const now = await readIntent(id);
        if (!now || now.closed) continue;
        if (now.status !== 'pending' || now.lease < Date.now()) {
          try {
            await helpIntents([id]);
            recovered++;
          } catch (e) {
            log.error('recovering a change larger than one transaction failed', { intent: id, error: (e as Error)?.name ?? String(e) });
          }
        }
      }
      start = r.LastEvaluatedKey;
    } while (start);
  }
  return { open, recovered };
}
