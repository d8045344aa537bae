/**
 * Custom resource classes: pk RCS / sk <name> with refs (providers holding inventory
 * of it), created, updated and seq (creation order, which the list keeps, as upstream
 * lists by id). Standard classes live in code (functions/core/placement/standard.ts).
 * Deleting or renaming is conditioned on refs = 0, so a class in use never goes away.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from '../ddb/query.js';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { K } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { nextSeq } from './provider-items.js';
import { type CustomName, customNameFromItem, customNameItem, forgetCustomOrder, rememberCustomItems } from './catalog.js';
import { RETRY, withRetries } from '../ddb/retry.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { Expr, newItem } from '../ddb/expr.js';

export type CustomResourceClass = CustomName;

/** a Delete of a custom class's item that no provider counts (refs 0); the old item comes back when refused */
function deleteUnused(name: string): TxItem {
  const e = new Expr().returningOldOnFailure();
  return e.when(e.exists('pk')).when(e.atMost('refs', 0)).deleteItem(K.customResourceClass(name));
}

export async function getCustomResourceClass(name: string): Promise<CustomResourceClass | undefined> {
  if (!keyFits(K.customResourceClass(name))) return undefined;
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.customResourceClass(name), ConsistentRead: true }));
  return r.Item ? customNameFromItem(r.Item) : undefined;
}

/** Every custom class in creation order. */
export async function listCustomResourceClasses(): Promise<CustomResourceClass[]> {
  const items = await queryAll(K.customResourceClassPks);
  rememberCustomItems('rc', items);
  const out = items.map(customNameFromItem);
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
    const out = await transact([newItem(customNameItem('rc', rc))], {
      change: { op: 'resource_class.create', names: [{ kind: 'resource_class', before: null, after: name }] },
    });
    if (out.ok) return rc;
    return out.failed.includes(0) ? undefined : RETRY;
  });
}

/** Delete a custom class no provider has inventory of (one-item transaction, as create). */
export async function deleteCustomResourceClass(name: string): Promise<{ ok: true } | { error: 'not_found' | 'in_use' }> {
  if (!keyFits(K.customResourceClass(name))) return { error: 'not_found' };
  return withRetries(async () => {
    const out = await transact([deleteUnused(name)], {
      change: { op: 'resource_class.delete', names: [{ kind: 'resource_class', before: name, after: null }] },
    });
    if (out.ok) {
      forgetCustomOrder('rc');
      return { ok: true } as const;
    }
    if (out.failed.includes(0)) return { error: out.oldItems[0] ? 'in_use' : 'not_found' } as const;
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
): Promise<{ ok: CustomResourceClass } | { error: 'not_found' | 'exists' | 'in_use' }> {
  const renamed: CustomResourceClass = { ...from, name: to, refs: 0, updatedAt: new Date().toISOString() };
  const items: TxItem[] = [deleteUnused(from.name), newItem(customNameItem('rc', renamed))];
  return withRetries(async () => {
    const out = await transact(items, { change: { op: 'resource_class.update', names: [{ kind: 'resource_class', before: from.name, after: to }] } });
    if (out.ok) {
      forgetCustomOrder('rc');
      return { ok: renamed };
    }
    if (out.failed.includes(1)) return { error: 'exists' } as const;
    if (out.failed.includes(0)) return { error: out.oldItems[0] ? 'in_use' : 'not_found' } as const;
    return RETRY;
  });
}
