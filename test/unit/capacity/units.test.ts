/**
 * The accountant's unit arithmetic (functions/store/ddb/units.ts) against AWS's own worked examples.
 * Each case names its source: the Amazon DynamoDB Developer Guide pages the module cites —
 * [RW] "DynamoDB read and write operations" (archived: ProvisionedThroughput.md), [TX]
 * "Amazon DynamoDB Transactions: How it works", [GSI] "Using Global Secondary Indexes",
 * [SIZES] "DynamoDB item sizes and formats" — and the on-demand pricing page [PRICING]
 * (https://aws.amazon.com/dynamodb/pricing/on-demand/, "Key terms").
 */
import { describe, expect, it } from 'vitest';
import {
  batchGetUnits,
  cancelledTransactionUnits,
  conditionCheckUnits,
  failedConditionUnits,
  indexEntry,
  indexWrites,
  itemReadUnits,
  itemSize,
  itemWriteUnits,
  numberSize,
  queryPageUnits,
  valueSize,
  type TableSchema,
  type WireItem,
} from '../../../functions/store/ddb/units.js';

const KB = 1024;

describe('reads, by the documented examples', () => {
  it('[RW] reading a 3,500-byte item consumes the same throughput as reading a 4 KB item', () => {
    expect(itemReadUnits(3500, 'strong')).toBe(itemReadUnits(4 * KB, 'strong'));
    expect(itemReadUnits(3500, 'strong')).toBe(1);
  });

  it('[RW] GetItem: 3.5 KB rounds to 4 KB, 10 KB rounds to 12 KB; eventually consistent is half', () => {
    expect(itemReadUnits(3.5 * KB, 'strong')).toBe(1);
    expect(itemReadUnits(10 * KB, 'strong')).toBe(3);
    expect(itemReadUnits(10 * KB, 'eventual')).toBe(1.5);
  });

  it('[RW]/[PRICING] an 8 KB item: 2 units strongly consistent, 1 eventually consistent, 4 transactional', () => {
    expect(itemReadUnits(8 * KB, 'strong')).toBe(2);
    expect(itemReadUnits(8 * KB, 'eventual')).toBe(1);
    expect(itemReadUnits(8 * KB, 'transactional')).toBe(4);
  });

  it('[RW] BatchGetItem of a 1.5 KB and a 6.5 KB item is sized 12 KB (4 + 8), not 8 KB', () => {
    expect(batchGetUnits([1.5 * KB, 6.5 * KB], 'strong')).toBe(3);
    expect(queryPageUnits(1.5 * KB + 6.5 * KB, 'strong')).toBe(2); // what summing first would give
  });

  it('[RW] a read of an item that does not exist: 1 unit strongly consistent, 0.5 eventually consistent', () => {
    expect(itemReadUnits(0, 'strong')).toBe(1);
    expect(itemReadUnits(0, 'eventual')).toBe(0.5);
    expect(batchGetUnits([null, 100], 'strong')).toBe(2);
  });

  it('[RW] Query: 10 items of 40.8 KB in all round to 44 KB; 1,500 items of 64 bytes are 96 KB', () => {
    expect(queryPageUnits(40.8 * KB, 'strong')).toBe(11);
    expect(queryPageUnits(1500 * 64, 'strong')).toBe(24);
  });

  it('[RW] an eventually consistent read of 80 KB in all consumes 10 units', () => {
    expect(queryPageUnits(80 * KB, 'eventual')).toBe(10);
  });

  it('[GSI] a query matching 8 index entries of 2,000 bytes: 16,000 bytes, rounded to 16 KB, eventually consistent = 2 units', () => {
    expect(queryPageUnits(8 * 2000, 'eventual')).toBe(2);
  });

  it('[RW] 80 strongly consistent reads/s of 3 KB items need 80 read units (1 each)', () => {
    expect(80 * itemReadUnits(3 * KB, 'strong')).toBe(80);
  });

  it('[TX] reading three 500-byte items in a transaction takes 6 read units', () => {
    expect(batchGetUnits([500, 500, 500], 'transactional')).toBe(6);
  });
});

describe('writes, by the documented examples', () => {
  it('[RW] a 500-byte item costs as much as a 1 KB one; 1.6 KB rounds up to 2 KB', () => {
    expect(itemWriteUnits(0, 500)).toBe(1);
    expect(itemWriteUnits(0, 1.6 * KB)).toBe(2);
    expect(itemWriteUnits(1.6 * KB, 0)).toBe(2); // delete of a 1.6 KB item
  });

  it('[RW] BatchWriteItem of a 500-byte and a 3.5 KB item: 5 KB (1 + 4), not 4 KB', () => {
    expect(itemWriteUnits(0, 500) + itemWriteUnits(0, 3.5 * KB)).toBe(5);
  });

  it('[RW] PutItem replacing an item / UpdateItem: the larger of the item before and after', () => {
    expect(itemWriteUnits(3 * KB, 900)).toBe(3);
    expect(itemWriteUnits(900, 2.5 * KB)).toBe(3);
  });

  it('[RW] 100 writes/s of 512-byte items need 100 write units', () => {
    expect(100 * itemWriteUnits(0, 512)).toBe(100);
  });

  it('[PRICING] a standard write of a 3 KB item: 3 units; a transactional one: 6', () => {
    expect(itemWriteUnits(0, 3 * KB)).toBe(3);
    expect(itemWriteUnits(0, 3 * KB, true)).toBe(6);
  });

  it('[TX] a transaction writing three 500-byte items takes 6 write units (prepare + commit each)', () => {
    expect([500, 500, 500].reduce((n, b) => n + itemWriteUnits(0, b, true), 0)).toBe(6);
  });

  it('[RW] failed conditional writes: a 1 KB item 1 unit, a new item twice that 2 units, a missing item 1 unit', () => {
    expect(failedConditionUnits(1 * KB)).toBe(1);
    expect(failedConditionUnits(1 * KB, 2 * KB)).toBe(2);
    expect(failedConditionUnits(null, 5 * KB)).toBe(1);
  });

  it('[TX] a ConditionCheck is one of the transaction items written twice (2 per started KB); a cancelled transaction pays the prepare once', () => {
    expect(conditionCheckUnits(700)).toBe(2);
    expect(conditionCheckUnits(1.5 * KB)).toBe(4);
    expect(
      cancelledTransactionUnits([
        { beforeBytes: 600, afterBytes: 1.2 * KB },
        { beforeBytes: 0, afterBytes: 100 },
      ]),
    ).toBe(3);
  });
});

describe('item sizes, by the [SIZES] rules', () => {
  it('strings: UTF-8 bytes of the name and the value', () => {
    expect(itemSize({ name: { S: 'abc' } })).toBe(4 + 3);
    expect(itemSize({ né: { S: 'é€' } })).toBe(3 + 5);
  });

  it('numbers: 1 byte per two significant digits + 1, leading and trailing zeroes trimmed', () => {
    expect(numberSize('1')).toBe(2);
    expect(numberSize('12')).toBe(2);
    expect(numberSize('123')).toBe(3);
    expect(numberSize('1000000')).toBe(2);
    expect(numberSize('0.001500')).toBe(2);
    expect(numberSize('-1234.5678')).toBe(5);
    expect(numberSize('0')).toBe(2);
  });

  it('binary: the raw bytes, not the base64 text', () => {
    expect(valueSize({ B: Buffer.from('hello world').toString('base64') })).toBe(11);
  });

  it('null and boolean: 1 byte', () => {
    expect(itemSize({ a: { NULL: true }, b: { BOOL: false } })).toBe(1 + 1 + 1 + 1);
  });

  it('lists and maps: 3 bytes + 1 per element + the elements (a map element with its key)', () => {
    expect(valueSize({ L: [] })).toBe(3);
    expect(valueSize({ M: {} })).toBe(3);
    expect(valueSize({ L: [{ S: 'ab' }, { N: '7' }] })).toBe(3 + (1 + 2) + (1 + 2));
    expect(valueSize({ M: { k: { S: 'v' } } })).toBe(3 + 1 + 1 + 1);
    expect(itemSize({ inv: { M: { VCPU: { M: { total: { N: '32' } } } } } })).toBe(3 + (3 + 1 + 4 + (3 + 1 + 5 + 2)));
  });

  it('sets: the elements, no overhead (the page names none)', () => {
    expect(valueSize({ SS: ['ab', 'c'] })).toBe(3);
    expect(valueSize({ NS: ['1', '22'] })).toBe(4);
  });
});

describe('global secondary index writes, by the [GSI] rules', () => {
  const table: TableSchema = {
    name: 't',
    pk: 'pk',
    sk: 'sk',
    indexes: [
      { name: 'all', pk: 'g1', sk: 'g1s', projection: 'ALL' },
      { name: 'keys', pk: 'g2', projection: 'KEYS_ONLY' },
      { name: 'inc', pk: 'g3', projection: 'INCLUDE', include: ['a'] },
    ],
  };
  const base: WireItem = { pk: { S: 'p' }, sk: { S: 's' }, g1: { S: 'A' }, g1s: { S: 'x' }, a: { N: '1' }, b: { S: 'b' } };

  it('a new item that defines the indexed attributes: one put into the index', () => {
    const w = indexWrites(table, null, base);
    expect(w).toEqual([expect.objectContaining({ index: 'all', kind: 'put', pk: 'A', sk: 'x', units: 1 })]);
  });

  it('an update that changes an index key (A to B): a delete of the old entry and a put of the new', () => {
    const w = indexWrites(table, base, { ...base, g1: { S: 'B' } });
    expect(w.map((x) => `${x.kind}:${x.pk}`)).toEqual(['delete:A', 'put:B']);
  });

  it('an update that removes the indexed attribute: one delete; an item in neither image: nothing', () => {
    const { g1: _g1, ...without } = base;
    expect(indexWrites(table, base, without).map((x) => x.kind)).toEqual(['delete']);
    expect(indexWrites(table, without, { ...without, b: { S: 'c' } })).toEqual([]);
  });

  it('projected attributes changed, keys not: one update; nothing projected changed: no index write', () => {
    const item = { ...base, g2: { S: 'K' }, g3: { S: 'I' } };
    // b is projected only into ALL
    expect(indexWrites(table, item, { ...item, b: { S: 'other' } }).map((x) => `${x.index}:${x.kind}`)).toEqual(['all:update']);
    // a is projected into ALL and INCLUDE, not KEYS_ONLY
    expect(indexWrites(table, item, { ...item, a: { N: '2' } }).map((x) => `${x.index}:${x.kind}`)).toEqual(['all:update', 'inc:update']);
    expect(indexWrites(table, item, item)).toEqual([]);
  });

  it('larger index entries take more units; KEYS_ONLY and INCLUDE entries hold only keys and named attributes', () => {
    const big = { ...base, b: { S: 'x'.repeat(3000) }, g2: { S: 'K' } };
    const w = indexWrites(table, null, big);
    expect(w.find((x) => x.index === 'all')!.units).toBe(3);
    expect(w.find((x) => x.index === 'keys')!.units).toBe(1);
    expect(Object.keys(indexEntry(table, table.indexes[1]!, big)!).sort()).toEqual(['g2', 'pk', 'sk']);
    expect(Object.keys(indexEntry(table, table.indexes[2]!, { ...big, g3: { S: 'I' } })!).sort()).toEqual(['a', 'g3', 'pk', 'sk']);
  });
});
