/**
 * Custom resource classes: pk RCS / sk <name> with refs (providers holding inventory
 * of it), created, updated and seq (creation order, which the list keeps, as upstream
 * lists by id). Standard classes live in code (functions/core/placement/standard.ts).
 * Deleting or renaming is conditioned on refs = 0, so a class in use never goes away.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from '../ddb/query.js';
import { ddb, tableName } from '../ddb/client.js';
import { K } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { nextSeq } from './providers.js';
import { customSeq, forgetCustomOrder, rememberCustomItems } from './catalog.js';
import { RETRY, withRetries } from '../ddb/retry.js';
import { transact, type TxItem } from '../ddb/tx.js';

export interface CustomResourceClass {
  name: string;
  refs: number;
  createdAt: string;
  updatedAt?: string;
  seq: number;
}

function fromItem(it: Record<string, unknown>): CustomResourceClass {
  return {
    name: String(it.sk),
    refs: Number(it.refs ?? 0),
    createdAt: String(it.created),
    updatedAt: it.updated ? String(it.updated) : undefined,
    seq: customSeq(it),
  };
}

function toItem(rc: CustomResourceClass): Record<string, unknown> {
  return {
    ...K.customResourceClass(rc.name),
    type: 'RC',
    refs: rc.refs,
    created: rc.createdAt,
    ...(rc.updatedAt ? { updated: rc.updatedAt } : {}),
    seq: rc.seq,
  };
}

const NOT_IN_USE = 'attribute_exists(pk) AND (attribute_not_exists(#refs) OR #refs <= :zero)';

export async function getCustomResourceClass(name: string): Promise<CustomResourceClass | undefined> {
  if (!keyFits(K.customResourceClass(name))) return undefined;
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.customResourceClass(name), ConsistentRead: true }));
  return r.Item ? fromItem(r.Item) : undefined;
}

/** Every custom class in creation order. */
export async function listCustomResourceClasses(): Promise<CustomResourceClass[]> {
  const items = await queryAll(K.customResourceClassPks);
  rememberCustomItems('rc', items);
  const out = items.map(fromItem);
  return out.sort((a, b) => a.seq - b.seq || (a.name < b.name ? -1 : 1));
}

/**
 * Create a custom class; undefined when the name is taken. A transaction of one item,
 * not a PutItem: its outcome is always known (store/ddb/tx.ts), so a lost answer
 * can never turn our own create into "taken".
 */
export async function createCustomResourceClass(name: string): Promise<CustomResourceClass | undefined> {
  return withRetries(async () => {
    const rc: CustomResourceClass = { name, refs: 0, createdAt: new Date().toISOString(), seq: nextSeq() };
    const out = await transact([{ Put: { TableName: tableName(), Item: toItem(rc), ConditionExpression: 'attribute_not_exists(pk)' } }]);
    if (out.ok) return rc;
    return out.failed.includes(0) ? undefined : RETRY;
  });
}

/** Delete a custom class no provider has inventory of (one-item transaction, as create). */
export async function deleteCustomResourceClass(name: string): Promise<true | 'not_found' | 'in_use'> {
  if (!keyFits(K.customResourceClass(name))) return 'not_found';
  return withRetries(async () => {
    const out = await transact([
      {
        Delete: {
          TableName: tableName(),
          Key: K.customResourceClass(name),
          ConditionExpression: NOT_IN_USE,
          ExpressionAttributeNames: { '#refs': 'refs' },
          ExpressionAttributeValues: { ':zero': 0 },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ]);
    if (out.ok) {
      forgetCustomOrder('rc');
      return true;
    }
    if (out.failed.includes(0)) return out.oldItems[0] ? 'in_use' : 'not_found';
    return RETRY;
  });
}

/**
 * Rename a custom class (PUT at 1.2-1.6): Delete old + Put new in one transaction;
 * the new item keeps the old one's creation time and list position. Inventories,
 * allocations and usages name classes by name, so a class in use is not renamed.
 */
export async function renameCustomResourceClass(
  from: CustomResourceClass,
  to: string,
): Promise<CustomResourceClass | 'not_found' | 'exists' | 'in_use'> {
  const renamed: CustomResourceClass = { ...from, name: to, refs: 0, updatedAt: new Date().toISOString() };
  const items: TxItem[] = [
    {
      Delete: {
        TableName: tableName(),
        Key: K.customResourceClass(from.name),
        ConditionExpression: NOT_IN_USE,
        ExpressionAttributeNames: { '#refs': 'refs' },
        ExpressionAttributeValues: { ':zero': 0 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { Put: { TableName: tableName(), Item: toItem(renamed), ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
  return withRetries(async () => {
    const out = await transact(items);
    if (out.ok) {
      forgetCustomOrder('rc');
      return renamed;
    }
    if (out.failed.includes(1)) return 'exists';
    if (out.failed.includes(0)) return out.oldItems[0] ? 'in_use' : 'not_found';
    return RETRY;
  });
}
