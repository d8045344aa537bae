/**
 * The one paginated Query every store module uses: all items of one partition (of the
 * table or of an index), optionally narrowed by a sort-key prefix or lower bound. And
 * the one parallel Scan of the whole table (the Placement import's read of what its
 * earlier passes wrote).
 */
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { tableName, type Item } from './client.js';
import { ddb } from './reads.js';

export interface PartitionQuery {
  /** the partition key value (pk, or gsi1pk / gsi2pk on an index) */
  pk: string;
  index?: 'gsi1' | 'gsi2';
  /** only sort keys starting with this */
  skBeginsWith?: string;
  /** only sort keys >= this */
  skFrom?: string;
  /** only sort keys between these two (inclusive) */
  skBetween?: [string, string];
  /** strongly consistent (base table only; indexes are always eventually consistent) */
  consistent?: boolean;
  /** ProjectionExpression and its attribute names */
  projection?: { expression: string; names: Record<string, string> };
}

/** Every item of several partitions (consistent), queried in parallel: a store spread over sharded partition keys. */
export async function queryAll(pks: readonly string[]): Promise<Item[]> {
  return (await Promise.all(pks.map((pk) => queryPartition({ pk, consistent: true })))).flat();
}

export async function queryPartition(q: PartitionQuery): Promise<Item[]> {
  const pkName = q.index ? `${q.index}pk` : 'pk';
  const skName = q.index ? `${q.index}sk` : 'sk';
  let cond = `${pkName} = :pk`;
  const values: Record<string, unknown> = { ':pk': q.pk };
  if (q.skBeginsWith !== undefined) {
    cond += ` AND begins_with(${skName}, :sk)`;
    values[':sk'] = q.skBeginsWith;
  } else if (q.skBetween !== undefined) {
    cond += ` AND ${skName} BETWEEN :sk AND :sk2`;
    values[':sk'] = q.skBetween[0];
    values[':sk2'] = q.skBetween[1];
  } else if (q.skFrom !== undefined) {
    cond += ` AND ${skName} >= :sk`;
    values[':sk'] = q.skFrom;
  }
  const out: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await ddb().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: q.index,
        KeyConditionExpression: cond,
        ExpressionAttributeValues: values,
        ...(q.projection ? { ProjectionExpression: q.projection.expression, ExpressionAttributeNames: q.projection.names } : {}),
        ConsistentRead: q.index ? undefined : (q.consistent ?? true),
        ExclusiveStartKey: start,
      }),
    );
    out.push(...(r.Items ?? []));
    start = r.LastEvaluatedKey;
  } while (start);
  return out;
}

export interface TableScan {
  /** Scan segments read in parallel (DynamoDB's parallel scan) */
  segments?: number;
  /** only items whose sort key starts with this, or (`not`) does not */
  sk?: { beginsWith: string; not?: boolean };
  /** strongly consistent */
  consistent?: boolean;
  /** called with each page's items as it arrives (nothing is kept here: a table may not fit in memory) */
  onPage: (items: Item[]) => void;
}

/**
 * Every item of the table, page by page, through a parallel Scan. The filter is
 * applied by DynamoDB after reading (the units are those of the whole table); it only
 * spares the transfer and the memory.
 */
export async function scanTable(s: TableScan): Promise<void> {
  const total = Math.max(1, s.segments ?? 4);
  const filter = s.sk
    ? {
        FilterExpression: `${s.sk.not ? 'NOT ' : ''}begins_with(#sk, :skp)`,
        ExpressionAttributeNames: { '#sk': 'sk' },
        ExpressionAttributeValues: { ':skp': s.sk.beginsWith },
      }
    : {};
  await Promise.all(
    Array.from({ length: total }, async (_, segment) => {
      let start: Record<string, unknown> | undefined;
      do {
        const r = await ddb().send(
          new ScanCommand({
            TableName: tableName(),
            Segment: segment,
            TotalSegments: total,
            ConsistentRead: s.consistent ?? true,
            ExclusiveStartKey: start,
            ...filter,
          }),
        );
        if (r.Items?.length) s.onPage(r.Items);
        start = r.LastEvaluatedKey;
      } while (start);
    }),
  );
}
