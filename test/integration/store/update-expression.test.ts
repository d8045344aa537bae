/**
 * Readers of an item a committed large change has locked but not yet written compute what
 * the change leaves it as (functions/store/ddb/update-expression.ts): it must be exactly
 * what DynamoDB makes of the same update. Every form of update expression the store
 * writes, against DynamoDB Local.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTable } from '../harness.js';

let client: typeof import('../../../functions/store/ddb/client.js');
let reads: typeof import('../../../functions/store/ddb/reads.js');
let ux: typeof import('../../../functions/store/ddb/update-expression.js');

beforeAll(async () => {
  await useTable();
  client = await import('../../../functions/store/ddb/client.js');
  reads = await import('../../../functions/store/ddb/reads.js');
  ux = await import('../../../functions/store/ddb/update-expression.js');
});

interface Case {
  name: string;
  before?: Record<string, unknown>;
  UpdateExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: 'a claim on a provider state (a class new to `used`, one already there)',
    before: { gen: 3, allocs: 1, used: { VCPU: 2 }, inv: { VCPU: { total: 8 } }, last: 'a', updated: 'x' },
    UpdateExpression:
      'SET #updated = :now, #last = :sk, #used.#c0 = if_not_exists(#used.#c0, :zero) + :d0, #used.#c1 = if_not_exists(#used.#c1, :zero) + :d1 ADD #gen :gd, #allocs :ad',
    ExpressionAttributeNames: {
      '#updated': 'updated',
      '#last': 'last',
      '#used': 'used',
      '#c0': 'VCPU',
      '#c1': 'MEMORY_MB',
      '#gen': 'gen',
      '#allocs': 'allocs',
    },
    ExpressionAttributeValues: { ':now': 'y', ':sk': 'b', ':zero': 0, ':d0': -2, ':d1': 512, ':gd': 1, ':ad': -1 },
  },
  {
    name: 'an inventory write',
    before: { gen: 3, invVer: 1, inv: { VCPU: { total: 8 } }, used: {}, last: 'a' },
    UpdateExpression: 'SET #last = :sk, #s_inv = :s_inv, #updated = :now ADD #gen :one, #invVer :one',
    ExpressionAttributeNames: { '#last': 'last', '#s_inv': 'inv', '#updated': 'updated', '#gen': 'gen', '#invVer': 'invVer' },
    ExpressionAttributeValues: { ':sk': 'b', ':s_inv': { DISK_GB: { total: 10, reserved: 0 } }, ':now': 'z', ':one': 1 },
  },
  {
    name: 'a usage item created by its first claim',
    UpdateExpression: 'SET #project = :project, #user = :user ADD #a0 :a0, #a1 :a1',
    ExpressionAttributeNames: { '#project': 'project', '#user': 'user', '#a0': 'n:INSTANCE', '#a1': 'r:INSTANCE:VCPU' },
    ExpressionAttributeValues: { ':project': 'p', ':user': 'u', ':a0': 1, ':a1': 4 },
  },
  {
    name: 'a reference count going down',
    before: { refs: 3, created: 'c' },
    UpdateExpression: 'ADD #refs :d',
    ExpressionAttributeNames: { '#refs': 'refs' },
    ExpressionAttributeValues: { ':d': -1 },
  },
  {
    name: 'tree members added to a tree item not there yet',
    UpdateExpression: 'ADD #m :s',
    ExpressionAttributeNames: { '#m': 'members' },
    ExpressionAttributeValues: { ':s': new Set(['a', 'b']) },
  },
  {
    name: 'tree members added and removed',
    before: { members: new Set(['a', 'b', 'c']) },
    UpdateExpression: 'DELETE #m :s',
    ExpressionAttributeNames: { '#m': 'members' },
    ExpressionAttributeValues: { ':s': new Set(['a', 'c', 'z']) },
  },
  {
    name: 'the last tree member removed',
    before: { members: new Set(['a']), other: 1 },
    UpdateExpression: 'DELETE #m :s',
    ExpressionAttributeNames: { '#m': 'members' },
    ExpressionAttributeValues: { ':s': new Set(['a']) },
  },
  {
    name: 'a provider made a root (renamed, parent removed)',
    before: { name: 'a', parent: 'p', root: 'r', updated: 'x', children: 2 },
    UpdateExpression: 'SET #name = :name, #root = :root, #updated = :upd REMOVE #parent',
    ExpressionAttributeNames: { '#name': 'name', '#root': 'root', '#updated': 'updated', '#parent': 'parent' },
    ExpressionAttributeValues: { ':name': 'b', ':root': 's', ':upd': 'y' },
  },
  {
    name: 'a legacy row given its consumer',
    before: { cgen: 5, legacy: true, legacyRps: ['x'], gsi2pk: 'L#1', gsi2sk: 'c#x', resources: { VCPU: 1 } },
    UpdateExpression: 'SET #cgen = :zero REMOVE #legacy, #rps, #g2pk, #g2sk',
    ExpressionAttributeNames: { '#cgen': 'cgen', '#legacy': 'legacy', '#rps': 'legacyRps', '#g2pk': 'gsi2pk', '#g2sk': 'gsi2sk' },
    ExpressionAttributeValues: { ':zero': 0 },
  },
  {
    name: 'a child count and arithmetic on paths',
    before: { children: 4, a: 10, b: 3 },
    UpdateExpression: 'SET #a = #a - #b, #c = if_not_exists(#c, :ten) + :one ADD #children :m',
    ExpressionAttributeNames: { '#a': 'a', '#b': 'b', '#c': 'c', '#children': 'children' },
    ExpressionAttributeValues: { ':ten': 10, ':one': 1, ':m': -1 },
  },
];

describe('update expressions, computed as DynamoDB applies them', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const key = { pk: `UX#${randomUUID()}`, sk: 'UX' };
      if (c.before) await reads.ddb().send(new PutCommand({ TableName: client.tableName(), Item: { ...key, ...c.before } }));
      const action = {
        Key: key,
        UpdateExpression: c.UpdateExpression,
        ExpressionAttributeNames: c.ExpressionAttributeNames,
        ExpressionAttributeValues: c.ExpressionAttributeValues,
      };
      const computed = ux.updatedItem(c.before ? { ...key, ...c.before } : undefined, action);
      await reads.ddb().send(new UpdateCommand({ TableName: client.tableName(), ...action }));
      const stored = (await reads.ddb().send(new GetCommand({ TableName: client.tableName(), Key: key, ConsistentRead: true }))).Item;
      expect(computed).toEqual(stored);
    });
  }

  it('refuses what it does not know rather than guess', () => {
    expect(() =>
      ux.updatedItem(undefined, {
        Key: { pk: 'a', sk: 'b' },
        UpdateExpression: 'SET #l = list_append(#l, :v)',
        ExpressionAttributeNames: { '#l': 'l' },
        ExpressionAttributeValues: { ':v': [1] },
      }),
    ).toThrow(ux.UnsupportedExpression);
  });
});
