/**
 * The metering proxy (measure/meter/) against DynamoDB Local: each operation Berth uses
 * is billed by AWS's rules on the items DynamoDB really held before and after it — table
 * and index writes, failed conditions, cancelled transactions, reads with projections and
 * filters — and every call lands on the partition keys it touched.
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localClient, ensureTable } from '../../../local/ddb-local.js';
import { startMeterProxy, type MeterProxy } from '../../../measure/meter/proxy.js';
import { attributeCalls } from '../../../local/attribution.js';
import { byLabel, totals } from '../../../measure/ledger.js';
import { itemSize, itemWriteUnits, type WireItem } from '../../../functions/store/ddb/units.js';

let meter: MeterProxy;
let c: DynamoDBClient;
const table = `meter_${randomUUID().replace(/-/g, '')}`;
let label = 'test';

beforeAll(async () => {
  const endpoint = inject('ddbEndpoint');
  await ensureTable(endpoint, table, 'local', { stream: false });
  meter = await startMeterProxy(endpoint);
  c = localClient(meter.endpoint);
  attributeCalls(c, () => ({ container: 'test', request: label, label, family: 'test' }));
});
afterAll(async () => {
  c?.destroy();
  await meter?.stop();
});

/** the records one step made */
async function step<T>(name: string, fn: () => Promise<T>): Promise<{ value?: T; error?: Error; rec: (typeof meter.records)[number] }> {
  label = name;
  const before = meter.records.length;
  let value: T | undefined;
  let error: Error | undefined;
  try {
    value = await fn();
  } catch (e) {
    error = e as Error;
  }
  const recs = meter.records.slice(before);
  expect(recs).toHaveLength(1);
  return { value, error, rec: recs[0]! };
}

const big = (n: number) => 'x'.repeat(n);

describe('the metering proxy', () => {
  const pk = `RP#${randomUUID()}`;
  const item: Record<string, AttributeValue> = {
    pk: { S: pk },
    sk: { S: 'RP' },
    gsi1pk: { S: 'RPS#3' },
    gsi1sk: { S: pk },
    payload: { S: big(1500) },
  };

  it('a put of a new 1.5 KB item in gsi1: 2 table units, 2 index units on the gsi1 partition', async () => {
    const { rec } = await step('put', () => c.send(new PutItemCommand({ TableName: table, Item: item })));
    expect(rec.write).toBe(itemWriteUnits(0, itemSize(item as unknown as WireItem)));
    expect(rec.write).toBe(2);
    expect(rec.indexWrite).toBe(2);
    expect(rec.keys.map((k) => `${k.space}:${k.pk}:${k.write}`)).toEqual([`table:${pk}:2`, 'gsi1:RPS#3:2']);
    expect(rec.who?.label).toBe('put');
  });

  it('a transactional update that grows the item to 2.5 KB: 2 x 3 units; its index entry updated (3 units)', async () => {
    const { rec } = await step('update', () =>
      c.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: { pk: { S: pk }, sk: { S: 'RP' } },
                UpdateExpression: 'SET payload = :b',
                ExpressionAttributeValues: { ':b': { S: big(2500) } },
              },
            },
          ],
        }),
      ),
    );
    expect(rec.write).toBe(6);
    expect(rec.indexWrite).toBe(3);
  });

  it('an update moving the item to another gsi1 partition: a delete there and a put here', async () => {
    const { rec } = await step('move', () =>
      c.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: pk }, sk: { S: 'RP' } },
          UpdateExpression: 'SET gsi1pk = :p, payload = :b',
          ExpressionAttributeValues: { ':p': { S: 'RPS#9' }, ':b': { S: 'small' } },
        }),
      ),
    );
    // the larger of before (2.5 KB) and after (small): 3 units
    expect(rec.write).toBe(3);
    expect(rec.keys.filter((k) => k.space === 'gsi1').map((k) => `${k.pk}:${k.write}`)).toEqual(['RPS#3:3', 'RPS#9:1']);
  });

  it('a failed conditional put is billed (the new item, 1 unit); nothing reaches the index', async () => {
    const { error, rec } = await step('condition', () =>
      c.send(new PutItemCommand({ TableName: table, Item: { ...item, payload: { S: 'y' } }, ConditionExpression: 'attribute_not_exists(pk)' })),
    );
    expect(error?.name).toBe('ConditionalCheckFailedException');
    expect(rec.outcome).toBe('condition');
    expect(rec.write).toBe(1);
    expect(rec.indexWrite).toBe(0);
  });

  it('a transaction cancelled by its ConditionCheck pays the prepare of each item once; nothing changes', async () => {
    const other = `CONS#${randomUUID()}`;
    const { error, rec } = await step('cancelled', () =>
      c.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { ConditionCheck: { TableName: table, Key: { pk: { S: pk }, sk: { S: 'RP' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: table, Item: { pk: { S: other }, sk: { S: 'CONS' }, v: { S: big(1100) } } } },
          ],
        }),
      ),
    );
    expect(error?.name).toBe('TransactionCanceledException');
    expect(rec.outcome).toBe('cancelled');
    expect(rec.write).toBe(1 + 2);
    const got = await c.send(new GetItemCommand({ TableName: table, Key: { pk: { S: other }, sk: { S: 'CONS' } }, ConsistentRead: true }));
    expect(got.Item).toBeUndefined();
  });

  it('a ConditionCheck that holds: 2 units per started KB of the checked item, beside the Put', async () => {
    const other = `CONS#${randomUUID()}`;
    const { rec } = await step('check', () =>
      c.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { ConditionCheck: { TableName: table, Key: { pk: { S: pk }, sk: { S: 'RP' } }, ConditionExpression: 'attribute_exists(pk)' } },
            { Put: { TableName: table, Item: { pk: { S: other }, sk: { S: 'CONS' }, v: { S: 'v' } } } },
          ],
        }),
      ),
    );
    expect(rec.write).toBe(2 + 2);
  });

  it('reads: a consistent GetItem of a missing item is 1 unit, a BatchGet rounds each item, a projection does not lower it', async () => {
    const missing = await step('get-missing', () =>
      c.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'nope' }, sk: { S: 'x' } }, ConsistentRead: true })),
    );
    expect(missing.rec.read).toBe(1);
    const keys = Array.from({ length: 3 }, (_, i) => ({ pk: { S: `B#${i}-${pk}` }, sk: { S: 'x' } }));
    await c.send(
      new BatchWriteItemCommand({
        RequestItems: { [table]: keys.map((k, i) => ({ PutRequest: { Item: { ...k, v: { S: big(i === 0 ? 5000 : 100) } } } })) },
      }),
    );
    const bg = await step('batch-get', () =>
      c.send(
        new BatchGetItemCommand({
          RequestItems: { [table]: { Keys: [...keys, { pk: { S: 'none' }, sk: { S: 'x' } }], ProjectionExpression: 'pk' } },
        }),
      ),
    );
    // eventually consistent: 5 KB -> 2 blocks, two small items 1 each, the missing one 1: 5 blocks / 2
    expect(bg.rec.read).toBe(2.5);
    expect(bg.rec.mode).toBe('eventual');
  });

  it('a Query page is billed on what it evaluated (its filter and projection notwithstanding), on its partition', async () => {
    const p = `LOG#${randomUUID()}`;
    await c.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [table]: Array.from({ length: 5 }, (_, i) => ({ PutRequest: { Item: { pk: { S: p }, sk: { S: String(i) }, v: { S: big(1000) } } } })),
        },
      }),
    );
    const q = await step('query', () =>
      c.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :p',
          FilterExpression: 'v = :none',
          ProjectionExpression: 'sk',
          ExpressionAttributeValues: { ':p': { S: p }, ':none': { S: 'none' } },
          ConsistentRead: true,
        }),
      ),
    );
    expect(q.value?.Items).toHaveLength(0);
    // 5 items of ~1 KB evaluated: 2 blocks of 4 KB
    expect(q.rec.read).toBe(2);
    expect(q.rec.keys).toEqual([expect.objectContaining({ space: 'table', pk: p, items: 5 })]);
    const empty = await step('query-empty', () =>
      c.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': { S: 'LOG#none' } },
          ConsistentRead: true,
        }),
      ),
    );
    expect(empty.rec.read).toBe(1);
  });

  it('a delete is billed on the item deleted, and takes its entry out of the index', async () => {
    const { rec } = await step('delete', () => c.send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: pk }, sk: { S: 'RP' } } })));
    expect(rec.write).toBe(1);
    expect(rec.keys.find((k) => k.space === 'gsi1')).toEqual(expect.objectContaining({ pk: 'RPS#9', write: 1 }));
  });

  it('every call is accounted to its label, and per-key units add up to per-call units', () => {
    const t = totals(meter.records);
    expect(t.keys.read).toBeCloseTo(t.calls.read, 6);
    expect(t.keys.write).toBeCloseTo(t.calls.write + t.calls.indexWrite, 6);
    const labels = byLabel(meter.records);
    expect(meter.records.every((r) => r.who?.container === 'test')).toBe(true);
    expect(labels.get('put')?.write).toBe(2);
  });
});
