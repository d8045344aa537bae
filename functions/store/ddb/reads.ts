/**
 * The store's reads, above the intent protocol: every read of ddb() and batchGet() sees
 * changes larger than one transaction all or nothing (intents/protocol.ts). An item
 * locked by one that committed reads as the change leaves it, one locked by a change not
 * committed as it was, a placeholder not at all (intents/views.ts). The raw client's
 * reads — the table export — and the plain client's see items as stored.
 *
 * The document client (client.ts, the store's leaf) passes the answer of each of its
 * reads through the filter installed below when this module loads; ddb() is exported
 * from here only, so whoever reads through it has loaded this module.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type BatchGetOptions, batchGetFrom, type Key } from './batch.js';
import { ddbDoc, ddbPlain, filterDocumentReads, type Item } from './client.js';
import { LOCK } from './intents/lock.js';
import { lockedViews } from './intents/views.js';

/** every item a read answered with (GetItem, Query, Scan, BatchGetItem) */
function itemsOf(output: Record<string, unknown>): Item[] {
  const out: Item[] = [];
  if (output.Item) out.push(output.Item as Item);
  if (Array.isArray(output.Items)) out.push(...(output.Items as Item[]));
  for (const list of Object.values((output.Responses ?? {}) as Record<string, Item[]>)) out.push(...list);
  return out;
}

/** replace every locked item of a read's answer by what readers see of it (views.ts lockedViews); gone ones leave the lists */
function unlocked(output: Record<string, unknown>, views: Map<Item, Item | undefined>): void {
  const view = (it: Item) => (views.has(it) ? views.get(it) : it);
  if (output.Item) {
    const v = view(output.Item as Item);
    if (v) output.Item = v;
    else delete output.Item;
  }
  const clean = (list: Item[]) => list.map(view).filter((it): it is Item => it !== undefined);
  if (Array.isArray(output.Items)) {
    output.Items = clean(output.Items as Item[]);
    if (typeof output.Count === 'number') output.Count = (output.Items as Item[]).length;
  }
  const responses = output.Responses as Record<string, Item[]> | undefined;
  if (responses) for (const t of Object.keys(responses)) responses[t] = clean(responses[t]!);
}

filterDocumentReads(async (output) => {
  const locked = itemsOf(output).filter((it) => typeof it[LOCK] === 'string');
  if (locked.length) unlocked(output, await lockedViews(locked));
});

/** The document client, its reads seeing changes larger than one transaction whole. */
export function ddb(): DynamoDBDocumentClient {
  return ddbDoc();
}

/**
 * Items by keyId() (batch.ts batchGetFrom), seen whole as ddb() sees them; `raw`: as
 * stored, locks and placeholders of larger changes included (the plain client's).
 */
export async function batchGet(keys: Key[], opts: BatchGetOptions & { raw?: boolean } = {}): Promise<Map<string, Item>> {
  return batchGetFrom(opts.raw ? ddbPlain() : ddb(), keys, opts);
}
