/**
 * The one BatchGetItem of the store (strongly consistent unless asked): any keys, chunks of
 * 100 (or fewer) with at most BATCH_PARALLELISM chunks in flight (a snapshot catching up with a bulk load may
 * ask for tens of thousands of providers), unprocessed keys retried with backoff — through
 * the client it is given: reads.ts batchGet() reads as every reader sees items, the intent
 * protocol reads them as stored (intents/).
 * And the one BatchWriteItem (batchPut, batchWrite): the bulk loader's, the dump import's,
 * the forest image's and the Placement import's writes, none of which needs conditions.
 */
import { BatchWriteItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ddbDoc, ddbRaw, tableName, type Item } from './client.js';
import { keyFits } from './keys.js';
import { backoffMs, sleep } from './retry.js';

export type Key = { pk: string; sk: string };

export const keyId = (k: Key) => `${k.pk}\u0000${k.sk}`;

const BATCH_PARALLELISM = 16;

export interface BatchGetOptions {
  /** ProjectionExpression and its attribute names (pk and sk are always added: results are keyed by them) */
  projection?: { expression: string; names: Record<string, string> };
  /** strongly consistent reads (default); false for items that never change (half the cost) */
  consistent?: boolean;
  /** keys per call (default 100, BatchGetItem's maximum; fewer when items are large: an answer stops at 16 MB) */
  keysPerCall?: number;
  /** called with each item as its call answers, before the others are in (e.g. to start decoding it) */
  onItem?: (item: Item) => void;
}

/** Items by keyId(), read through `client`; missing items are absent. */
export async function batchGetFrom(client: DynamoDBDocumentClient, keys: Key[], opts: BatchGetOptions = {}): Promise<Map<string, Item>> {
  const uniq = [...new Map(keys.filter(keyFits).map((k) => [keyId(k), k])).values()];
  const out = new Map<string, Item>();
  const chunks: Key[][] = [];
  const perCall = Math.min(100, Math.max(1, opts.keysPerCall ?? 100));
  for (let i = 0; i < uniq.length; i += perCall) chunks.push(uniq.slice(i, i + perCall));
  const projection = opts.projection
    ? {
        ProjectionExpression: `${opts.projection.expression}, #bgpk, #bgsk`,
        ExpressionAttributeNames: { ...opts.projection.names, '#bgpk': 'pk', '#bgsk': 'sk' },
      }
    : {};
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++]!;
      let pending: Record<string, unknown>[] | undefined = chunk.map((k) => ({ pk: k.pk, sk: k.sk }));
      for (let attempt = 0; pending?.length; attempt++) {
        const r = await client.send(
          new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: opts.consistent ?? true, ...projection } } }),
        );
        for (const it of r.Responses?.[tableName()] ?? []) {
          out.set(keyId(it as Key), it);
          opts.onItem?.(it);
        }
        pending = r.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
        if (pending?.length) await sleep(backoffMs(attempt, 20, 1000));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_PARALLELISM, chunks.length) }, worker));
  return out;
}

/** BatchWriteItem's most items per call */
export const BATCH_WRITE_MAX = 25;

/**
 * Put up to 25 items with one BatchWriteItem (no conditions: new items, or a table being
 * filled), retrying the unprocessed ones with backoff until every item is stored.
 * Items are plain values, or AttributeValue maps as they are (`raw`: a dump's items).
 * Returns how many times unprocessed items were sent again.
 */
export async function batchPut(items: Item[], opts?: { raw?: false }): Promise<number>;
export async function batchPut(items: Record<string, AttributeValue>[], opts: { raw: true }): Promise<number>;
export async function batchPut(items: Record<string, unknown>[], opts: { raw?: boolean } = {}): Promise<number> {
  return sendBatch(
    items.map((Item) => ({ PutRequest: { Item } })),
    opts.raw ?? false,
  );
}

/** One request of a BatchWriteItem: an item to put (as it is: no condition) or a key to delete. */
export type WriteRequest = { put: Item } | { delete: Key };

/**
 * Put and delete up to 25 items with one BatchWriteItem (no conditions: a table being
 * filled, or one only its writer uses), retrying the unprocessed ones with backoff until
 * every request is done. Returns how many times unprocessed requests were sent again.
 */
export async function batchWrite(requests: WriteRequest[]): Promise<number> {
  return sendBatch(
    requests.map((r) => ('put' in r ? { PutRequest: { Item: r.put } } : { DeleteRequest: { Key: { pk: r.delete.pk, sk: r.delete.sk } } })),
    false,
  );
}

type WireWrite = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Key } };

async function sendBatch(requests: WireWrite[], raw: boolean): Promise<number> {
  if (requests.length > BATCH_WRITE_MAX) throw new Error(`BatchWriteItem: ${requests.length} requests, at most ${BATCH_WRITE_MAX} per call`);
  let pending = requests;
  let retries = 0;
  for (let attempt = 0; pending.length; attempt++) {
    const RequestItems = { [tableName()]: pending };
    const r = raw
      ? await ddbRaw().send(new BatchWriteItemCommand({ RequestItems } as never))
      : await ddbDoc().send(new BatchWriteCommand({ RequestItems } as never));
    pending = (r.UnprocessedItems?.[tableName()] ?? []) as typeof pending;
    if (pending.length) {
      retries++;
      await sleep(backoffMs(attempt, 50, 2000));
    }
  }
  return retries;
}
