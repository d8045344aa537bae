/**
 * Usage aggregate items (docs/items.md): `USAGE#<project>#<shard>` / `U#<user>`, one
 * user's usage in one shard of a project. Claims add to them in the same transaction that
 * changes the allocations (functions/core/placement/usage.ts computes what to add): one
 * item per consumer changed. A busy project's claims spread over USAGE_SHARDS partitions;
 * GET /usages reads them all: one Query per shard for a project, one BatchGetItem for a
 * user.
 */
import { queryPartition } from '../ddb/query.js';
import { config } from '../../config.js';
import { sumUsage, usageDeltas, type TypeUsage } from '../../core/placement/usage.js';
import type { ConsumerChange } from '../../core/placement/claim.js';
import { K } from './keys.js';
import { batchGet } from '../ddb/reads.js';
import { keyFits, shardOf } from '../ddb/keys.js';
import type { TxItem } from '../ddb/tx.js';
import { Expr } from '../ddb/expr.js';
import type { Item } from '../ddb/client.js';
import { layoutMigrating } from '../layout/state.js';
import { readV1Usage, unabsorbed } from '../layout/v1.js';

/** The usage shard a consumer's aggregates go to. */
export const usageShardOf = (consumer: string) => shardOf(consumer, config().usageShards);

/** One Update per aggregate item the consumer changes touch. */
export function usageUpdates(changes: ConsumerChange[]): TxItem[] {
  return usageDeltas(changes, usageShardOf).map((d) => {
    const e = new Expr().set('project', d.project).set('user', d.user);
    for (const [attr, n] of Object.entries(d.add)) e.add(attr, n);
    return e.updateItem(K.usage(d.project, d.shard, d.user));
  });
}

const shards = () => Array.from({ length: config().usageShards }, (_, s) => s);

/**
 * Usage per consumer type of a project (or of one of its users), strongly consistent:
 * a Query of each of the project's shards (every user's item), or for a user one
 * BatchGetItem of its item in each shard. O(shards × users) small items whatever the
 * number of consumers.
 */
export async function readUsage(project: string, user?: string): Promise<Map<string, TypeUsage>> {
  // while a table migrates from layout 1, its usage items not moved yet count too: read
  // them first, so one moved meanwhile is found in the later read's `absorbed` (v1.ts)
  const v1 = (await layoutMigrating()) ? await readV1Usage(project, user) : [];
  let items: Item[];
  if (user === undefined) {
    if (!keyFits({ pk: K.usagePk(project, 0), sk: 'U#' })) return new Map();
    const parts = await Promise.all(shards().map((s) => queryPartition({ pk: K.usagePk(project, s), consistent: true })));
    items = parts.flat();
  } else {
    const keys = shards().map((s) => K.usage(project, s, user));
    if (!keys.every(keyFits)) return new Map();
    items = [...(await batchGet(keys)).values()];
  }
  return sumUsage([...items, ...unabsorbed(v1, items)]);
}
