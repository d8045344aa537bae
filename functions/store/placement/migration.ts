/**
 * Items of the incomplete-consumer migration (functions/maintenance/consumers.ts):
 * its progress record, the sparse index of legacy allocation rows, and the one
 * transaction that gives a legacy consumer its record.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ConsumerRecord } from '../../core/placement/consumers.js';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { consumerToItem } from './consumers.js';
import { K, LEGACY_SHARDS } from './keys.js';
import { newChangeId } from '../ddb/feed.js';
import { consumerView } from '../../core/feed/change.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { Expr, newItem } from '../ddb/expr.js';
import { usageUpdates } from './usage.js';

export const CONSUMER_MIGRATION_META = 'consumer-migration';

export interface MigrationProgress {
  /** consumer records created, all runs */
  created: number;
  /** batches run, all runs */
  batches: number;
  lastRunAt?: string;
  completedAt?: string;
}

export async function readMigrationProgress(): Promise<MigrationProgress> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.meta(CONSUMER_MIGRATION_META), ConsistentRead: true }));
  return {
    created: Number(r.Item?.created ?? 0),
    batches: Number(r.Item?.batches ?? 0),
    lastRunAt: r.Item?.lastRunAt,
    completedAt: r.Item?.completedAt,
  };
}

export async function recordMigrationProgress(created: number, batches: number, completed: boolean): Promise<void> {
  const now = new Date().toISOString();
  const e = new Expr().set('lastRunAt', now).add('created', created).add('batches', batches);
  if (completed) e.set('completedAt', now);
  await ddb().send(new UpdateCommand(e.updateInput(K.meta(CONSUMER_MIGRATION_META))));
}

/** Up to `limit` legacy consumers from the sparse index (consumer -> its providers). */
export async function pendingLegacyConsumers(limit: number): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (let s = 0; s < LEGACY_SHARDS && out.size < limit; s++) {
    let start: Record<string, unknown> | undefined;
    do {
      const r = await ddb().send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: 'gsi2',
          KeyConditionExpression: 'gsi2pk = :p',
          ExpressionAttributeValues: { ':p': K.legacyAllocationIndexPk(s) },
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      for (const it of r.Items ?? []) {
        const c = String(it.consumer);
        if (!out.has(c) && out.size >= limit) break;
        out.set(c, [...new Set([...(out.get(c) ?? []), ...((it.legacyRps as string[]) ?? [String(it.provider)])])]);
      }
      start = out.size < limit ? r.LastEvaluatedKey : undefined;
    } while (start);
  }
  return out;
}

/** Put the consumer record and un-mark its legacy rows, with the usage aggregates, in one transaction. */
export async function createConsumerFromLegacyRows(
  record: ConsumerRecord,
  rows: Array<{ provider: string; resources: Record<string, number> }>,
): Promise<boolean> {
  const consumer = record.uuid;
  const id = newChangeId();
  const items: TxItem[] = [
    newItem(consumerToItem({ ...record, last: id })),
    ...rows.map((r): TxItem => {
      const e = new Expr().set('cgen', 0).remove('legacy').remove('legacyRps').remove('gsi2pk').remove('gsi2sk');
      return e.when(e.exists('legacy')).updateItem(K.providerAllocation(r.provider, consumer));
    }),
    ...usageUpdates([{ uuid: consumer, after: record }]),
  ];
  // the consumer's allocations were there (legacy rows): from now on it has a record, a project and a user
  const out = await transact(items, {
    id,
    change: { op: 'allocations.migrate', consumers: [{ uuid: consumer, prev: null, before: null, after: consumerView(record) }] },
  });
  return out.ok;
}
