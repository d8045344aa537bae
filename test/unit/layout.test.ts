/**
 * The layout rules (functions/core/layout.ts) and the pure parts of the layout-1
 * converter (functions/store/layout/v1.ts): which tables a release serves, and how a
 * layout-1 item becomes layout 2's.
 */
import { describe, expect, it } from 'vitest';
import { LAYOUT, MIGRATES_FROM, unrecordedState, verdict } from '../../functions/core/layout.js';

describe('which tables a release serves', () => {
  const release = { layout: 2, migratesFrom: 1 };

  it('serves its own layout, complete, and a migration to it', () => {
    expect(verdict({ version: 2, phase: 'complete' }, release)).toEqual({ serve: true, migrating: false });
    expect(verdict({ version: 1, phase: 'migrating', target: 2 }, release)).toEqual({ serve: true, migrating: true });
  });

  it('waits, with a retry, while the previous release may still serve the table or its catalog moves', () => {
    for (const phase of ['waiting', 'preparing'] as const) {
      const v = verdict({ version: 1, phase, target: 2 }, release);
      expect(v.serve).toBe(false);
      if (v.serve) continue;
      expect(v.permanent).toBe(false);
      expect(v.retryAfterS).toBeGreaterThan(0);
      expect(v.message).toMatch(/layout 1/);
    }
    // a whole older layout nobody opened the migration of yet
    expect(verdict({ version: 1, phase: 'complete' }, release)).toMatchObject({ serve: false, permanent: false });
  });

  it('refuses for good a layout newer than it writes, or one migrating to a layout it does not write', () => {
    for (const s of [
      { version: 3, phase: 'complete' as const },
      { version: 2, phase: 'migrating' as const, target: 3 },
      { version: 2, phase: 'waiting' as const, target: 3 },
    ]) {
      const v = verdict(s, release);
      expect(v).toMatchObject({ serve: false, permanent: true });
      if (!v.serve) expect(v.message).toMatch(/newer Berth release|does not write/);
      if (!v.serve) expect(v.retryAfterS).toBeUndefined();
    }
  });

  it('refuses for good a layout older than it can migrate', () => {
    const v = verdict({ version: 0, phase: 'complete' }, release);
    expect(v).toMatchObject({ serve: false, permanent: true });
    if (!v.serve) expect(v.message).toMatch(/older than this release can migrate/);
  });

  it('this release writes layout 2 and migrates layout 1', () => {
    expect([LAYOUT, MIGRATES_FROM]).toEqual([2, 1]);
    expect(unrecordedState(true)).toEqual({ version: 1, phase: 'waiting', target: 2 });
    expect(unrecordedState(false)).toEqual({ version: 2, phase: 'complete' });
  });
});

describe('layout-1 items (store/layout/v1.ts)', async () => {
  process.env.TABLE_NAME = 't';
  const { isV1Provider, isV1Row, isV1Usage, unabsorbed, usageMoveActions, conversionActions } = await import('../../functions/store/layout/v1.js');
  const def = {
    pk: 'RP#a',
    sk: 'RP',
    uuid: 'a',
    name: 'n',
    root: 'a',
    gen: 7,
    inv: { VCPU: { total: 8 } },
    invVer: 2,
    used: { VCPU: 3 },
    allocs: 2,
    traits: [],
    aggs: [],
    children: 0,
    created: '2026-01-01T00:00:00.000Z',
    updated: '2026-01-02T00:00:00.000Z',
    seq: 1,
  };

  it('tells layout-1 items from layout 2', () => {
    expect(isV1Provider(def)).toBe(true);
    const { gen: _g, inv: _i, invVer: _v, used: _u, allocs: _a, ...v2 } = def;
    expect(isV1Provider(v2)).toBe(false);
    expect(isV1Usage({ pk: 'USAGE#p', sk: 'U#u#0', kind: 'USAGE' })).toBe(true);
    expect(isV1Usage({ pk: 'USAGE#p#0', sk: 'U#u' })).toBe(false);
    expect(isV1Row({ pk: 'RP#a', sk: 'ALLOC#c', gsi1pk: 'CONSALLOC#c' })).toBe(true);
    expect(isV1Row({ pk: 'RP#a', sk: 'ALLOC#c', gsi1pk: 'CONSALLOC#c', legacy: true })).toBe(false);
    expect(isV1Row({ pk: 'RP#a', sk: 'ALLOC#c' })).toBe(false);
  });

  it('converts a provider into its state item and a stripped definition, logged in the same transaction', () => {
    const [put, strip, log] = conversionActions([def]) as any[];
    expect(put.Put.Item).toMatchObject({ pk: 'RP#a', sk: 'RPU', gen: 7, inv: { VCPU: { total: 8 } }, invVer: 2, used: { VCPU: 3 }, allocs: 2 });
    expect(put.Put.ConditionExpression).toMatch(/attribute_not_exists/);
    expect(strip.Update.Key).toEqual({ pk: 'RP#a', sk: 'RP' });
    expect(strip.Update.UpdateExpression).toMatch(/^REMOVE /);
    expect(Object.values(strip.Update.ExpressionAttributeNames).sort()).toEqual(['allocs', 'gen', 'inv', 'invVer', 'used']);
    expect(log.Put.Item.pk).toMatch(/^LOG#/);
    expect(log.Put.Item.rps).toEqual(['a']);
    // the state item's `last` is the log entry's sort key
    expect(put.Put.Item.last).toBe(log.Put.Item.sk);
  });

  it('moves a user usage item into its layout-2 item, recording it there; a project item only goes', () => {
    const user = { pk: 'USAGE#p', sk: 'U#u#0', kind: 'USAGE', project: 'p', user: 'u', 'n:': 2, 'r::VCPU': 4, 'r::DISK_GB': 0 };
    const [del, add] = usageMoveActions(user) as any[];
    expect(del.Delete.Key).toEqual({ pk: 'USAGE#p', sk: 'U#u#0' });
    expect(add.Update.Key).toEqual({ pk: 'USAGE#p#0', sk: 'U#u' });
    const values = Object.values(add.Update.ExpressionAttributeValues);
    expect(values).toContainEqual(new Set(['U#u#0']));
    expect(values).toContain(2);
    expect(values).toContain(4);
    expect(usageMoveActions({ pk: 'USAGE#p', sk: 'P#0', kind: 'USAGE', project: 'p', 'n:': 2 })).toHaveLength(1);
  });

  it('counts a usage item read before it moved once: not again once a later read finds it absorbed', () => {
    const a = { pk: 'USAGE#p', sk: 'U#u#0', user: 'u' };
    const b = { pk: 'USAGE#p', sk: 'U#v#0', user: 'v' };
    expect(unabsorbed([a, b], [{ pk: 'USAGE#p#0', sk: 'U#u', absorbed: new Set(['U#u#0']) }])).toEqual([b]);
    expect(unabsorbed([a, b], [])).toEqual([a, b]);
    // project items never count (they are sums of the users')
    expect(unabsorbed([{ pk: 'USAGE#p', sk: 'P#0' }], [])).toEqual([]);
  });
});
