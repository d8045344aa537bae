/**
 * The one BatchGetItem of the store (strongly consistent unless asked): any keys, chunks of
 * 100 (or fewer) with at most BATCH_PARALLELISM chunks in flight (a snapshot catching up with a bulk load may
 * ask for tens of thousands of providers), unprocessed keys retried with backoff.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName, type Item } from './client.js';
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

/** Items by keyId(); missing items are absent. */
export async function batchGet(keys: Key[], opts: BatchGetOptions = {}): Promise<Map<string, Item>> {
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
        const r = await ddb().send(
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
