/**
 * Usage aggregate items (docs/design.md): `USAGE#<project>` / `P#<shard>` for the
 * project, `USAGE#<project>` / `U#<user>#<shard>` for one of its users. Claims add to
 * them in the same transaction that changes the allocations (functions/core/placement/usage.ts
 * computes what to add); GET /usages reads one partition with one Query.
 */
import { queryPartition } from '../ddb/query.js';
import { config } from '../../config.js';
import { sumUsage, usageDeltas, type TypeUsage } from '../../core/placement/usage.js';
import type { ConsumerChange } from '../../core/placement/claim.js';
import { tableName } from '../ddb/client.js';
import { K } from './keys.js';
import { keyFits, shardOf } from '../ddb/keys.js';
import type { TxItem } from '../ddb/tx.js';

/** The usage shard a consumer's aggregates go to. */
export const usageShardOf = (consumer: string) => shardOf(consumer, config().usageShards);

/** One Update per aggregate item the consumer changes touch. */
export function usageUpdates(changes: ConsumerChange[]): TxItem[] {
  return usageDeltas(changes, usageShardOf).map((d) => {
    const names: Record<string, string> = { '#project': 'project', '#kind': 'kind' };
    const values: Record<string, unknown> = { ':project': d.project, ':kind': 'USAGE' };
    const adds = Object.entries(d.add).map(([attr, n], i) => {
      names[`#a${i}`] = attr;
      values[`:a${i}`] = n;
      return `#a${i} :a${i}`;
    });
    let set = '#project = :project, #kind = :kind';
    if (d.user !== undefined) {
      names['#user'] = 'user';
      values[':user'] = d.user;
      set += ', #user = :user';
    }
    return {
      Update: {
        TableName: tableName(),
        Key: d.user === undefined ? K.projectUsage(d.project, d.shard) : K.userUsage(d.project, d.user, d.shard),
        UpdateExpression: `SET ${set} ADD ${adds.join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
  });
}

/**
 * Usage per consumer type of a project (or of one of its users): one strongly
 * consistent Query over the project's partition, O(shards) small items whatever the
 * number of consumers.
 */
export async function readUsage(project: string, user?: string): Promise<Map<string, TypeUsage>> {
  const prefix = user === undefined ? 'P#' : `U#${user}#`;
  if (!keyFits({ pk: K.usagePk(project), sk: prefix })) return new Map();
  const all = await queryPartition({ pk: K.usagePk(project), skBeginsWith: prefix, consistent: true });
  // a user id may itself contain '#': keep only this user's items
  return sumUsage(all.filter((it) => (user === undefined ? it.user === undefined : it.user === user)));
}
