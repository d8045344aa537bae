/**
 * Custom traits (pk TRAITS / sk <name>: refs, created, updated). Standard traits live in
 * code (functions/core/placement/standard.ts) and are neither stored nor counted. A custom
 * trait's `refs` counts the providers having it and moves in the same transaction as the
 * provider, so deleting a trait in use is refused by a condition (refs = 0), never by a
 * racy read. A provider's own traits are written as a provider patch
 * (usecases/placement/provider-aspects.ts).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from '../ddb/query.js';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { K } from './keys.js';
import { keyFits } from '../ddb/keys.js';
import { RETRY, withRetries } from '../ddb/retry.js';
import { transact } from '../ddb/tx.js';
import { Expr, newItem } from '../ddb/expr.js';
import { type CustomName, customNameFromItem, customNameItem, forgetCustomOrder, rememberCustomItems } from './catalog.js';
import { nextSeq } from './provider-items.js';

export type CustomTrait = CustomName;

export async function getCustomTrait(name: string): Promise<CustomTrait | undefined> {
  if (!keyFits(K.customTrait(name))) return undefined;
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.customTrait(name), ConsistentRead: true }));
  return r.Item ? customNameFromItem(r.Item) : undefined;
}

/** Every custom trait, in creation order. */
export async function listCustomTraits(): Promise<CustomTrait[]> {
  const items = await queryAll(K.customTraitPks);
  rememberCustomItems('trait', items);
  return items.map(customNameFromItem).sort((a, b) => a.seq - b.seq || (a.name < b.name ? -1 : 1));
}

/**
 * Create a custom trait; `created: false` when it already exists (PUT is idempotent).
 * A one-item transaction (store/ddb/tx.ts resolves a lost answer), so our own create
 * is never reported as "already there".
 */
export async function createCustomTrait(name: string): Promise<{ created: boolean; trait?: CustomTrait }> {
  return withRetries(async () => {
    const trait: CustomTrait = { name, refs: 0, createdAt: new Date().toISOString(), seq: nextSeq() };
    const out = await transact([newItem(customNameItem('trait', trait))], {
      change: { op: 'trait.create', names: [{ kind: 'trait', before: null, after: name }] },
    });
    if (out.ok) return { created: true, trait };
    return out.failed.includes(0) ? { created: false } : RETRY;
  });
}

/** Delete a custom trait no provider has (one-item transaction, as create). */
export async function deleteCustomTrait(name: string): Promise<{ ok: true } | { error: 'not_found' | 'in_use' }> {
  if (!keyFits(K.customTrait(name))) return { error: 'not_found' };
  return withRetries(async () => {
    const e = new Expr().returningOldOnFailure();
    const out = await transact([e.when(e.exists('pk')).when(e.atMost('refs', 0)).deleteItem(K.customTrait(name))], {
      change: { op: 'trait.delete', names: [{ kind: 'trait', before: name, after: null }] },
    });
    if (out.ok) {
      forgetCustomOrder('trait');
      return { ok: true } as const;
    }
    if (out.failed.includes(0)) return { error: out.oldItems[0] ? 'in_use' : 'not_found' } as const;
    return RETRY;
  });
}
