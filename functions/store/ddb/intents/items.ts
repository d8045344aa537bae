/**
 * The intent of a change larger than one transaction (protocol.ts): its actions as data
 * and the items that hold them — the intent `INTENT#<id>` / `I` (status pending →
 * committed or aborted, exactly once; a lease; in the sparse open-intents index while
 * open) and its chunks `A#<n>` (the actions, compressed). The protocol writes them, and
 * readers (views.ts) and the recovery (recovery.ts) read them, as stored: through the
 * plain client.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { PutCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TxItem } from '../commit.js';
import { ddbPlain, tableName } from '../client.js';
import { batchGetFrom, batchPut, keyId, type Key } from '../batch.js';
import { shardOf } from '../keys.js';
import { config } from '../../../config.js';
import { LOCK } from './lock.js';

/** bytes of compressed actions per chunk item (an item stops at 400 KB) */
const CHUNK_BYTES = 300_000;
/** closed intents and their chunks expire (DynamoDB TTL) */
const CLOSED_TTL_S = 24 * 3600;
const OPEN_SHARDS = 4;

/** the intent protocol's items (docs/design.md "Items") */
export const INTENT_KEYS = {
  intent: (id: string) => ({ pk: `INTENT#${id}`, sk: 'I' }),
  chunk: (id: string, n: number) => ({ pk: `INTENT#${id}`, sk: `A#${String(n).padStart(5, '0')}` }),
  /** gsi2 keys of an open intent (sparse: removed when it closes) */
  open: (id: string, created: number) => ({ gsi2pk: `INTENTS#${shardOf(id, OPEN_SHARDS)}`, gsi2sk: `${created}#${id}` }),
  openPks: Array.from({ length: OPEN_SHARDS }, (_, s) => `INTENTS#${s}`),
};

export type IntentStatus = 'pending' | 'committed' | 'aborted';

export interface Intent {
  id: string;
  status: IntentStatus;
  lease: number;
  chunks: number;
  closed: boolean;
}

// ------------------------------------------------------------------ actions as data: as the change has them, locked (step 2), applied (step 4)

export type Kind = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';
export type Action = Record<string, unknown> & {
  TableName?: string;
  Key?: Key;
  Item?: Record<string, unknown>;
  ConditionExpression?: string;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

export function split(item: TxItem): [Kind, Action] {
  return Object.entries(item)[0] as [Kind, Action];
}

export function keyOf(item: TxItem): Key {
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
export function lockAction(item: TxItem, id: string): TxItem {
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
export function applyAction(item: TxItem, id: string): TxItem {
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

// ------------------------------------------------------------------ the intent item

export async function writeIntent(id: string, actions: TxItem[]): Promise<void> {
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

export async function readIntent(id: string): Promise<Intent | undefined> {
  const r = await ddbPlain().send(new GetCommand({ TableName: tableName(), Key: INTENT_KEYS.intent(id), ConsistentRead: true }));
  const it = r.Item;
  if (!it) return undefined;
  return { id, status: it.status, lease: Number(it.lease), chunks: Number(it.chunks), closed: it.closed === true };
}

export async function readActions(intent: Intent): Promise<TxItem[]> {
  const keys = Array.from({ length: intent.chunks }, (_, n) => INTENT_KEYS.chunk(intent.id, n));
  const got = await batchGetFrom(ddbPlain(), keys, { consistent: true });
  const parts = keys.map((k) => {
    const it = got.get(keyId(k));
    if (!it) throw new Error(`intent ${intent.id}: chunk ${k.sk} is missing`);
    return Buffer.from(String(it.data), 'base64');
  });
  return decodeActions(gunzipSync(Buffer.concat(parts)).toString('utf8'));
}

/** The intent leaves pending for `to`, exactly once: true when this call moved it. */
export async function settle(id: string, to: 'aborted'): Promise<boolean> {
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

export async function close(id: string): Promise<void> {
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
