/**
 * Strongly consistent BatchGetItem over any keys (chunks of 100, unprocessed keys
 * retried with backoff). Claims read their consumers and providers with one call.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from './client.js';
import { keyFits } from './keys.js';
import { backoffMs, sleep } from './tx.js';

export type Key = { pk: string; sk: string };

export const keyId = (k: Key) => `${k.pk}\u0000${k.sk}`;

/** Items by keyId(); missing items are absent. */
export async function batchGet(keys: Key[]): Promise<Map<string, Record<string, any>>> {
  const uniq = [...new Map(keys.filter(keyFits).map((k) => [keyId(k), k])).values()];
  const out = new Map<string, Record<string, any>>();
  const chunks: Key[][] = [];
  for (let i = 0; i < uniq.length; i += 100) chunks.push(uniq.slice(i, i + 100));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: Record<string, unknown>[] | undefined = chunk.map((k) => ({ pk: k.pk, sk: k.sk }));
      for (let attempt = 0; pending?.length; attempt++) {
        const r = await ddb().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true } } }));
        for (const it of r.Responses?.[tableName()] ?? []) out.set(keyId(it as Key), it);
        pending = r.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
        if (pending?.length) await sleep(backoffMs(attempt, 20, 1000));
      }
    }),
  );
  return out;
}
