/**
 * The expression builder of store writes (functions/store/ddb/expr.ts): placeholders,
 * clauses and conditions as DynamoDB reads them. (Whether DynamoDB evaluates them as
 * meant is for the store's integration tests.)
 */
import { describe, expect, it } from 'vitest';
import { Expr, newItem } from '../../../functions/store/ddb/expr.js';
import { tableName } from '../../../functions/store/ddb/client.js';

describe('Expr', () => {
  it('names a plain attribute after itself and any other by its position; a value once per v()', () => {
    const e = new Expr();
    expect(e.n('ver')).toBe('#ver');
    expect(e.n(['used', 'n:INSTANCE'])).toBe('#used.#n2');
    expect(e.n('ver')).toBe('#ver');
    expect([e.v(1), e.v(1)]).toEqual([':v0', ':v1']);
    expect(e.names).toEqual({ '#ver': 'ver', '#used': 'used', '#n2': 'n:INSTANCE' });
    expect(e.values).toEqual({ ':v0': 1, ':v1': 1 });
  });

  it('orders the clauses SET, ADD, REMOVE, DELETE whatever order they came in', () => {
    const e = new Expr()
      .remove('a')
      .add('gen', 1)
      .set('b', 2)
      .delete('m', new Set(['x']));
    expect(e.updateExpression).toBe('SET #b = :v1 ADD #gen :v0 REMOVE #a DELETE #m :v2');
    expect(new Expr().hasUpdates).toBe(false);
  });

  it('increment: SET path = path + by (1 unless told)', () => {
    const e = new Expr().increment('ver').increment(['used', 'VCPU'], 3);
    expect(e.updateExpression).toBe('SET #ver = #ver + :v0, #used.#VCPU = #used.#VCPU + :v1');
    expect(e.values).toEqual({ ':v0': 1, ':v1': 3 });
  });

  it('ifNotExists: the operand that reads a missing attribute as the fallback', () => {
    const e = new Expr();
    e.setTo('resumes', `${e.ifNotExists('resumes', 0)} + ${e.v(1)}`);
    expect(e.updateExpression).toBe('SET #resumes = if_not_exists(#resumes, :v0) + :v1');
    expect(e.values).toEqual({ ':v0': 0, ':v1': 1 });
  });

  it('conditions: lt, contains and or beside eq, exists, absent and atMost; when() ANDs them', () => {
    const e = new Expr();
    e.when(e.exists('pk'))
      .when(e.lt('takenAt', 5))
      .when(e.contains('traits', 'CUSTOM_A'))
      .when(e.or(e.eq('owner', 'p'), e.eq('lessee', 'p')))
      .when(e.or(e.absent('pk'), e.atMost('n', 2)));
    const put = e.putItem({ pk: 'P', sk: 'S' }).Put!;
    expect(put.ConditionExpression).toBe(
      'attribute_exists(#pk) AND #takenAt < :v0 AND contains(#traits, :v1) AND (#owner = :v2 OR #lessee = :v3) AND (attribute_not_exists(#pk) OR (attribute_not_exists(#n) OR #n <= :v4))',
    );
    expect(put.ExpressionAttributeValues).toEqual({ ':v0': 5, ':v1': 'CUSTOM_A', ':v2': 'p', ':v3': 'p', ':v4': 2 });
  });

  it('a lone parenthesised condition goes without its parentheses (tx.ts adds its own; DynamoDB refuses redundant ones)', () => {
    const key = { pk: 'P', sk: 'S' };
    const cond = (build: (e: Expr) => void) => {
      const e = new Expr();
      build(e);
      return e.deleteItem(key).Delete!.ConditionExpression;
    };
    expect(cond((e) => e.when(e.or(e.absent('pk'), e.eq('node', 'n'))))).toBe('attribute_not_exists(#pk) OR #node = :v0');
    expect(cond((e) => e.when(e.atMost('refs', 0)))).toBe('attribute_not_exists(#refs) OR #refs <= :v0');
    expect(cond((e) => e.when(`(${e.eq('a', 1)}) OR (${e.eq('b', 2)})`))).toBe('(#a = :v0) OR (#b = :v1)');
    expect(cond((e) => e.when(e.exists('pk')).when(e.or(e.eq('a', 1), e.eq('b', 2))))).toBe('attribute_exists(#pk) AND (#a = :v0 OR #b = :v1)');
  });

  it('the actions carry only the parts they have, and the old item on failure when asked', () => {
    const key = { pk: 'P', sk: 'S' };
    expect(new Expr().deleteItem(key)).toEqual({ Delete: { TableName: tableName(), Key: key } });
    const e = new Expr().returningOldOnFailure();
    expect(e.when(e.eq('uuid', 'u')).checkItem(key)).toEqual({
      ConditionCheck: {
        TableName: tableName(),
        Key: key,
        ConditionExpression: '#uuid = :v0',
        ExpressionAttributeNames: { '#uuid': 'uuid' },
        ExpressionAttributeValues: { ':v0': 'u' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
    expect(newItem({ ...key, a: 1 })).toEqual({
      Put: {
        TableName: tableName(),
        Item: { ...key, a: 1 },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': 'pk' },
      },
    });
  });

  it('updateInput and putInput: the same write as one UpdateItem / PutItem call', () => {
    const key = { pk: 'P', sk: 'S' };
    const u = new Expr().set('pending', false);
    expect(u.when(u.eq('epoch', 3)).updateInput(key)).toEqual(u.updateItem(key).Update);
    const p = new Expr();
    p.when(p.or(p.absent('pk'), p.lt('takenAt', 7)));
    expect(p.putInput({ ...key, takenAt: 7 })).toEqual({
      TableName: tableName(),
      Item: { ...key, takenAt: 7 },
      ConditionExpression: 'attribute_not_exists(#pk) OR #takenAt < :v0',
      ExpressionAttributeNames: { '#pk': 'pk', '#takenAt': 'takenAt' },
      ExpressionAttributeValues: { ':v0': 7 },
    });
  });
});
